// The parts of a timeline, each drawn from one results file of a run onto a TraceEventWriter:
// the ranks' nodes (nodes.csv), the collective instances (summary.json), every QP's messages
// (flows.csv) and the ports' counters (ports.csv). Processes group the tracks: per job its ranks
// and its collectives, per port its QPs and its counters. A malformed file throws
// ReportInputError naming the file and line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "outputs/report/csv_reader.h"
#include "outputs/report/report_run.h"
#include "outputs/timeline/trace_event_writer.h"

namespace etwire::outputs::timeline {

struct TimelineContext {
  TimelineContext(const report::ReportRun& run, TraceEventWriter& out);

  const report::ReportRun& run;
  TraceEventWriter& out;
  // summary.json's collective instances by instance number (nullptr where none), for the names
  // of the nodes and flows that belong to them.
  std::vector<const engine::CollectiveRecord*> instances;

  uint32_t jobs() const { return static_cast<uint32_t>(run.results.jobs.size()); }
  uint32_t ranks_pid(uint32_t job) const { return 1 + job; }
  uint32_t collectives_pid(uint32_t job) const { return 1 + jobs() + job; }
  uint32_t port_pid(uint32_t port) const { return 1 + 2 * jobs() + port; }
  // The run's ports, then the fabric twin's aggregation hosts (CollNet), each a process of ports.
  uint32_t ports() const {
    return static_cast<uint32_t>(run.results.ports.size() + run.results.aggregation_hosts.size());
  }
  // The index of the job `name` in summary.json; a row naming another fails.
  uint32_t job_index(const report::CsvReader& csv, std::string_view name) const;
  // The index of a port number read from `csv`, a run port or an aggregation host after them;
  // one the summary does not list fails.
  uint32_t port_index(const report::CsvReader& csv, int64_t port) const;
  // Instance `instance` of summary.json, or nullptr when it lists none by that number.
  const engine::CollectiveRecord* instance(int64_t instance) const;
};

// Hands out the threads of tracks spread over lanes (LaneAssigner), naming each the first time
// it is used: "<name>", and "<name> #2", "#3" for its further lanes. Thread ids are unique
// across the whole trace.
class TrackThreads {
 public:
  explicit TrackThreads(TraceEventWriter& out) : out_(out) {}
  uint32_t tid(uint32_t pid, uint32_t track, uint32_t lane, const std::string& name,
               int64_t sort_index);

 private:
  TraceEventWriter& out_;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> tids_;  // (pid, track, lane)
  uint32_t next_tid_ = 1;
};

// Each returns the slices (or counter samples) it wrote.
uint64_t write_rank_tracks(TimelineContext& context, TrackThreads& threads);
uint64_t write_collective_tracks(TimelineContext& context, TrackThreads& threads);
uint64_t write_qp_tracks(TimelineContext& context, TrackThreads& threads);
uint64_t write_port_counters(TimelineContext& context);

}  // namespace etwire::outputs::timeline
