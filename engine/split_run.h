// A run split between emulator processes (an emulators section, started by an MPI launcher): each
// process replays only the ranks mapped to its emulator's ports. This says which ranks are here,
// which emulator process replays the others, and what crosses between the processes on the wire:
// the sending ends another process drives (known by their requester QP numbers) and the messages
// they delivered here. Without a session of several processes every rank is here.
//
// The protocol: the receiving halves of every connection from another process are opened before
// any traffic; a message from another process is known by its immediate (its instance's wire hash,
// wire_tag.h) and its place by counting, since one connection carries an instance's messages in
// posting order (CollectiveInstances); a member sends to a member in another process without
// waiting for it to join (as point-to-point sends always do: the receiving process keeps what
// arrives early). The processes meet over MPI only before the first packet and after the last.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "clock/time.h"
#include "cluster/session.h"
#include "control/plan/run_plan.h"
#include "dataplane/data_plane.h"
#include "engine/partial_results.h"

namespace etwire::engine {

// A message posted by another emulator process that reached its receiver here: the emulator
// process that posted it, its requester's QP number as that process's flow records carry it (the
// address plan's, or an RNIC's own), when, and its CE-marked packets. The k-th delivery of a
// requester is its k-th message: joined with the sender's flow records for their FCT.
struct RemoteDelivery {
  uint32_t sender = 0;
  uint32_t sender_port = 0;
  uint32_t requester_qpn = 0;
  uint32_t ecn_marks = 0;
  clock::Nanos at = 0;
};

class SplitRun {
 public:
  // The sending end of a connection whose requester another emulator process drives.
  struct RemoteSender {
    uint32_t job = 0;
    int32_t src = 0;
    int32_t dst = 0;
    uint16_t qp = 0;
  };

  // `plan` as RunEngine takes it (without errors, every job placed); it and `session` (nullptr:
  // not split) must outlive this. Throws std::invalid_argument when the run cannot be split: a
  // transport op without immediates, or loopback ports (`virtual_time`).
  SplitRun(const control::RunPlan& plan, const cluster::Session* session, bool virtual_time);

  // Whether the run is split between several emulator processes.
  bool active() const { return active_; }
  bool rank_here(uint32_t job, int32_t rank) const {
    return here_[job][static_cast<size_t>(rank)] != 0;
  }
  // How many ranks of job `job`, and of every job, this process replays.
  uint32_t ranks_here(uint32_t job) const { return ranks_here_[job]; }
  uint32_t ranks_here() const { return total_here_; }

  // The emulator whose process replays the rank; nullptr without an emulators section.
  const config::EmulatorConfig* emulator_of(uint32_t job, int32_t rank) const;
  // Its process (MPI rank): 0 without an emulators section.
  uint32_t process_of(uint32_t job, int32_t rank) const;
  // What a rank another emulator process replays is, for a diagnosis: "is replayed by ..." (the
  // caller may turn "is" into "are").
  std::string replayed_elsewhere(uint32_t job, int32_t rank) const;

  // A connection was opened from rank `src` to rank `dst`: when another process drives its
  // requester, its messages' deliveries here are known by `requester_qpn`.
  void opened(uint32_t job, int32_t src, int32_t dst, uint16_t qp, uint32_t requester_qpn);
  // The sending end behind a requester QP number; nullptr when no connection here names it.
  const RemoteSender* sender(uint32_t requester_qpn) const;
  // Records a message from `from` delivered here (`recorded_qpn`: its requester's QP number as
  // the sender's flow records carry it, a number of the sender's port `sender_port`).
  void delivered(const RemoteSender& from, uint32_t sender_port, uint32_t recorded_qpn,
                 uint32_t ecn_marks, clock::Nanos at);
  const std::vector<RemoteDelivery>& remote_deliveries() const { return remote_deliveries_; }

  // After the last local rank finished: keeps answering the other processes' traffic until every
  // process has finished. False when a stop request came first (no one else may arrive then).
  bool wait_for_other_processes(dataplane::DataPlane& data_plane,
                                const std::atomic<bool>* stop) const;
  // This process's place in the run, for its partial results: the ranks and ports it has, its
  // host and its emulator.
  void describe(PartialResults& part) const;

 private:
  const config::RunConfig& config_;
  const control::RunPlan& plan_;
  const cluster::Session* session_;
  bool active_ = false;
  uint32_t emulator_ = 0;  // this process's emulator (MPI rank); 0 when not split
  // By job and rank: whether this process replays it, and how many it does.
  std::vector<std::vector<uint8_t>> here_;
  std::vector<uint32_t> ranks_here_;
  uint32_t total_here_ = 0;
  std::unordered_map<uint32_t, RemoteSender> remote_senders_;  // by requester QP number
  std::vector<RemoteDelivery> remote_deliveries_;
};

}  // namespace etwire::engine
