// `etwire run --repeat N`: one configuration run N times, so that `etwire compare` can judge a
// change by the spread of its runs rather than by one sample (a lab's JCT moves by tens of
// percent from run to run). Repeat K goes to <results>/repeat-K with run.seed + K - 1 (the seed
// drives the twin's random choices, RED's marks, injected drops and sender jitter; a device's runs
// vary on their own), and <results>/repeats.json lists the repeats finished so far
// (outputs/repeat_series.h). Each repeat prints one line; at the end every metric's mean, spread
// and coefficient of variation over the repeats.
#pragma once

#include <cstdint>
#include <filesystem>

#include "runner/configured_run.h"

namespace etwire::runner {

// Refuses (kExitBadInput, saying why) a results directory that already holds the other kind of
// results: a single run's summary.json where a series goes (`series`), or a series' repeats.json
// where a single run goes. `etwire compare` could not tell which of the two the directory is.
int check_results_kind(const std::filesystem::path& out, bool series);

// `request.plan` repeated `repeats` times into `out`. Stops after a repeat that ends with
// another code than 0 or 1 (bad input, stuck, interrupted). Returns the first non-zero exit code
// of a repeat, else kExitOk.
int run_series(const RunRequest& request, uint32_t repeats, const std::filesystem::path& out);

// `etwire run --repeat N` without --predict: loads the configuration, then run_series into the
// results directory.
int run_repeatedly(const RunRequest& request, uint32_t repeats);

}  // namespace etwire::runner
