// What every part of a timeline shares: the run's jobs, ports and collective instances looked up
// from the rows that name them, and the threads of the tracks.
#include <fmt/format.h>

#include <algorithm>

#include "outputs/timeline/timeline_tracks.h"

namespace etwire::outputs::timeline {

TimelineContext::TimelineContext(const report::ReportRun& run, TraceEventWriter& out)
    : run(run), out(out) {
  for (const engine::CollectiveRecord& record : run.results.collectives) {
    if (record.instance >= instances.size()) instances.resize(record.instance + 1, nullptr);
    instances[record.instance] = &record;
  }
}

uint32_t TimelineContext::job_index(const report::CsvReader& csv, std::string_view name) const {
  const auto& jobs = run.results.jobs;
  const auto found = std::find_if(jobs.begin(), jobs.end(),
                                  [&](const engine::JobSummary& job) { return job.name == name; });
  if (found == jobs.end()) {
    csv.fail(fmt::format("job \"{}\" is not one of summary.json's jobs", name));
  }
  return static_cast<uint32_t>(found - jobs.begin());
}

uint32_t TimelineContext::port_index(const report::CsvReader& csv, int64_t port) const {
  if (port < 0 || static_cast<uint64_t>(port) >= ports()) {
    csv.fail(fmt::format(
        "port {} is not one of summary.json's {} ports{}", port, run.results.ports.size(),
        run.results.aggregation_hosts.empty()
            ? ""
            : fmt::format(" and {} aggregation hosts", run.results.aggregation_hosts.size())));
  }
  return static_cast<uint32_t>(port);
}

uint32_t TrackThreads::tid(uint32_t pid, uint32_t track, uint32_t lane, const std::string& name,
                           int64_t sort_index) {
  auto [it, added] = tids_.try_emplace({pid, track, lane}, next_tid_);
  if (added) {
    ++next_tid_;
    out_.thread(pid, it->second, lane == 0 ? name : fmt::format("{} #{}", name, lane + 1),
                sort_index * 1000 + lane);
  }
  return it->second;
}

const engine::CollectiveRecord* TimelineContext::instance(int64_t instance) const {
  return instance >= 0 && static_cast<uint64_t>(instance) < instances.size() ? instances[instance]
                                                                             : nullptr;
}

}  // namespace etwire::outputs::timeline
