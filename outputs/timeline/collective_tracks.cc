// The collective instances of summary.json as slices, per job and process group, from the last
// member's arrival to the end: the collective completion time.
#include <fmt/format.h>

#include <map>

#include "common/units.h"
#include "outputs/results_files.h"
#include "outputs/timeline/lane_assigner.h"
#include "outputs/timeline/timeline_tracks.h"

namespace etwire::outputs::timeline {

uint64_t write_collective_tracks(TimelineContext& context, TrackThreads& threads) {
  const auto& records = context.run.results.collectives;
  // Groups are numbered in order of first appearance, so their tracks keep the run's order.
  std::map<std::pair<uint32_t, int64_t>, uint32_t> groups;
  LaneAssigner lanes;
  for (const engine::CollectiveRecord& record : records) {
    const auto [it, added] =
        groups.try_emplace({record.job, record.group}, static_cast<uint32_t>(groups.size()));
    lanes.add(it->second, record.last_arrival, record.end);
  }
  lanes.assign();
  for (size_t i = 0; i < records.size(); ++i) {
    const engine::CollectiveRecord& record = records[i];
    const uint32_t group = groups.at({record.job, record.group});
    const uint32_t pid = context.collectives_pid(record.job);
    const uint32_t tid = threads.tid(pid, group, lanes.lane(i),
                                     fmt::format("group {}", group_label(record.group)), group);
    const std::string type = collective_type_label(record.kind);
    nlohmann::json args = {{"instance", record.instance},
                           {"algorithm", collectives::algorithm_name(record.algorithm)},
                           {"sequence", record.sequence},
                           {"group_size", record.group_size},
                           {"algbw_bytes", record.algbw_bytes},
                           {"iteration", record.iteration},
                           {"warmup", record.warmup},
                           {"first_arrival_ns", record.first_arrival},
                           {"cct_ns", record.cct()},
                           {"algbw_GBps", record.algbw_bytes_per_second() / 1e9},
                           {"busbw_GBps", record.busbw_bytes_per_second() / 1e9},
                           {"flows", record.flows},
                           {"failed_flows", record.failed_flows}};
    if (!record.kind) {
      args["src_rank"] = record.src;
      args["dst_rank"] = record.dst;
      args["tag"] = record.tag;
    }
    context.out.slice(pid, tid, fmt::format("{} {}", type, format_bytes(record.algbw_bytes)),
                      record.warmup ? "collective (warm-up)" : "collective", record.last_arrival,
                      record.end, args);
  }
  return records.size();
}

}  // namespace etwire::outputs::timeline
