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

// Data that reached a member before it joined: possible for point-to-point, whose sends are
// eager (see RunEngine), and from members replayed by another emulator process. Handed to the
// member's program when it joins.
struct EarlyData {
  uint32_t peer = 0;
  uint16_t qp = 0;
  uint32_t index = 0;
};

// The runtime of a participant that runs no trace: a CollNet aggregation node.
inline constexpr uint32_t kNoRuntime = UINT32_MAX;

struct InstanceMember {
  bool arrived = false;
  bool done = false;
  uint32_t runtime = 0;  // index of the member's rank runtime in the engine; kNoRuntime: none
  feeder::IssuedNode node;
  uint64_t node_id = 0;
  MemberExecution execution;  // its program, emitted part by part as it runs
  std::vector<EarlyData> early;
};

class CollectiveInstance {
 public:
  // `generator` is shared by every instance of the same collective and must outlive this one.
  // `here`: by position, whether this process replays the member (in a run split between
  // emulator processes; empty: every member); the instance is complete when those are done.
  // `world_size`: the job's; CollNet's aggregation nodes (positions size() onwards) are its
  // participant ranks world_size + k (control::JobPlacement::aggregator_ports).
  CollectiveInstance(const InstanceKey& key, CollectiveRecord record,
                     const collectives::ProgramGenerator& generator, int32_t world_size,
                     std::vector<uint8_t> here = {});
  // Found by address: CollectiveInstances keeps pointers to it.
  CollectiveInstance(const CollectiveInstance&) = delete;
  CollectiveInstance& operator=(const CollectiveInstance&) = delete;

  const InstanceKey& key() const { return key_; }
  CollectiveRecord& record() { return record_; }
  const CollectiveRecord& record() const { return record_; }
  const collectives::ProgramGenerator& generator() const { return generator_; }
  // Global ranks of the members, by position.
  const std::vector<int32_t>& ranks() const { return generator_.spec().ranks; }
  // Position of a global rank in the group, or of an aggregation node's participant rank;
  // participants() when it is neither.
  uint32_t position_of(int32_t rank) const;
  // The members (the group's ranks), positions 0 .. size() - 1.
  uint32_t size() const { return static_cast<uint32_t>(ranks().size()); }
  // The members, then CollNet's aggregation nodes: every position that runs a program.
  uint32_t participants() const { return static_cast<uint32_t>(members_.size()); }
  bool is_aggregator(uint32_t position) const { return position >= size(); }
  // The rank of a position: a member's global rank, or an aggregation node's participant rank.
  int32_t participant_rank(uint32_t position) const {
    return is_aggregator(position) ? world_size_ + static_cast<int32_t>(position - size())
                                   : ranks()[position];
  }
  InstanceMember& member(uint32_t position) { return members_[position]; }
  const InstanceMember& member(uint32_t position) const { return members_[position]; }
  uint32_t arrived() const { return arrived_; }
  uint32_t done() const { return done_; }
  bool complete() const { return done_ == members_here_ && aggregators_done_ == aggregators(); }
  // Whether this process replays the member at `position` (an aggregation node: always).
  bool here(uint32_t position) const {
    return here_.empty() || is_aggregator(position) || here_[position] != 0;
  }
  uint32_t members_here() const { return members_here_; }
  // Split between processes: what its messages to another process carry (wire_tag.h); else 0.
  uint32_t wire_hash() const { return wire_hash_; }
  // The place of the next message of a chunk operation's end from `sender` to `receiver` on `qp`
  // (their channel), counted as they arrive from another emulator process (in posting order: one
  // connection carries them).
  uint32_t next_remote_index(uint32_t sender, uint32_t receiver, uint16_t qp);

  // Records a member's arrival and emits the first part of its program; the caller then starts
  // it.
  void arrive(uint32_t position, uint32_t runtime, feeder::IssuedNode node, clock::Nanos now);
  // Emits the first part of every aggregation node's program, there from the start (they run no
  // trace); the caller then starts them.
  void arrive_aggregators();
  // Marks a participant done; returns true the first time (a member's node may complete). The
  // collective ends with its last member; it is complete once its aggregation nodes are done too.
  bool finish_member(uint32_t position, clock::Nanos now);

 private:
  InstanceKey key_;
  CollectiveRecord record_;
  const collectives::ProgramGenerator& generator_;
  std::vector<InstanceMember> members_;
  std::vector<std::pair<int32_t, uint32_t>> position_by_rank_;  // sorted by rank
  bool consecutive_ = false;  // position p is the first rank + p, for every participant
  std::vector<uint8_t> here_;
  uint32_t members_here_ = 0;
  uint32_t wire_hash_ = 0;
  // Messages counted by next_remote_index: (sender, receiver, QP, count).
  struct RemoteChannel {
    uint32_t sender = 0;
    uint32_t receiver = 0;
    uint16_t qp = 0;
    uint32_t count = 0;
  };
  std::vector<RemoteChannel> remote_channels_;
  uint32_t aggregators() const { return participants() - size(); }

  int32_t world_size_ = 0;
  uint32_t arrived_ = 0;  // members
  uint32_t done_ = 0;     // members
  uint32_t aggregators_done_ = 0;
};

}  // namespace etwire::engine
