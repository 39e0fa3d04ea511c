// The files `etwire sweep` writes for the whole sweep (each run also leaves its own results
// directory, as `etwire run` writes it):
//   sweep.json  the shape of nccl-tests' JSON output (-J, file version 2): config, results[] with
//               size, count, type, redop, root and the figures under "in_place" (etwire's
//               collectives work in place; "out_of_place" is null), then etwire's own keys: each
//               row's collective, algorithm, ideal %, status and run directory, and the
//               alpha-beta fit of every series in fits[];
//   sweep.csv   one row per collective, algorithm and size.
// Both throw std::runtime_error("<path>: <reason>") when the file cannot be written.
#pragma once

#include <string>

#include "outputs/sweep_results.h"

namespace etwire::outputs {

void write_sweep_json(const SweepResults& sweep, const std::string& path);
void write_sweep_csv(const SweepResults& sweep, const std::string& path);

}  // namespace etwire::outputs
