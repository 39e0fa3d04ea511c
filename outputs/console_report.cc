#include "outputs/console_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "collectives/bandwidth.h"
#include "common/duration.h"
#include "common/units.h"
#include "outputs/qp_results.h"
#include "outputs/result_tables.h"
#include "outputs/results_files.h"

namespace etwire::outputs {

using engine::CollectiveRecord;
using engine::FctPercentiles;
using engine::PortRecord;
using engine::run_status_name;
using engine::RunResults;

namespace {

std::string duration_text(clock::Nanos nanos) {
  return nanos < 0 ? fmt::format("{} ns", nanos) : format_duration_ns(static_cast<uint64_t>(nanos));
}

void append_run_line(const RunResults& results, std::string& out) {
  out += fmt::format("Run {}: {} rank{} in {} job{}",
                     results.run_name.empty() ? "-" : results.run_name, results.world_size,
                     results.world_size == 1 ? "" : "s", results.jobs.size(),
                     results.jobs.size() == 1 ? "" : "s");
  if (!results.topology.empty()) out += fmt::format(", topology {}", results.topology);
  out += fmt::format(", seed {}\n", results.seed);
}

void append_collectives(const RunResults& results, std::string& out) {
  const TableCells table = collective_table(results);
  if (table.rows.empty()) {
    out += "No measured collective instances (none completed outside warm-up iterations).\n";
    return;
  }
  out +=
      "Collectives, measured iterations (time: mean CCT from the last arrival; GB/s = 1e9 B/s)\n";
  out += render_text(table);
}

void append_fct(const RunResults& results, std::string& out) {
  if (results.fct.empty()) return;
  out += "\nFlow completion times, measured iterations (us, nearest rank)\n";
  out += render_text(fct_table(results));
}

void append_iterations(const RunResults& results, std::string& out) {
  const TableCells table = iteration_table(results);
  if (table.rows.empty()) {
    out += "\nNo measured iterations completed.\n";
    return;
  }
  out += "\nIterations, measured (jct: first rank's start to last rank's end)\n";
  out += render_text(table);
}

void append_congestion(const RunResults& results, std::string& out) {
  const TableCells table = congestion_table(results);
  if (table.rows.empty()) {
    const bool partly = std::any_of(results.ports.begin(), results.ports.end(),
                                    [](const PortRecord& p) { return p.absent != 0; });
    out += fmt::format(
        "\nNo congestion signals: no ECN marks, CNPs, PFC pauses, drops, missing packets, "
        "retransmissions or timeouts on any port{}.\n",
        partly ? " (of the counters the ports' devices keep)" : "");
    return;
  }
  out += "\nCongestion signals, ports that saw any (ECN marks received; PFC pause frames)\n";
  out += render_text(table);
}

void append_status(const RunResults& results, std::string& out) {
  const std::string failures = failed_flows_by_status(results);
  out += fmt::format("\nStatus {}: {} time {}, wall {:.2f} s, {} events, {} flows, {} failed{}\n",
                     run_status_name(results.status), results.wall_clock ? "run" : "virtual",
                     duration_text(results.end_time), results.wall_seconds,
                     format_si(static_cast<double>(results.events)), results.flows,
                     results.failed_flows, failures);
  for (const std::string& note : results.notes) out += fmt::format("Note: {}\n", note);
  if (!results.diagnosis.empty()) {
    out += "Diagnosis:\n";
    out += results.diagnosis;
    if (results.diagnosis.back() != '\n') out += '\n';
  }
}

}  // namespace

std::string failed_flows_by_status(const RunResults& results) {
  std::string failures;
  for (size_t s = 1; s < results.flows_by_status.size(); ++s) {
    if (results.flows_by_status[s] == 0) continue;
    failures += fmt::format("{}{} {}", failures.empty() ? " (" : ", ",
                            transport::flow_status_name(static_cast<transport::FlowStatus>(s)),
                            results.flows_by_status[s]);
  }
  if (!failures.empty()) failures += ")";
  return failures;
}

std::string console_report(const RunResults& results) {
  std::string out;
  append_run_line(results, out);
  out += '\n';
  append_collectives(results, out);
  append_fct(results, out);
  append_iterations(results, out);
  append_congestion(results, out);
  append_qp_report(results, out);
  append_status(results, out);
  return out;
}

}  // namespace etwire::outputs
