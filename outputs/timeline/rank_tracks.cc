// The ranks' nodes (nodes.csv) as slices on each rank's compute and communication tracks.
#include <fmt/format.h>

#include "outputs/results_files.h"
#include "outputs/timeline/lane_assigner.h"
#include "outputs/timeline/timeline_tracks.h"

namespace etwire::outputs::timeline {

namespace {

// A row of nodes.csv, as both passes read it.
struct NodeColumns {
  explicit NodeColumns(const report::CsvReader& csv)
      : job(csv.column("job")),
        rank(csv.column("rank")),
        iteration(csv.column("iteration")),
        node_id(csv.column("node_id")),
        name(csv.column("name")),
        type(csv.column("type")),
        instance(csv.column("instance")),
        start(csv.column("start_ns")),
        end(csv.column("end_ns")) {}
  size_t job, rank, iteration, node_id, name, type, instance, start, end;
};

struct NodeSlice {
  uint32_t job = 0;
  int64_t rank = 0;
  bool communication = false;
  int64_t start = 0;
  int64_t end = 0;
  uint32_t track() const { return static_cast<uint32_t>(rank * 2 + (communication ? 1 : 0)); }
};

NodeSlice read_node(const TimelineContext& context, const report::CsvReader& csv,
                    const NodeColumns& c) {
  NodeSlice slice;
  slice.job = context.job_index(csv, csv.text(c.job));
  slice.rank = csv.integer(c.rank);
  const int32_t world = context.run.results.jobs[slice.job].world_size;
  if (slice.rank < 0 || slice.rank >= world) {
    csv.fail(fmt::format("rank {} is not one of job \"{}\"'s {} ranks", slice.rank, csv.text(c.job),
                         world));
  }
  slice.communication = csv.text(c.type).substr(0, 4) == "COMM";
  slice.start = csv.integer(c.start);
  slice.end = csv.integer(c.end);
  if (slice.end < slice.start) csv.fail("end_ns is before start_ns");
  return slice;
}

}  // namespace

uint64_t write_rank_tracks(TimelineContext& context, TrackThreads& threads) {
  const std::string path = context.run.file("nodes.csv").string();
  LaneAssigner lanes;
  {
    report::CsvReader csv(path);
    const NodeColumns columns(csv);
    while (csv.next()) {
      const NodeSlice slice = read_node(context, csv, columns);
      lanes.add((uint64_t{slice.job} << 33) | slice.track(), slice.start, slice.end);
    }
  }
  lanes.assign();
  report::CsvReader csv(path);
  const NodeColumns c(csv);
  uint64_t row = 0;
  // A file still growing (a run in progress) is drawn as far as the first pass read it.
  for (; row < lanes.slices() && csv.next(); ++row) {
    const NodeSlice slice = read_node(context, csv, c);
    const uint32_t pid = context.ranks_pid(slice.job);
    const uint32_t tid = threads.tid(
        pid, slice.track(), lanes.lane(row),
        fmt::format("rank {} {}", slice.rank, slice.communication ? "communication" : "compute"),
        slice.track());
    nlohmann::json args = {{"node_id", csv.integer(c.node_id)},
                           {"node", csv.text(c.name)},
                           {"type", csv.text(c.type)},
                           {"iteration", csv.integer(c.iteration)}};
    std::string name(csv.text(c.name));
    const int64_t instance = csv.integer(c.instance, -1);
    if (instance >= 0) {
      args["instance"] = instance;
      if (const engine::CollectiveRecord* record = context.instance(instance)) {
        name = collective_type_label(record->kind);
        args["algorithm"] = collectives::algorithm_name(record->algorithm);
        args["group"] = group_label(record->group);
      }
    }
    context.out.slice(pid, tid, name, slice.communication ? "communication" : "compute",
                      slice.start, slice.end, args);
  }
  return row;
}

}  // namespace etwire::outputs::timeline
