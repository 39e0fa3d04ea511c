// One run as `etwire report` reads it: a label and a results directory with its summary.json
// read back. The other files (flows.csv, ports.csv, queues.csv) are read by each chart as it is
// built, one pass each, so a large flows.csv is never held whole. The report takes a list of
// runs: one for `etwire report`, two for a comparison that overlays them on the same charts.
#pragma once

#include <filesystem>
#include <string>

#include "engine/run_results.h"

namespace etwire::outputs::report {

struct ReportRun {
  std::string label;  // names the run's series when several runs share the charts
  std::filesystem::path dir;
  engine::RunResults results;

  // A file of the results directory.
  std::filesystem::path file(const char* name) const { return dir / name; }
  // Whether the results directory has the file `name` (an optional one: ports.csv, queues.csv).
  // Throws ReportInputError naming it when that cannot be told (a symlink loop, a permission).
  bool has(const char* name) const;
};

// Reads `dir`/summary.json, and qps.csv when it is there. Throws ReportInputError naming the path
// when it is missing or malformed.
ReportRun load_report_run(const std::filesystem::path& dir, std::string label);

}  // namespace etwire::outputs::report
