// `etwire replay`: the as-sent prediction of a lab run. The frames the lab's ports sent, read from
// the run's capture files (telemetry.record.pcap), go through the fabric twin the configuration
// describes at the times they were sent (twin/replay/as_sent_replay.h); what reached each port in
// the twin stands beside what reached it in the lab, read from the same files. Where the two
// differ, the device differs from its model; where the ideal-sender prediction (`run --predict`)
// differs and this one does not, the sender was not ideal.
#pragma once

#include <string>
#include <vector>

namespace etwire::runner {

struct AsSentRequest {
  std::string config;                  // the lab run's configuration
  std::vector<std::string> overrides;  // --set, as the lab run had them, or the model's changes
  std::string lab;                     // the lab run's results directory (capture/<port>.pcapng)
  std::string out;                     // where as-sent.json goes; "" = <lab>/as-sent
};

// Prints the side-by-side table, writes <out>/as-sent.json; returns an exit code (exit_codes.h):
// 2 for a configuration, a capture or a command line that cannot be replayed, named with the
// reason.
int replay_as_sent_run(const AsSentRequest& request);

}  // namespace etwire::runner
