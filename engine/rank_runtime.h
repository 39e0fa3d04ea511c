// One trace rank as the engine replays it: its feeder for the current iteration, the sequence
// numbers that match its collectives and point-to-point operations with the other ranks', the
// nodes it has in flight, and where its time goes (compute, communication, exposed
// communication).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "clock/time.h"
#include "engine/instance_key.h"
#include "engine/run_results.h"
#include "trace/feeder/feeder.h"

namespace etwire::engine {

// What a node in flight is doing, for time accounting: compute (compute and memory nodes with a
// duration), communication, or nothing (it completes at once and takes no time).
enum class NodeActivity : uint8_t { kCompute, kCommunication, kNone };

// When a node in flight started and, for a communication node, the collective instance it joined
// (CollectiveRecord::instance; -1 for compute).
struct NodeStart {
  clock::Nanos at = 0;
  int64_t instance = -1;
};

class RankRuntime {
 public:
  RankRuntime(uint32_t job, int32_t rank) : job_(job), rank_(rank) {}

  uint32_t job() const { return job_; }
  int32_t rank() const { return rank_; }

  // Starts iteration `iteration` with a fresh feeder over the rank's file.
  void begin_iteration(uint32_t iteration, std::unique_ptr<feeder::Feeder> feeder,
                       clock::Nanos now);
  // The iteration's feeder has handed out and completed everything: returns its accounting.
  RankIteration end_iteration(clock::Nanos now);
  feeder::Feeder& feeder() { return *feeder_; }
  const feeder::Feeder& feeder() const { return *feeder_; }
  bool has_feeder() const { return feeder_ != nullptr; }
  uint32_t iteration() const { return iteration_; }
  bool finished() const { return finished_; }
  void set_finished() { finished_ = true; }

  // Node bookkeeping: a started node counts as busy until it completes (kNone is not counted).
  // `slot` is the node's feeder slot, which it keeps until it completes; node_completed returns
  // what node_started recorded for it.
  void node_started(NodeActivity activity, uint32_t slot, clock::Nanos now, int64_t instance = -1);
  NodeStart node_completed(NodeActivity activity, uint32_t slot, clock::Nanos now);

  // Sequence numbers: the n-th collective this rank issues on a group, the n-th send to (or
  // receive from) a peer with a tag. Continue across iterations, as the ranks' calls do.
  uint64_t next_collective_sequence(int64_t group) { return collective_sequence_[group]++; }
  uint64_t next_send_sequence(int32_t peer, int32_t tag) { return sends_[{peer, tag}]++; }
  uint64_t next_recv_sequence(int32_t peer, int32_t tag) { return recvs_[{peer, tag}]++; }

  // Compute nodes waiting out their duration, by feeder slot (the node handed out is kept so it
  // can be completed from a timer that carries only the slot).
  void hold(feeder::IssuedNode node);
  feeder::IssuedNode release(uint32_t slot);

  // Collective instances this rank has joined and not yet finished, for diagnoses.
  std::vector<InstanceKey>& joined() { return joined_; }
  const std::vector<InstanceKey>& joined() const { return joined_; }
  uint32_t compute_in_flight() const { return active_compute_; }
  uint64_t nodes_issued() const { return nodes_issued_; }
  void count_issued() { ++nodes_issued_; }

 private:
  void account(clock::Nanos now);

  uint32_t job_;
  int32_t rank_;
  std::unique_ptr<feeder::Feeder> feeder_;
  uint32_t iteration_ = 0;
  bool finished_ = false;
  uint64_t nodes_issued_ = 0;
  std::map<int64_t, uint64_t> collective_sequence_;
  std::map<std::pair<int32_t, int32_t>, uint64_t> sends_;
  std::map<std::pair<int32_t, int32_t>, uint64_t> recvs_;
  std::vector<feeder::IssuedNode> held_;  // by slot; node == nullptr where none is held
  std::vector<NodeStart> started_;        // by slot, of the nodes in flight
  std::vector<InstanceKey> joined_;

  uint32_t active_compute_ = 0;
  uint32_t active_comm_ = 0;
  clock::Nanos last_change_ = 0;
  RankIteration current_;
};

}  // namespace etwire::engine
