// Reading the Prometheus text exposition format in tests: one sample per line,
// `name{label="value",...} number`.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace etwire::telemetry::testing {

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

std::vector<Sample> parse_exposition(const std::string& text);

// The value of the one sample named `name` whose labels include `labels`; nullopt when there is
// none, and a test failure when there are several.
std::optional<double> sample_value(const std::vector<Sample>& samples, const std::string& name,
                                   const std::map<std::string, std::string>& labels = {});

// Every sample named `name` whose labels include `labels`.
std::vector<Sample> samples_named(const std::vector<Sample>& samples, const std::string& name,
                                  const std::map<std::string, std::string>& labels = {});

}  // namespace etwire::telemetry::testing
