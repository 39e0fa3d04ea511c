#include "outputs/report/summary_reader.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "common/bounded_file.h"
#include "outputs/report/report_input_error.h"
#include "outputs/results_files.h"

namespace etwire::outputs::report {

namespace {

using Json = nlohmann::json;

// Reads fields of one JSON object, naming the file and the object in every error.
class Fields {
 public:
  Fields(const std::string& path, std::string where, const Json& object)
      : path_(path), where_(std::move(where)), object_(object) {
    if (!object_.is_object()) fail("expected an object");
  }

  template <typename T>
  T get(const char* key) const {
    const auto found = object_.find(key);
    if (found == object_.end()) fail(fmt::format("no \"{}\"", key));
    try {
      return found->get<T>();
    } catch (const Json::exception&) {
      fail(fmt::format("\"{}\": unexpected value {}", key, found->dump()));
    }
  }

  template <typename T>
  T get_or(const char* key, T otherwise) const {
    const auto found = object_.find(key);
    if (found == object_.end() || found->is_null()) return otherwise;
    return get<T>(key);
  }

  const Json& array(const char* key) const {
    const auto found = object_.find(key);
    if (found == object_.end() || !found->is_array()) fail(fmt::format("no array \"{}\"", key));
    return *found;
  }

  const Json& object() const { return object_; }

  [[noreturn]] void fail(std::string_view what) const {
    throw ReportInputError(fmt::format("{}: {}: {}", path_, where_, what));
  }

 private:
  const std::string& path_;
  std::string where_;
  const Json& object_;
};

std::optional<engine::RunStatus> status_named(std::string_view name) {
  for (auto status :
       {engine::RunStatus::kCompleted, engine::RunStatus::kFlowsFailed, engine::RunStatus::kStuck,
        engine::RunStatus::kInterrupted, engine::RunStatus::kFailed}) {
    if (engine::run_status_name(status) == name) return status;
  }
  return std::nullopt;
}

// The inverse of collective_type_label; nullopt when no kind has that label.
std::optional<collectives::CollectiveKind> kind_labelled(std::string_view label) {
  if (label == collective_type_label(std::nullopt)) return collectives::CollectiveKind{};
  for (int k = 0; k < trace::kCollectiveTypeCount; ++k) {
    const collectives::CollectiveKind kind = static_cast<trace::CollectiveType>(k);
    if (collective_type_label(kind) == label) return kind;
  }
  return std::nullopt;
}

collectives::CollectiveKind kind_of(const Fields& fields) {
  const auto label = fields.get<std::string>("type");
  const auto kind = kind_labelled(label);
  if (!kind) fields.fail(fmt::format("unknown collective type \"{}\"", label));
  return *kind;
}

uint32_t job_index(const engine::RunResults& results, const Fields& fields) {
  const auto name = fields.get<std::string>("job");
  for (size_t j = 0; j < results.jobs.size(); ++j) {
    if (results.jobs[j].name == name) return static_cast<uint32_t>(j);
  }
  fields.fail(fmt::format("job \"{}\" is not in jobs[]", name));
}

int64_t group_of(const Fields& fields) {
  const Json& group = fields.object().at("group");
  if (group.is_number_integer()) return group.get<int64_t>();
  if (group == "all") return -1;
  if (group == "p2p") return engine::kPointToPointGroup;
  fields.fail(fmt::format("\"group\": unexpected value {}", group.dump()));
}

void read_collectives(const std::string& path, const Fields& doc, engine::RunResults& results) {
  const Json& array = doc.array("collectives");
  for (size_t i = 0; i < array.size(); ++i) {
    const Fields c(path, fmt::format("collectives[{}]", i), array[i]);
    engine::CollectiveRecord r;
    r.instance = c.get<uint64_t>("instance");
    r.job = job_index(results, c);
    r.kind = kind_of(c);
    if (c.object().contains("group")) r.group = group_of(c);
    r.sequence = c.get_or<uint64_t>("sequence", 0);
    r.tag = c.get_or<int32_t>("tag", 0);
    r.group_size = c.get<uint32_t>("group_size");
    r.trace_bytes = c.get<uint64_t>("trace_bytes");
    r.algbw_bytes = c.get<uint64_t>("algbw_bytes");
    r.wire_bytes = c.get_or<uint64_t>("wire_bytes", 0);
    r.iteration = c.get<uint32_t>("iteration");
    r.warmup = c.get<bool>("warmup");
    r.first_arrival = c.get<int64_t>("first_arrival_ns");
    r.last_arrival = c.get<int64_t>("last_arrival_ns");
    r.end = c.get<int64_t>("end_ns");
    r.flows = c.get_or<uint64_t>("flows", 0);
    r.failed_flows = c.get_or<uint64_t>("failed_flows", 0);
    results.collectives.push_back(r);
  }
}

void read_iterations(const std::string& path, const Fields& doc, engine::RunResults& results) {
  const Json& array = doc.array("iterations");
  for (size_t i = 0; i < array.size(); ++i) {
    const Fields it(path, fmt::format("iterations[{}]", i), array[i]);
    engine::IterationRecord r;
    r.job = job_index(results, it);
    r.iteration = it.get<uint32_t>("iteration");
    r.warmup = it.get<bool>("warmup");
    r.start = it.get<int64_t>("start_ns");
    r.end = it.get<int64_t>("end_ns");
    results.iterations.push_back(std::move(r));
  }
}

void read_ports(const std::string& path, const Fields& doc, engine::RunResults& results) {
  const Json& array = doc.array("ports");
  for (size_t i = 0; i < array.size(); ++i) {
    const Fields p(path, fmt::format("ports[{}]", i), array[i]);
    engine::PortRecord r;
    r.name = p.get<std::string>("name");
    r.speed_bps = p.get_or<uint64_t>("speed_bps", 0);
    r.host = p.get_or<std::string>("host", "");
    for (size_t f = 0; f < dataplane::kPortCounterFields.size(); ++f) {
      const auto& field = dataplane::kPortCounterFields[f];
      const std::string key(field.name);
      const auto found = p.object().find(key);
      // null: the port's device does not count it.
      if (found == p.object().end() || found->is_null()) {
        r.absent |= dataplane::port_counter_bit(f);
      } else {
        r.*field.member = p.get<uint64_t>(key.c_str());
      }
    }
    results.ports.push_back(std::move(r));
  }
}

void read_fct(const std::string& path, const Fields& doc, engine::RunResults& results) {
  const Json& array = doc.array("fct");
  for (size_t i = 0; i < array.size(); ++i) {
    const Fields f(path, fmt::format("fct[{}]", i), array[i]);
    engine::FctPercentiles r;
    r.kind = kind_of(f);
    r.flows = f.get<uint64_t>("flows");
    r.p50 = f.get<int64_t>("p50_ns");
    r.p90 = f.get<int64_t>("p90_ns");
    r.p99 = f.get<int64_t>("p99_ns");
    r.p999 = f.get<int64_t>("p999_ns");
    r.max = f.get<int64_t>("max_ns");
    results.fct.push_back(r);
  }
}

}  // namespace

engine::RunResults read_summary_json(const std::string& path) {
  std::string text;
  try {
    text = read_bounded_file(path, kMaxSummaryJsonBytes, "a summary.json");
  } catch (const InputFileError& e) {
    if (e.reason() == InputFileError::Reason::kOpen) {
      throw ReportInputError(fmt::format("{}: cannot open (not a results directory?)", path));
    }
    throw ReportInputError(fmt::format("{}: {}", path, e.what()));
  }
  Json json;
  try {
    json = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw ReportInputError(fmt::format("{}: not JSON: {}", path, e.what()));
  }
  const Fields doc(path, "top level", json);
  engine::RunResults results;
  const auto status = doc.get<std::string>("status");
  if (const auto known = status_named(status)) {
    results.status = *known;
  } else {
    doc.fail(fmt::format("unknown status \"{}\"", status));
  }
  results.diagnosis = doc.get_or<std::string>("diagnosis", "");
  const Fields run(path, "run", doc.object().at("run"));
  results.run_name = run.get_or<std::string>("name", "");
  results.config_file = run.get_or<std::string>("config_file", "");
  results.config_digest = run.get_or<std::string>("config_digest", "");
  results.seed = run.get_or<uint64_t>("seed", 0);
  results.topology = run.get_or<std::string>("topology", "");
  results.world_size = run.get_or<int32_t>("world_size", 0);
  results.end_time = run.get<int64_t>("end_time_ns");
  results.wall_seconds = run.get_or<double>("wall_seconds", 0);
  results.events = run.get_or<uint64_t>("events", 0);
  results.goodput_bytes_per_second = run.get_or<double>("goodput_bytes_per_second", 0);
  // A run on devices in the lab is timed by the wall clock; the twin's by virtual time.
  results.wall_clock = results.topology == "device-under-test";

  const Json& jobs = doc.array("jobs");
  for (size_t j = 0; j < jobs.size(); ++j) {
    const Fields job(path, fmt::format("jobs[{}]", j), jobs[j]);
    results.jobs.push_back(
        {job.get<std::string>("name"), job.get_or<std::string>("trace", ""),
         job.get_or<int32_t>("world_size", 0), job.get_or<uint32_t>("iterations", 0),
         job.get_or<uint32_t>("warmup_iterations", 0), job.get_or<uint64_t>("nodes_issued", 0)});
  }
  read_collectives(path, doc, results);
  read_iterations(path, doc, results);
  read_ports(path, doc, results);
  read_fct(path, doc, results);
  results.flows = doc.get_or<uint64_t>("flows", 0);
  results.failed_flows = doc.get_or<uint64_t>("failed_flows", 0);
  results.notes = doc.get_or<std::vector<std::string>>("notes", {});
  return results;
}

}  // namespace etwire::outputs::report
