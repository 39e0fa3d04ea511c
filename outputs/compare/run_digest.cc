#include "outputs/compare/run_digest.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "common/bounded_file.h"
#include "dataplane/port_counters.h"
#include "outputs/results_files.h"
#include "outputs/summary_json.h"

namespace etwire::outputs {

namespace {

using Json = nlohmann::json;

constexpr double kNanosPerMicro = 1e3;
constexpr double kNanosPerMilli = 1e6;

// A number, or nullopt for null, a missing key or anything else: summary.json writes values that
// are not numbers (NaN) as null.
std::optional<double> number_at(const Json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

double number_or_zero(const Json& object, const char* key) {
  return number_at(object, key).value_or(0);
}

std::string text_at(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const Json& array_at(const Json& object, const char* key) {
  static const Json kEmpty = Json::array();
  const auto it = object.find(key);
  return it != object.end() && it->is_array() ? *it : kEmpty;
}

bool measured(const Json& entry) {
  const auto it = entry.find("warmup");
  return it == entry.end() || !it->is_boolean() || !it->get<bool>();
}

// Nearest rank (see engine/fct_percentiles.h): the sample of rank ceil(N/2) in ascending order.
double median_nearest_rank(std::vector<double> samples) {
  if (samples.empty()) return 0;
  const size_t rank = (samples.size() + 1) / 2;
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(rank - 1),
                   samples.end());
  return samples[rank - 1];
}

std::optional<double> mean_of(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

void digest_collectives(const Json& doc, RunDigest& digest) {
  struct Samples {
    std::vector<double> cct_us, busbw, ideal;
  };
  std::map<std::string, Samples> by_type;
  for (const Json& c : array_at(doc, "collectives")) {
    if (!c.is_object() || !measured(c)) continue;
    Samples& s = by_type[text_at(c, "type")];
    s.cct_us.push_back(number_or_zero(c, "cct_ns") / kNanosPerMicro);
    if (auto busbw = number_at(c, "busbw_GBps")) s.busbw.push_back(*busbw);
    if (auto ideal = number_at(c, "ideal_percent")) s.ideal.push_back(*ideal);
  }
  for (auto& [type, s] : by_type) {
    CollectiveTypeDigest& d = digest.collectives[type];
    d.instances = s.cct_us.size();
    d.cct_mean_us = mean_of(s.cct_us).value_or(0);
    d.cct_p50_us = median_nearest_rank(std::move(s.cct_us));
    d.busbw_GBps = mean_of(s.busbw);
    d.ideal_percent = mean_of(s.ideal);
  }
}

void digest_fct(const Json& doc, RunDigest& digest) {
  for (const Json& f : array_at(doc, "fct")) {
    if (!f.is_object()) continue;
    FctDigest& d = digest.fct[text_at(f, "type")];
    d.flows = static_cast<uint64_t>(number_or_zero(f, "flows"));
    d.p50_us = number_or_zero(f, "p50_ns") / kNanosPerMicro;
    d.p99_us = number_or_zero(f, "p99_ns") / kNanosPerMicro;
    d.max_us = number_or_zero(f, "max_ns") / kNanosPerMicro;
  }
}

void digest_iterations(const Json& doc, RunDigest& digest) {
  for (const Json& it : array_at(doc, "iterations")) {
    if (!it.is_object() || !measured(it)) continue;
    digest.jct_ms.push_back(
        {{text_at(it, "job"), static_cast<int64_t>(number_or_zero(it, "iteration"))},
         number_or_zero(it, "jct_ns") / kNanosPerMilli});
  }
}

void digest_congestion(const Json& doc, RunDigest& digest) {
  for (const dataplane::PortCounterField& field : dataplane::kPortCounterFields) {
    if (field.congestion_column.empty()) continue;
    const std::string name(field.name);
    std::optional<uint64_t> total;
    for (const Json& port : array_at(doc, "ports")) {
      // null: the port's device does not count it.
      if (auto value = number_at(port, name.c_str())) {
        total = total.value_or(0) + static_cast<uint64_t>(*value);
      }
    }
    digest.congestion.emplace_back(name, total);
  }
}

}  // namespace

RunDigest digest_summary_json(const std::string& text, const std::string& source) {
  Json doc;
  try {
    doc = parse_summary_json(text);
  } catch (const SummaryJsonError& e) {
    throw CompareInputError(fmt::format("{}: {}", source, e.what()));
  }
  if (!doc.is_object() || !doc.contains("run") || !doc.contains("collectives")) {
    throw CompareInputError(fmt::format(
        "{}: not a summary.json of etwire run (no \"run\" or \"collectives\")", source));
  }
  RunDigest digest;
  const Json& run = doc["run"];
  digest.run_name = text_at(run, "name");
  digest.config_digest = text_at(run, "config_digest");
  digest.topology = text_at(run, "topology");
  digest.world_size = static_cast<uint64_t>(number_or_zero(run, "world_size"));
  digest.status = text_at(doc, "status");
  digest_collectives(doc, digest);
  digest_fct(doc, digest);
  digest_iterations(doc, digest);
  digest_congestion(doc, digest);
  return digest;
}

RunDigest read_run_digest(const std::filesystem::path& dir) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(dir, error);
  if (error && status.type() != std::filesystem::file_type::not_found) {
    throw CompareInputError(fmt::format("{}: not readable: {}", dir.string(), error.message()));
  }
  if (status.type() != std::filesystem::file_type::directory) {
    throw CompareInputError(fmt::format("{}: {}", dir.string(),
                                        status.type() == std::filesystem::file_type::not_found
                                            ? "no such results directory"
                                            : "not a directory"));
  }
  const std::filesystem::path path = dir / "summary.json";
  std::string text;
  try {
    text = read_bounded_file(path.string(), kMaxSummaryJsonBytes, "a summary.json");
  } catch (const InputFileError& e) {
    if (e.reason() == InputFileError::Reason::kOpen) {
      throw CompareInputError(fmt::format(
          "{}: {} (a results directory of `etwire run` has one)", path.string(),
          e.error_number() == ENOENT ? "no such file" : std::strerror(e.error_number())));
    }
    throw CompareInputError(fmt::format("{}: {}", path.string(), e.what()));
  }
  RunDigest digest = digest_summary_json(text, path.string());
  digest.dir = dir;
  return digest;
}

}  // namespace etwire::outputs
