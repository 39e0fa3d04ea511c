#include "outputs/timeline/chrome_timeline.h"

#include <fmt/format.h>

#include "outputs/qp_results.h"
#include "outputs/timeline/timeline_tracks.h"

namespace etwire::outputs::timeline {

namespace {

void name_processes(const TimelineContext& context) {
  const engine::RunResults& results = context.run.results;
  for (uint32_t j = 0; j < context.jobs(); ++j) {
    const std::string& job = results.jobs[j].name;
    context.out.process(context.ranks_pid(j), fmt::format("job {}: ranks", job),
                        context.ranks_pid(j));
    context.out.process(context.collectives_pid(j), fmt::format("job {}: collectives", job),
                        context.collectives_pid(j));
  }
  for (uint32_t p = 0; p < context.ports(); ++p) {
    context.out.process(context.port_pid(p), fmt::format("port {}", qp_port_name(results, p)),
                        context.port_pid(p));
  }
}

}  // namespace

TimelineWritten write_timeline(const std::filesystem::path& dir, const std::string& out) {
  const report::ReportRun run = report::load_report_run(dir, dir.string());
  TraceEventWriter writer(out);
  TimelineContext context(run, writer);
  TrackThreads threads(writer);
  TimelineWritten written;
  name_processes(context);
  written.collective_slices = write_collective_tracks(context, threads);
  const auto absent = [&](const char* file, const char* why) {
    written.notes.push_back(fmt::format("{} is not there ({})", run.file(file).string(), why));
  };
  if (run.has("nodes.csv")) {
    written.node_slices = write_rank_tracks(context, threads);
  } else {
    absent("nodes.csv",
           "telemetry.record.nodes was false, or the run was split between processes): no rank "
           "tracks");
  }
  if (run.has("flows.csv")) {
    written.flow_slices = write_qp_tracks(context, threads);
  } else {
    absent("flows.csv", "telemetry.record.flows was false): no QP tracks");
  }
  if (run.has("ports.csv")) {
    written.port_samples = write_port_counters(context);
  } else {
    absent("ports.csv", "telemetry.record.port_sample_interval was 0): no port counters");
  }
  const engine::RunResults& results = run.results;
  writer.close({{"run", results.run_name},
                {"status", engine::run_status_name(results.status)},
                {"clock", results.wall_clock ? "wall clock since the run's start"
                                             : "virtual time of the fabric twin"},
                {"end_ns", results.end_time},
                {"config_file", results.config_file}});
  written.events = writer.events();
  return written;
}

}  // namespace etwire::outputs::timeline
