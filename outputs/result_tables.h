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

// nccl-tests style, measured iterations: per (job, collective, size, group size) the instance
// count and the mean CCT (from the last arrival, us), algbw and busbw (GB/s = 1e9 B/s), ideal %.
TableCells collective_table(const engine::RunResults& results);
// Flow completion time percentiles per collective type, measured iterations (us).
TableCells fct_table(const engine::RunResults& results);

}  // namespace etwire::outputs
