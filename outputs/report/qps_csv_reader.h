// Reads a run's qps.csv back into RunResults::qps, so the report shows the QPs that met the most
// congestion from the same table the console prints (qp_results.h). Port and job names resolve
// against the run's summary.json, read first.
#pragma once

#include <filesystem>

#include "engine/run_results.h"

namespace etwire::outputs::report {

// Fills results.qps and sets qps_counted. Throws ReportInputError "<path>:<line>: <what>" for a
// row it cannot read (an unknown role, port or job, a counter that is not a whole number).
void read_qps_csv(const std::filesystem::path& path, engine::RunResults& results);

}  // namespace etwire::outputs::report
