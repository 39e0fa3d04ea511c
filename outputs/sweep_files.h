// The files `etwire sweep` writes for the whole sweep (each run also leaves its own results
// directory, as `etwire run` writes it):
//   sweep.json  the shape of nccl-tests' JSON output (-J, file version 2): config, results[] with
//               size, count, type, redop, root and the figures under "in_place" (etwire's
//               collectives work in place; "out_of_place" is null) and each measured iteration
//               under "in_place_per_iter" (as with nccl-tests' -I 1, a rank for a process), then
//               etwire's own keys: each row's collective, algorithm, ideal %, status and run
//               directory, and the alpha-beta fit and average busbw of every series in fits[];
//   series/COLLECTIVE-ALGORITHM.json  the same for one series, as one nccl-tests program writes
//               it, with that series' average_bus_bandwidth;
//   sweep.csv   one row per collective, algorithm and size.
// All throw std::runtime_error("<path>: <reason>") when a file cannot be written.
#pragma once

#include <string>

#include "outputs/sweep_results.h"

namespace etwire::outputs {

// sweep.json at `path`, and (series_dir not empty) a file per series in series_dir, which must
// exist.
void write_sweep_json(const SweepResults& sweep, const std::string& path,
                      const std::string& series_dir);
// A series' file name in series_dir: "all_reduce-ring.json".
std::string sweep_series_file(const SweepFit& series);
void write_sweep_csv(const SweepResults& sweep, const std::string& path);

}  // namespace etwire::outputs
