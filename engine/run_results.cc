#include "engine/run_results.h"

#include <algorithm>

#include "collectives/bandwidth.h"
#include "trace/node.h"

namespace etwire::engine {

std::string_view run_status_name(RunStatus status) {
  switch (status) {
    case RunStatus::kCompleted:
      return "completed";
    case RunStatus::kFlowsFailed:
      return "flows-failed";
    case RunStatus::kStuck:
      return "stuck";
    case RunStatus::kInterrupted:
      return "interrupted";
    case RunStatus::kFailed:
      return "failed";
  }
  return "unknown";
}

std::optional<RunStatus> run_status_named(std::string_view name) {
  for (auto status : {RunStatus::kCompleted, RunStatus::kFlowsFailed, RunStatus::kStuck,
                      RunStatus::kInterrupted, RunStatus::kFailed}) {
    if (run_status_name(status) == name) return status;
  }
  return std::nullopt;
}

std::string kind_label(collectives::CollectiveKind kind) {
  return kind ? std::string(trace::collective_type_name(*kind)) : std::string("SEND/RECV");
}

namespace {

double seconds(clock::Nanos nanos) {
  return static_cast<double>(nanos) / static_cast<double>(clock::kNanosPerSecond);
}

}  // namespace

double CollectiveRecord::algbw_bytes_per_second() const {
  return collectives::algbw(algbw_bytes, seconds(cct()));
}

double CollectiveRecord::busbw_bytes_per_second() const {
  // A send/recv moves its bytes over one link: factor 1 whatever group_size says
  // (busbw_factor gives 0 for a group of 0, which a point-to-point record may carry).
  if (!kind) return algbw_bytes_per_second();
  return collectives::busbw(kind, group_size, algbw_bytes, seconds(cct()));
}

clock::Nanos IterationRecord::max_exposed_comm() const {
  clock::Nanos longest = 0;
  for (const RankIteration& rank : ranks) longest = std::max(longest, rank.exposed_comm_ns);
  return longest;
}

}  // namespace etwire::engine
