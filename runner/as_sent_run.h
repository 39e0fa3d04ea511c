// `etwire replay`: the as-sent prediction of a lab run. The frames the lab's ports sent, read from
// the run's capture files (telemetry.record.pcap), go through the fabric twin the configuration
// describes at the times they were sent (twin/replay/as_sent_replay.h); what reached each port in
// the twin stands beside what reached it in the lab, read from the same files. Where the two
// differ, the device differs from its model; where the ideal-sender prediction (`run --predict`)
// differs and this one does not, the sender was not ideal.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "control/plan/run_plan.h"
#include "twin/replay/arrival_tally.h"
#include "twin/replay/as_sent_replay.h"
#include "twin/wire_counters.h"

namespace etwire::runner {

struct AsSentRequest {
  std::string config;                  // the lab run's configuration
  std::vector<std::string> overrides;  // --set, as the lab run had them, or the model's changes
  std::string profile;                 // a device profile (control/load/device_profile.h); ""
  std::string lab;                     // the lab run's results directory (capture/<port>.pcapng)
  std::string out;                     // where as-sent.json goes; "" = <lab>/as-sent
};

// Prints the side-by-side table, writes <out>/as-sent.json; returns an exit code (exit_codes.h):
// 2 for a configuration, a profile, a capture or a command line that cannot be replayed, named
// with the reason.
int replay_as_sent_run(const AsSentRequest& request);

// The twin's plan of a lab run's configuration, as `run --predict` derives it, with the device
// profile's overrides (if any) and then `overrides`; or nullptr after printing why there is none
// ("nothing was <verb>"). Its warnings are printed unless `quiet`.
std::shared_ptr<const control::RunPlan> load_twin_plan(const std::string& config,
                                                       const std::vector<std::string>& overrides,
                                                       const std::string& profile,
                                                       const std::string& verb, bool quiet = false);

// One port of a replay: data frames sent to it, what reached it in the lab and in the twin.
struct PortReplay {
  std::string name;
  uint64_t data_sent_to = 0;
  uint64_t frames_not_captured = 0;  // handed to the lab's capture, not in its file
  twin::ArrivalTally lab;
  twin::ReplayedHost twin;

  // Data frames sent to the port that did not reach it, by the count of one side.
  uint64_t lost(const twin::ArrivalTally& side) const {
    return data_sent_to - std::min(data_sent_to, side.data_frames);
  }
};

struct LabReplay {
  twin::AsSentResult result;
  std::vector<PortReplay> ports;  // by configured port
  uint64_t passed_over = 0;       // outbound frames neither RoCEv2 nor PFC
  twin::WireCounters fabric;      // the twin's counters, summed over its switch ports and hosts
};

// Replays the captures in `lab` through a twin built from `plan` (load_twin_plan's). Throws
// nic::capture::CaptureReadError for a capture that cannot be replayed, std::invalid_argument for
// a twin that cannot be built.
LabReplay replay_lab(const control::RunPlan& plan, const std::string& lab);

}  // namespace etwire::runner
