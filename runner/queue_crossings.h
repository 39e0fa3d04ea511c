// The frames that crossed the device under test toward one port of a lab run, matched from the
// run's capture files: each data frame the port received, paired with the latest copy of it (same
// destination QP and PSN) another port sent before it arrived. Its one-way delay, less the least
// any frame took, is the time it queued in the device; `etwire calibrate` reads the device's
// queue from that.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "clock/time.h"
#include "control/plan/run_plan.h"

namespace etwire::runner {

struct Crossing {
  clock::Nanos sent = 0;  // from the capture files' earliest frame
  clock::Nanos arrived = 0;
  uint32_t wire_bytes = 0;  // as the twin counts a frame: headers, FCS, preamble and gap
  uint32_t from = 0;        // the port that sent it
  bool marked = false;      // arrived CE
};

struct CrossingsTo {
  std::vector<Crossing> crossings;  // in arrival order
  uint64_t data_sent = 0;           // data frames sent to the port, resends included
  uint64_t data_arrived = 0;
  uint64_t unmatched = 0;  // arrived with no copy sent before (a capture that missed it)
};

// Reads every capture of `lab` (CaptureReadError as CapturedPortFrames throws it).
CrossingsTo collect_crossings(const control::RunPlan& plan, const std::string& lab, size_t port);

}  // namespace etwire::runner
