// `etwire report SWEEP_DIR`: the page of an `etwire sweep`, from its sweep.csv. The picture
// nccl-tests users draw: busbw against message size, one line per series (collective and
// algorithm), and the CCT against size; then every size's row as the sweep's table has it. Sizes
// that measured nothing are left out of the charts and say why in the table.
#pragma once

#include <filesystem>
#include <string>

namespace etwire::outputs::report {

// A sweep's directory: sweep.csv there and no summary.json (a run's directory has that).
bool is_sweep_dir(const std::filesystem::path& dir);

// Throws ReportInputError naming sweep.csv and the line for a row it cannot read.
std::string sweep_html(const std::filesystem::path& dir);

}  // namespace etwire::outputs::report
