// `etwire timeline RUN_DIR [-o FILE]`: the run as a Chrome trace (default RUN_DIR/timeline.json)
// that Perfetto and chrome://tracing open (outputs/timeline/chrome_timeline.h). Exit 0 with the
// file written; 2 when RUN_DIR is not a results directory or a file in it is malformed (the
// message names the file and line); 1 when the file cannot be written.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/results_input.h"
#include "outputs/timeline/chrome_timeline.h"
#include "runner/exit_codes.h"

namespace etwire::cli {

namespace {

struct TimelineOptions {
  std::string run_dir;
  std::string out;
};

}  // namespace

CommandAction add_timeline_command(CLI::App& app) {
  auto opts = std::make_shared<TimelineOptions>();
  CLI::App* sub = app.add_subcommand(
      "timeline",
      "Write a run's results as a Chrome trace (JSON trace event format) for Perfetto "
      "(ui.perfetto.dev) or chrome://tracing: per job the ranks' compute and communication nodes "
      "and the collective instances per process group; per port each QP's messages and the "
      "port's throughput, paced rate and congestion counters, on the run's clock.");
  sub->add_option("RUN_DIR", opts->run_dir, "A results directory of etwire run (summary.json)")
      ->required();
  sub->add_option("-o,--out", opts->out, "The trace file to write (default RUN_DIR/timeline.json)");
  return [opts]() -> int {
    const std::string out = opts->out.empty()
                                ? (std::filesystem::path(opts->run_dir) / "timeline.json").string()
                                : opts->out;
    outputs::timeline::TimelineWritten written;
    const int code = read_results_then_write(
        [&] { written = outputs::timeline::write_timeline(opts->run_dir, out); });
    if (code != runner::kExitOk) return code;
    for (const std::string& note : written.notes) std::cerr << fmt::format("note: {}\n", note);
    std::cerr << fmt::format(
        "{} events: {} node slices, {} collective slices, {} flow slices, {} port samples\n",
        written.events, written.node_slices, written.collective_slices, written.flow_slices,
        written.port_samples);
    std::cout << out << "\n";
    return runner::kExitOk;
  };
}

}  // namespace etwire::cli
