#include "outputs/compare/run_digest.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "common/bounded_file.h"
#include "common/units.h"
#include "dataplane/port_counters.h"
#include "engine/run_results.h"
#include "outputs/results_files.h"
#include "outputs/summary_json.h"

namespace etwire::outputs {

namespace {

// One JSON object of the file, and where it is ("collectives[3]"), so that a value of the wrong
// type, a negative count or a missing key is refused naming the file and the path, as `etwire
// report` refuses it; before, compare read such a value as 0 or "" and went on.
class Located {
 public:
  Located(const std::string& source, std::string where, const nlohmann::json& object)
      : source_(source), where_(std::move(where)), object_(object) {
    if (!object_.is_object()) fail("", "expected an object");
  }

  // A number not below 0; nullopt for null (summary.json writes NaN as null) or, unless
  // `required`, a missing key.
  std::optional<double> number(const char* key, bool required = false) const {
    const nlohmann::json* value = find(key, required);
    if (value == nullptr || value->is_null()) return std::nullopt;
    if (!value->is_number() || value->get<double>() < 0 || value->get<double>() > kMaxCount) {
      fail(key, fmt::format("expected a number from 0 to 2^64, not {}", json_excerpt(*value)));
    }
    return value->get<double>();
  }
  double number_or_zero(const char* key, bool required = false) const {
    return number(key, required).value_or(0);
  }
  std::string text(const char* key, bool required = false) const {
    const nlohmann::json* value = find(key, required);
    if (value == nullptr) return {};
    if (!value->is_string()) fail(key, fmt::format("expected text, not {}", json_excerpt(*value)));
    return value->get<std::string>();
  }
  bool flag(const char* key) const {
    const nlohmann::json* value = find(key, true);
    if (!value->is_boolean()) {
      fail(key, fmt::format("expected true or false, not {}", json_excerpt(*value)));
    }
    return value->get<bool>();
  }
  // The objects of the array at `key`, each Located at "key[i]".
  std::vector<Located> objects(const char* key, bool required = false) const {
    std::vector<Located> items;
    const nlohmann::json* value = find(key, required);
    if (value == nullptr || value->is_null()) return items;
    if (!value->is_array()) fail(key, fmt::format("expected a list, not {}", json_excerpt(*value)));
    for (size_t i = 0; i < value->size(); ++i) {
      items.emplace_back(source_, fmt::format("{}[{}]", path(key), i), (*value)[i]);
    }
    return items;
  }
  Located object(const char* key) const { return {source_, path(key), *find(key, true)}; }

  [[noreturn]] void fail(std::string_view key, std::string_view what) const {
    const std::string at = key.empty() ? where_ : path(key);
    throw CompareInputError(
        fmt::format("{}: {}: {}", source_, at.empty() ? "top level" : at, what));
  }

 private:
  static constexpr double kMaxCount = 18446744073709551615.0;

  std::string path(std::string_view key) const {
    return where_.empty() ? std::string(key) : fmt::format("{}.{}", where_, key);
  }
  const nlohmann::json* find(const char* key, bool required) const {
    const auto it = object_.find(key);
    if (it != object_.end()) return &*it;
    if (required) fail("", fmt::format("no \"{}\"", key));
    return nullptr;
  }

  const std::string& source_;
  std::string where_;
  const nlohmann::json& object_;
};

// Nearest rank (see engine/fct_percentiles.h): the sample of rank ceil(N/2) in ascending order.
double median_nearest_rank(std::vector<double> samples) {
  if (samples.empty()) return 0;
  const size_t rank = (samples.size() + 1) / 2;
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(rank - 1),
                   samples.end());
  return samples[rank - 1];
}

// The `type` of a collectives[] or fct[] entry, refused unless a collective has that label, as
// `etwire report` refuses it: compare would otherwise set a typo beside the real type.
std::string collective_type(const Located& entry) {
  std::string type = entry.text("type", true);
  if (!collective_kind_labelled(type)) {
    entry.fail("type",
               fmt::format("unknown collective type {}", json_excerpt(nlohmann::json(type))));
  }
  return type;
}

std::optional<double> mean_of(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

void digest_collectives(const Located& doc, RunDigest& digest) {
  struct Samples {
    std::vector<double> cct_us, busbw, ideal;
  };
  std::map<std::string, Samples> by_type;
  for (const Located& c : doc.objects("collectives", true)) {
    const std::string type = collective_type(c);
    const double cct_ns = c.number_or_zero("cct_ns", true);
    const auto busbw = c.number("busbw_GBps");
    const auto ideal = c.number("ideal_percent");
    if (c.flag("warmup")) continue;
    Samples& s = by_type[type];
    s.cct_us.push_back(cct_ns / kNsPerUs);
    if (busbw) s.busbw.push_back(*busbw);
    if (ideal) s.ideal.push_back(*ideal);
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

void digest_fct(const Located& doc, RunDigest& digest) {
  for (const Located& f : doc.objects("fct")) {
    FctDigest& d = digest.fct[collective_type(f)];
    d.flows = static_cast<uint64_t>(f.number_or_zero("flows", true));
    d.p50_us = f.number_or_zero("p50_ns") / kNsPerUs;
    d.p99_us = f.number_or_zero("p99_ns") / kNsPerUs;
    d.max_us = f.number_or_zero("max_ns") / kNsPerUs;
  }
}

void digest_iterations(const Located& doc, RunDigest& digest) {
  std::set<std::string> jobs;
  for (const Located& job : doc.objects("jobs", true)) jobs.insert(job.text("name", true));
  for (const Located& it : doc.objects("iterations", true)) {
    std::string job = it.text("job", true);
    // As `etwire report` reads it: an iteration names a job of the run.
    if (!jobs.contains(job))
      it.fail("job", fmt::format("job {} is not in jobs[]", json_excerpt(nlohmann::json(job))));
    const auto iteration = static_cast<int64_t>(it.number_or_zero("iteration", true));
    const double jct_ns = it.number_or_zero("jct_ns", true);
    if (it.flag("warmup")) continue;
    digest.jct_ms.push_back({{std::move(job), iteration}, jct_ns / kNsPerMs});
  }
}

void digest_congestion(const Located& doc, RunDigest& digest) {
  const std::vector<Located> ports = doc.objects("ports");
  for (const dataplane::PortCounterField& field : dataplane::kPortCounterFields) {
    if (field.congestion_column.empty()) continue;
    const std::string name(field.name);
    std::optional<uint64_t> total;
    for (const Located& port : ports) {
      // null: the port's device does not count it.
      if (auto value = port.number(name.c_str())) {
        total = total.value_or(0) + static_cast<uint64_t>(*value);
      }
    }
    digest.congestion.emplace_back(name, total);
  }
}

}  // namespace

RunDigest digest_summary_json(const std::string& text, const std::string& source) {
  nlohmann::json doc;
  try {
    doc = parse_summary_json(text);
  } catch (const SummaryJsonError& e) {
    throw CompareInputError(fmt::format("{}: {}", source, e.what()));
  }
  const Located top(source, "", doc);
  const Located run = top.object("run");
  RunDigest digest;
  digest.run_name = run.text("name");
  digest.config_digest = run.text("config_digest");
  digest.topology = run.text("topology");
  digest.world_size = static_cast<uint64_t>(run.number_or_zero("world_size"));
  digest.status = top.text("status", true);
  if (!engine::run_status_named(digest.status)) {
    top.fail("status",
             fmt::format("unknown status {}", json_excerpt(nlohmann::json(digest.status))));
  }
  digest_collectives(top, digest);
  digest_fct(top, digest);
  digest_iterations(top, digest);
  digest_congestion(top, digest);
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
