// One collective instance of a run: the members of a process group that have reached their n-th
// collective on that group (or a SEND and its matching RECV), each running its own step program.
// Identified by (job, group, sequence); members join as their ranks' feeders issue the node.
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/generate.h"
#include "collectives/program.h"
#include "engine/instance_key.h"
#include "engine/member_execution.h"
#include "engine/run_results.h"
#include "trace/feeder/feeder.h"

namespace etwire::engine {

// Data that reached a member before it joined: possible for point-to-point only, whose sends are
// eager (see RunEngine). Handed to the member's program when it joins.
struct EarlyData {
  uint32_t peer = 0;
  uint16_t qp = 0;
  uint32_t index = 0;
};

struct InstanceMember {
  bool arrived = false;
  bool done = false;
  uint32_t runtime = 0;  // index of the member's rank runtime in the engine
  feeder::IssuedNode node;
  uint64_t node_id = 0;
  collectives::CollectiveProgram program;
  MemberExecution execution;
  std::vector<EarlyData> early;
};

class CollectiveInstance {
 public:
  // `generator` is shared by every instance of the same collective and must outlive this one.
  CollectiveInstance(const InstanceKey& key, CollectiveRecord record,
                     const collectives::ProgramGenerator& generator);

  const InstanceKey& key() const { return key_; }
  CollectiveRecord& record() { return record_; }
  const CollectiveRecord& record() const { return record_; }
  const collectives::ProgramGenerator& generator() const { return generator_; }
  // Global ranks of the members, by position.
  const std::vector<int32_t>& ranks() const { return generator_.spec().ranks; }
  // Position of a global rank in the group; size() when it is not a member.
  uint32_t position_of(int32_t rank) const;
  uint32_t size() const { return static_cast<uint32_t>(members_.size()); }
  InstanceMember& member(uint32_t position) { return members_[position]; }
  const InstanceMember& member(uint32_t position) const { return members_[position]; }
  uint32_t arrived() const { return arrived_; }
  uint32_t done() const { return done_; }
  bool complete() const { return done_ == members_.size(); }

  // Records a member's arrival and builds its program; the caller then starts it.
  void arrive(uint32_t position, uint32_t runtime, feeder::IssuedNode node, clock::Nanos now);
  // Marks a member done; returns true the first time (its node may complete).
  bool finish_member(uint32_t position, clock::Nanos now);

 private:
  InstanceKey key_;
  CollectiveRecord record_;
  const collectives::ProgramGenerator& generator_;
  std::vector<InstanceMember> members_;
  std::vector<std::pair<int32_t, uint32_t>> position_by_rank_;  // sorted by rank
  uint32_t arrived_ = 0;
  uint32_t done_ = 0;
};

}  // namespace etwire::engine
