// `etwire replay CONFIG LAB_DIR`: the as-sent prediction of a lab run (runner/as_sent_run.h): the
// frames the run's ports sent, from its capture files, through the fabric twin of CONFIG at the
// times they were sent, beside what the lab's ports received. Exit 0 with as-sent.json written;
// 2 for a configuration or capture that cannot be replayed; 1 when the file cannot be written.
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "runner/as_sent_run.h"

namespace etwire::cli {

CommandAction add_replay_command(CLI::App& app) {
  auto opts = std::make_shared<runner::AsSentRequest>();
  CLI::App* sub = app.add_subcommand(
      "replay",
      "Replay what a lab run's ports actually sent through the fabric twin: every frame in "
      "LAB_DIR/capture (telemetry.record.pcap) enters the twin CONFIG describes at the time it "
      "was sent, and what reaches each port in the twin (data, CE marks, CNPs, pauses, losses, "
      "the last arrival) is set beside what reached it in the lab. Differences are the device "
      "against its model, free of the sender's timing.");
  sub->add_option("config", opts->config, "The lab run's configuration (YAML)")->required();
  sub->add_option("LAB_DIR", opts->lab, "The lab run's results directory, with capture/")
      ->required();
  sub->add_option("-s,--set", opts->overrides,
                  "Override a key as the lab run did, or to change the twin's model: "
                  "KEY.PATH=VALUE, e.g. fabric.ecn.kmin=20KB (repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--profile", opts->profile,
                  "A device profile (etwire calibrate writes one): the twin's model of the device "
                  "under test, applied after the one the configuration names (fabric.profile) and "
                  "before --set")
      ->check(CLI::ExistingFile);
  sub->add_option("-o,--out", opts->out, "The folder for as-sent.json (default LAB_DIR/as-sent)");
  return [opts]() -> int { return runner::replay_as_sent_run(*opts); };
}

}  // namespace etwire::cli
