// The tables a run's report shows, as cells: the console prints them as text (console_report.h)
// and `etwire report` as HTML, so both show the same figures formatted the same way.
#pragma once

#include <string>
#include <vector>

#include "engine/run_results.h"

namespace etwire::outputs {

struct TableCells {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

// The measured instances of one (job, collective, size, group size): the figures of a row of
// collective_table, in order of job, collective type (point-to-point last), size and group size.
struct CollectiveMeans {
  uint32_t job = 0;
  collectives::CollectiveKind kind;
  uint64_t trace_bytes = 0;  // comm_size as the trace states it
  uint64_t algbw_bytes = 0;  // the bytes algbw counts (nccl-tests' size)
  uint32_t group_size = 0;
  uint64_t instances = 0;
  double cct_us = 0;  // mean CCT from the last arrival
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  double ideal_percent = 0;  // of the mean busbw against the slowest port's goodput
};
std::vector<CollectiveMeans> measured_collective_means(const engine::RunResults& results);

// The cells as the console prints them: a text table, columns aligned.
std::string render_text(const TableCells& cells);

// The cells of those figures, as every table formats them: time in us with one decimal,
// bandwidths in GB/s with two, ideal % with one.
std::string time_us_cell(double micros);
std::string bandwidth_cell(double gbps);
std::string percent_cell(double percent);

// nccl-tests style, measured iterations: per (job, collective, size, group size) the instance
// count and the mean CCT (from the last arrival, us), algbw and busbw (GB/s = 1e9 B/s), ideal %.
TableCells collective_table(const engine::RunResults& results);
// Flow completion time percentiles per collective type, measured iterations (us).
TableCells fct_table(const engine::RunResults& results);
// Measured iterations: each job's JCT (first rank's start to last rank's end) and its largest
// exposed communication time, in ms.
TableCells iteration_table(const engine::RunResults& results);
// The ports that saw any congestion signal, with each congestion counter of
// dataplane::kPortCounterFields ("-" where the port's device does not count it).
TableCells congestion_table(const engine::RunResults& results);

}  // namespace etwire::outputs
