#include "outputs/results_files.h"

#include <fmt/format.h>

#include <cctype>
#include <iterator>
#include <nlohmann/json.hpp>

#include "collectives/bandwidth.h"
#include "outputs/qp_results.h"
#include "transport/flow_record_csv.h"

namespace etwire::outputs {

using engine::CollectiveRecord;
using engine::FctPercentiles;
using engine::IterationRecord;
using engine::JobSummary;
using engine::PortQueueRecord;
using engine::PortRecord;
using engine::RankIteration;
using engine::run_status_name;
using engine::RunResults;

namespace {

using Json = nlohmann::ordered_json;

constexpr double kBytesPerGB = 1e9;

double gbps(double bytes_per_second) {
  return bytes_per_second / kBytesPerGB;
}

Json group_json(int64_t group) {
  if (group >= 0) return group;
  return group_label(group);
}

// One collective instance. The CSV rows are rendered from this object too, so summary.json and
// collectives.csv always carry the same fields in the same order.
Json collective_json(const RunResults& results, const CollectiveRecord& c) {
  const double busbw = c.busbw_bytes_per_second();
  Json j;
  j["instance"] = c.instance;
  j["job"] = job_label(results, c.job);
  j["type"] = collective_type_label(c.kind);
  j["algorithm"] = std::string(collectives::algorithm_name(c.algorithm));
  j["group"] = group_json(c.group);
  j["sequence"] = c.sequence;
  j["tag"] = c.tag;
  j["group_size"] = c.group_size;
  j["trace_bytes"] = c.trace_bytes;
  j["algbw_bytes"] = c.algbw_bytes;
  j["wire_bytes"] = c.wire_bytes;
  j["iteration"] = c.iteration;
  j["warmup"] = c.warmup;
  j["first_arrival_ns"] = c.first_arrival;
  j["last_arrival_ns"] = c.last_arrival;
  j["end_ns"] = c.end;
  j["cct_ns"] = c.cct();
  j["algbw_GBps"] = gbps(c.algbw_bytes_per_second());
  j["busbw_GBps"] = gbps(busbw);
  j["ideal_percent"] = collectives::ideal_percent(busbw, results.goodput_bytes_per_second);
  j["flows"] = c.flows;
  j["failed_flows"] = c.failed_flows;
  return j;
}

Json job_json(const JobSummary& job) {
  Json j;
  j["name"] = job.name;
  j["trace"] = job.trace;
  j["world_size"] = job.world_size;
  j["iterations"] = job.iterations;
  j["warmup_iterations"] = job.warmup_iterations;
  j["nodes_issued"] = job.nodes_issued;
  return j;
}

Json iteration_json(const RunResults& results, const IterationRecord& it) {
  Json j;
  j["job"] = job_label(results, it.job);
  j["iteration"] = it.iteration;
  j["warmup"] = it.warmup;
  j["start_ns"] = it.start;
  j["end_ns"] = it.end;
  j["jct_ns"] = it.jct();
  j["max_exposed_comm_ns"] = it.max_exposed_comm();
  Json ranks = Json::array();
  for (size_t rank = 0; rank < it.ranks.size(); ++rank) {
    const RankIteration& r = it.ranks[rank];
    Json rj;
    rj["rank"] = rank;
    rj["compute_ns"] = r.compute_ns;
    rj["comm_ns"] = r.comm_ns;
    rj["exposed_comm_ns"] = r.exposed_comm_ns;
    rj["start_ns"] = r.start;
    rj["end_ns"] = r.end;
    ranks.push_back(std::move(rj));
  }
  j["ranks"] = std::move(ranks);
  return j;
}

Json port_json(const PortRecord& p) {
  Json j;
  j["name"] = p.name;
  // Split between emulator processes: the host whose process drove the port.
  if (!p.host.empty()) j["host"] = p.host;
  j["speed_bps"] = p.speed_bps;
  for (size_t f = 0; f < dataplane::kPortCounterFields.size(); ++f) {
    const auto& field = dataplane::kPortCounterFields[f];
    // A counter the device does not count is null, not 0.
    if (p.counted(f)) {
      j[std::string(field.name)] = p.*field.member;
    } else {
      j[std::string(field.name)] = nullptr;
    }
  }
  if (p.rate_limit_bps != 0) {
    j["rate_limit_bps"] = p.rate_limit_bps;
    j["rate_limited_by"] = p.rate_limited_by;
  }
  if (!p.queues.empty()) {
    Json queues = Json::array();
    for (const PortQueueRecord& q : p.queues) {
      Json qj;
      qj["queue"] = q.queue;
      qj["lcore"] = q.lcore;
      qj["tx_bytes"] = q.tx_bytes;
      qj["rx_bytes"] = q.rx_bytes;
      qj["tx_packets"] = q.tx_packets;
      qj["rx_packets"] = q.rx_packets;
      qj["handed_over"] = q.handed_over;
      queues.push_back(std::move(qj));
    }
    j["queues"] = std::move(queues);
  }
  return j;
}

Json fct_json(const FctPercentiles& f) {
  Json j;
  j["type"] = collective_type_label(f.kind);
  j["flows"] = f.flows;
  j["p50_ns"] = f.p50;
  j["p90_ns"] = f.p90;
  j["p99_ns"] = f.p99;
  j["p999_ns"] = f.p999;
  j["max_ns"] = f.max;
  return j;
}

Json summary_json(const RunResults& results) {
  Json doc;
  doc["status"] = std::string(run_status_name(results.status));
  if (!results.diagnosis.empty()) doc["diagnosis"] = results.diagnosis;

  Json run;
  run["name"] = results.run_name;
  run["config_file"] = results.config_file;
  run["config_digest"] = results.config_digest;
  run["seed"] = results.seed;
  run["topology"] = results.topology;
  run["world_size"] = results.world_size;
  run["end_time_ns"] = results.end_time;
  run["wall_seconds"] = results.wall_seconds;
  run["events"] = results.events;
  run["goodput_bytes_per_second"] = results.goodput_bytes_per_second;
  doc["run"] = std::move(run);

  Json jobs = Json::array();
  for (const JobSummary& job : results.jobs) jobs.push_back(job_json(job));
  doc["jobs"] = std::move(jobs);

  Json collectives = Json::array();
  for (const CollectiveRecord& c : results.collectives) {
    collectives.push_back(collective_json(results, c));
  }
  doc["collectives"] = std::move(collectives);

  Json iterations = Json::array();
  for (const IterationRecord& it : results.iterations) {
    iterations.push_back(iteration_json(results, it));
  }
  doc["iterations"] = std::move(iterations);

  Json ports = Json::array();
  for (const PortRecord& port : results.ports) ports.push_back(port_json(port));
  doc["ports"] = std::move(ports);

  Json fct = Json::array();
  for (const FctPercentiles& f : results.fct) fct.push_back(fct_json(f));
  doc["fct"] = std::move(fct);
  doc["qps"] = qps_summary_json(results);

  doc["flows"] = results.flows;
  doc["failed_flows"] = results.failed_flows;
  // How the failed flows failed: {"retry-exceeded": 3, "flushed": 12}; empty when none did.
  Json failed_by_status = Json::object();
  for (size_t s = 1; s < results.flows_by_status.size(); ++s) {
    if (results.flows_by_status[s] == 0) continue;
    failed_by_status[std::string(transport::flow_status_name(
        static_cast<transport::FlowStatus>(s)))] = results.flows_by_status[s];
  }
  doc["failed_by_status"] = std::move(failed_by_status);
  doc["notes"] = results.notes;
  return doc;
}

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
  std::string text = summary_json(results).dump(2);
  text += '\n';
  write_file_atomically(path, text);
}

void write_collectives_csv(const RunResults& results, const std::string& path) {
  std::string text;
  // The header comes from the same object as the rows; a run with no instances still gets it.
  const Json header_source = collective_json(results, CollectiveRecord{});
  bool first = true;
  for (const auto& item : header_source.items()) {
    if (!first) text += ',';
    first = false;
    text += item.key();
  }
  text += '\n';
  for (const CollectiveRecord& c : results.collectives) {
    const Json row = collective_json(results, c);
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
      "paused,utilization\n";
}

void QueueCsvWriter::append(const dataplane::QueueRow& row, std::string_view switch_port) {
  const twin::QueueSample& q = row.queue;
  fmt::format_to(std::back_inserter(file_.buffer()), "{},{},{},{},{},{},{},{},{},{:.4f}\n", row.at,
                 switch_port, q.priority, q.depth_bytes, q.depth_packets, q.max_depth_bytes,
                 q.ecn_marked, q.drops, q.paused ? 1 : 0, row.utilization);
  ++rows_;
  file_.appended();
}

}  // namespace etwire::outputs
