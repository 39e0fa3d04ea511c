// Writes one rank's nodes for the workload generators (`synth model`, `synth moe-mix`): compute,
// collectives on a named process group, sends and receives, each with its data dependencies, and
// counts what it wrote.
//
// Collectives on one group are chained in the order they are written: each depends on the
// previous one of its group, as NCCL runs a communicator's operations in issue order. Besides
// being what a framework does, this makes every member issue a group's collectives in the same
// order however the replay's timing falls, which is how the replay matches them.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trace/et_writer.h"
#include "trace/node.h"

namespace etwire::synth {

struct OpCount {
  uint64_t count = 0;
  uint64_t bytes = 0;
  void add(uint64_t b) {
    ++count;
    bytes += b;
  }
  bool operator==(const OpCount&) const = default;
};

// What a rank's trace holds, by operation type.
struct RankOpStats {
  std::array<OpCount, trace::kCollectiveTypeCount> collectives{};
  OpCount sends;
  OpCount recvs;
  uint64_t compute_nodes = 0;
  uint64_t compute_us = 0;
  uint64_t nodes = 0;
  bool operator==(const RankOpStats&) const = default;
};

class RankTraceBuilder {
 public:
  RankTraceBuilder(trace::TraceWriter& writer, int32_t rank) : writer_(writer), rank_(rank) {}

  // Each returns the new node's id. Dependencies of id 0 are skipped (0 = "nothing yet"), as are
  // repeats. `flops` is written as num_ops when positive.
  uint64_t compute(const std::string& name, uint64_t duration_us, double flops,
                   const std::vector<uint64_t>& deps);
  uint64_t collective(const std::string& name, trace::CollectiveType type, uint64_t bytes,
                      int64_t group, const std::vector<uint64_t>& deps);
  uint64_t send(const std::string& name, int32_t peer, uint64_t bytes, int32_t tag,
                const std::vector<uint64_t>& deps);
  uint64_t recv(const std::string& name, int32_t peer, uint64_t bytes, int32_t tag,
                const std::vector<uint64_t>& deps);

  int32_t rank() const { return rank_; }
  const RankOpStats& stats() const { return stats_; }

 private:
  void set_deps(const std::vector<uint64_t>& deps);
  uint64_t emit();

  trace::TraceWriter& writer_;
  int32_t rank_;
  trace::TraceNode node_;
  uint64_t next_id_ = 1;
  std::map<int64_t, uint64_t> last_on_group_;
  RankOpStats stats_;
};

}  // namespace etwire::synth
