#include "tests/telemetry/exposition.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

namespace etwire::telemetry::testing {

std::vector<Sample> parse_exposition(const std::string& text) {
  std::vector<Sample> samples;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    Sample sample;
    size_t pos = line.find_first_of("{ ");
    sample.name = line.substr(0, pos);
    if (pos != std::string::npos && line[pos] == '{') {
      ++pos;
      while (pos < line.size() && line[pos] != '}') {
        const size_t eq = line.find('=', pos);
        const std::string key = line.substr(pos, eq - pos);
        std::string value;
        size_t i = eq + 2;  // past ="
        for (; i < line.size() && line[i] != '"'; ++i) {
          if (line[i] == '\\' && i + 1 < line.size()) ++i;
          value += line[i];
        }
        sample.labels[key] = value;
        pos = i + 1;
        if (pos < line.size() && line[pos] == ',') ++pos;
      }
      pos = line.find(' ', pos);
    }
    sample.value = std::strtod(line.c_str() + pos + 1, nullptr);
    samples.push_back(std::move(sample));
  }
  return samples;
}

std::vector<Sample> samples_named(const std::vector<Sample>& samples, const std::string& name,
                                  const std::map<std::string, std::string>& labels) {
  std::vector<Sample> found;
  for (const Sample& sample : samples) {
    if (sample.name != name) continue;
    bool match = true;
    for (const auto& [key, value] : labels) {
      auto it = sample.labels.find(key);
      if (it == sample.labels.end() || it->second != value) match = false;
    }
    if (match) found.push_back(sample);
  }
  return found;
}

std::optional<double> sample_value(const std::vector<Sample>& samples, const std::string& name,
                                   const std::map<std::string, std::string>& labels) {
  const auto found = samples_named(samples, name, labels);
  if (found.empty()) return std::nullopt;
  EXPECT_EQ(found.size(), 1u) << "several samples of " << name << " match";
  return found.front().value;
}

}  // namespace etwire::telemetry::testing
