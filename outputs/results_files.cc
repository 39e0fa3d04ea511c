#include "outputs/results_files.h"

#include <fmt/format.h>

#include <cctype>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "collectives/bandwidth.h"
#include "common/units.h"
#include "config/enum_names.h"
#include "engine/result_fields.h"
#include "outputs/qp_results.h"
#include "trace/node.h"
#include "transport/flow_record_csv.h"

namespace etwire::outputs {

using engine::CollectiveRecord;
using engine::InSummary;
using engine::IterationRecord;
using engine::RankIteration;
using engine::RunResults;

namespace {

using Json = nlohmann::ordered_json;

double gbps(double bytes_per_second) {
  return bytes_per_second / kBytesPerGB;
}

// Records as summary.json shows them: the entries of their lists (engine/result_fields.h) in
// order, each in its form. The CSV rows of collectives.csv are rendered from the same objects, so
// summary.json and collectives.csv always carry the same fields in the same order.
class SummaryJsonWriter {
 public:
  explicit SummaryJsonWriter(const RunResults& results) : results_(results) {}

  // `index`: the record's place in its array (a rank's iteration shows it).
  template <engine::ResultRecord Record>
  Json object(const Record& record, size_t index = 0) const {
    Json object = Json::object();
    engine::for_each_entry(engine::ResultFields<Record>::list,
                           [&](const auto& entry) { write(object, record, index, entry); });
    return object;
  }

 private:
  template <typename Record, typename Member, InSummary Form>
  void write(Json& object, const Record& record, size_t,
             const engine::ResultField<Record, Member, Form>& field) const {
    const Member& value = record.*field.member;
    if constexpr (Form == InSummary::kJobName) {
      object[std::string(field.name)] = job_label(results_, value);
    } else if constexpr (Form == InSummary::kGroupLabel) {
      if (value >= 0) {
        object[std::string(field.name)] = value;
      } else {
        object[std::string(field.name)] = group_label(value);
      }
    } else if constexpr (Form == InSummary::kUnlessEmpty) {
      if (!is_empty(value)) object[std::string(field.name)] = json(value);
    } else if constexpr (Form == InSummary::kValue) {
      object[std::string(field.name)] = json(value);
    }
  }
  template <typename Record>
  void write(Json& object, const Record& record, size_t index,
             const engine::SummaryValue& value) const {
    object[std::string(value.name)] = derived(record, index, value.name);
  }
  template <typename Record, typename Entries>
  void write(Json& object, const Record& record, size_t index,
             const engine::SummaryObject<Entries>& nested) const {
    Json inner = Json::object();
    engine::for_each_entry(nested.entries,
                           [&](const auto& entry) { write(inner, record, index, entry); });
    object[std::string(nested.name)] = std::move(inner);
  }
  void write(Json& object, const engine::PortRecord& port, size_t,
             const engine::BaseRecord<dataplane::PortCounters>&) const {
    for (size_t f = 0; f < dataplane::kPortCounterFields.size(); ++f) {
      const dataplane::PortCounterField& field = dataplane::kPortCounterFields[f];
      // A counter the device does not count is null, not 0.
      if (port.counted(f)) {
        object[std::string(field.name)] = port.*field.member;
      } else {
        object[std::string(field.name)] = nullptr;
      }
    }
  }

  template <typename Value>
  static bool is_empty(const Value& value) {
    if constexpr (requires { value.empty(); }) {
      return value.empty();
    } else {
      return value == Value{};
    }
  }

  Json json(engine::RunStatus status) const { return std::string(engine::run_status_name(status)); }
  Json json(collectives::Algorithm algorithm) const {
    return std::string(collectives::algorithm_name(algorithm));
  }
  Json json(config::Protocol protocol) const {
    return std::string(config::name_of(config::protocol_names(), protocol));
  }
  Json json(const collectives::CollectiveKind& kind) const { return collective_type_label(kind); }
  template <engine::ResultRecord Record>
  Json json(const std::vector<Record>& records) const {
    Json array = Json::array();
    for (size_t i = 0; i < records.size(); ++i) array.push_back(object(records[i], i));
    return array;
  }
  template <typename Value>
  Json json(const Value& value) const {
    return value;
  }

  // The values summary.json derives from a record (its list's summary_value entries).
  Json derived(const CollectiveRecord& c, size_t, std::string_view name) const {
    if (name == "cct_ns") return c.cct();
    if (name == "algbw_GBps") return gbps(c.algbw_bytes_per_second());
    if (name == "busbw_GBps") return gbps(c.busbw_bytes_per_second());
    if (name == "ideal_percent") {
      return collectives::ideal_percent(c.busbw_bytes_per_second(),
                                        results_.goodput_bytes_per_second);
    }
    no_value(name);
  }
  Json derived(const IterationRecord& it, size_t, std::string_view name) const {
    if (name == "jct_ns") return it.jct();
    if (name == "max_exposed_comm_ns") return it.max_exposed_comm();
    no_value(name);
  }
  Json derived(const RankIteration&, size_t rank, std::string_view name) const {
    if (name == "rank") return rank;
    no_value(name);
  }
  Json derived(const RunResults& results, size_t, std::string_view name) const {
    if (name == "qps") return qps_summary_json(results);
    if (name == "failed_by_status") {
      // How the failed flows failed: {"retry-exceeded": 3, "flushed": 12}; empty when none did.
      Json failed_by_status = Json::object();
      for (size_t s = 1; s < results.flows_by_status.size(); ++s) {
        if (results.flows_by_status[s] == 0) continue;
        failed_by_status[std::string(transport::flow_status_name(
            static_cast<transport::FlowStatus>(s)))] = results.flows_by_status[s];
      }
      return failed_by_status;
    }
    no_value(name);
  }
  [[noreturn]] static void no_value(std::string_view name) {
    throw std::logic_error(fmt::format("summary.json: no value \"{}\" is derived", name));
  }

  const RunResults& results_;
};

void append_csv_value(const Json& value, std::string& out) {
  if (value.is_string()) {
    append_csv_text(value.get_ref<const std::string&>(), out);
  } else {
    // Numbers in their shortest round-trip form, booleans as true/false, as in summary.json.
    out += value.dump();
  }
}

}  // namespace

void append_csv_text(std::string_view text, std::string& out) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) {
    out += text;
    return;
  }
  out += '"';
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

std::string collective_type_label(collectives::CollectiveKind kind) {
  std::string label(collectives::collective_kind_name(kind));
  for (char& c : label) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return label;
}

std::optional<collectives::CollectiveKind> collective_kind_labelled(std::string_view label) {
  if (label == collective_type_label(std::nullopt)) return collectives::CollectiveKind{};
  for (int k = 0; k < trace::kCollectiveTypeCount; ++k) {
    const collectives::CollectiveKind kind = static_cast<trace::CollectiveType>(k);
    if (collective_type_label(kind) == label) return kind;
  }
  return std::nullopt;
}

std::string group_label(int64_t group) {
  if (group == -1) return "all";
  if (group == engine::kPointToPointGroup) return "p2p";
  return std::to_string(group);
}

std::string job_label(const RunResults& results, uint32_t job) {
  if (job < results.jobs.size()) return results.jobs[job].name;
  return std::to_string(job);
}

void write_summary_json(const RunResults& results, const std::string& path) {
  std::string text = SummaryJsonWriter(results).object(results).dump(2);
  text += '\n';
  write_file_atomically(path, text);
}

void write_collectives_csv(const RunResults& results, const std::string& path) {
  std::string text;
  // The header comes from the same object as the rows; a run with no instances still gets it.
  const SummaryJsonWriter writer(results);
  const Json header_source = writer.object(CollectiveRecord{});
  bool first = true;
  for (const auto& item : header_source.items()) {
    if (!first) text += ',';
    first = false;
    text += item.key();
  }
  text += '\n';
  for (const CollectiveRecord& c : results.collectives) {
    const Json row = writer.object(c);
    first = true;
    for (const auto& item : row.items()) {
      if (!first) text += ',';
      first = false;
      append_csv_value(item.value(), text);
    }
    text += '\n';
  }
  write_file_atomically(path, text);
}

FlowCsvWriter::FlowCsvWriter(std::string path) : file_(std::move(path)) {
  file_.buffer() += transport::flow_csv_header();
}

void FlowCsvWriter::append(const transport::FlowRecord& record) {
  transport::append_flow_csv(record, file_.buffer());
  ++records_;
  file_.appended();
}

QueueCsvWriter::QueueCsvWriter(std::string path) : file_(std::move(path)) {
  file_.buffer() +=
      "time_ns,switch_port,priority,depth_bytes,depth_packets,max_depth_bytes,ecn_marked,drops,"
      "trimmed,paused,utilization\n";
}

void QueueCsvWriter::append(const dataplane::QueueRow& row, std::string_view switch_port) {
  const twin::QueueSample& q = row.queue;
  fmt::format_to(std::back_inserter(file_.buffer()), "{},{},{},{},{},{},{},{},{},{},{:.4f}\n",
                 row.at, switch_port, q.priority, q.depth_bytes, q.depth_packets, q.max_depth_bytes,
                 q.ecn_marked, q.drops, q.trimmed, q.paused ? 1 : 0, row.utilization);
  ++rows_;
  file_.appended();
}

}  // namespace etwire::outputs
