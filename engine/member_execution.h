// One member's step program as it runs: every chunk operation (one chunk of one operation of the
// program) waiting for the same chunk of its dependencies, sends leaving in posting order per
// channel, receives completing once their data has arrived. It knows nothing of time or of the
// network: it asks its MemberActions to move bytes and is told when they have moved.
//
// The rules are those of collectives/program.h, as the data executor proves them:
//  - chunk k of an operation may start once chunk k of each of its dependencies has completed;
//  - on a channel (peer, QP) sends are posted in program order (operations in order, each one's
//    chunks ascending), and the k-th send a member posts to a peer on a QP is received by that
//    peer's k-th receive from the member on that QP;
//  - a send completes when the network has acknowledged it, a receive when its bytes have arrived
//    and its dependencies have completed (whichever happens last);
//  - an operation whose peer is the member itself is a local copy and completes as soon as it
//    may start.
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/program.h"

namespace etwire::engine {

// A send that may leave now: chunk operation `op` of the member, to `peer` on QP `qp`, the
// `index`-th send on that channel.
struct SendRequest {
  uint32_t op = 0;  // chunk-operation index within the member
  uint32_t peer = 0;
  uint16_t qp = 0;
  uint32_t chunk = 0;
  uint64_t bytes = 0;
  uint32_t index = 0;  // position on the channel: the receiver's matching receive
};

class MemberActions {
 public:
  // Whether `peer` has joined the instance: a send waits until its receiver is there, as an RDMA
  // write waits for the receiver to have registered its buffer.
  virtual bool peer_ready(uint32_t peer) const = 0;
  // Moves the bytes of a send; the caller later reports send_completed(request.op) and the
  // receiver's data_arrived(...).
  virtual void send(const SendRequest& request) = 0;

 protected:
  ~MemberActions() = default;
};

class MemberExecution {
 public:
  // Prepares to run `program`'s member program `member_program` (the member at `self` in the
  // group). Reuses this object's storage.
  void reset(const collectives::CollectiveProgram& program, size_t member_program, uint32_t self);

  // Starts every chunk operation without dependencies. Call once, after reset().
  void start(MemberActions& actions);
  // The peer joined: sends to it that were waiting for it may leave.
  void peer_arrived(uint32_t peer, MemberActions& actions);
  // A send this member posted has been acknowledged (or has failed: the run goes on and counts
  // the failure elsewhere).
  void send_completed(uint32_t op, MemberActions& actions);
  // The `index`-th send from `peer` on `qp` to this member has arrived. Returns false when no such
  // receive exists in the program (the sender's and receiver's programs disagree).
  bool data_arrived(uint32_t peer, uint16_t qp, uint32_t index, MemberActions& actions);

  bool done() const { return completed_ == total_; }
  uint64_t chunk_ops() const { return total_; }
  uint64_t completed() const { return completed_; }
  uint32_t self() const { return self_; }
  // Receives waiting for data, and sends waiting for their receiver to join: for diagnoses.
  uint64_t receives_waiting() const;
  uint64_t sends_posted() const { return sends_posted_; }
  uint64_t sends_completed() const { return sends_completed_; }

 private:
  enum State : uint8_t { kWaiting, kPosted, kDone };

  struct Channel {
    uint32_t peer = 0;
    uint16_t qp = 0;
    std::vector<uint32_t> sends;  // chunk operations, in posting order
    std::vector<uint32_t> recvs;
    uint32_t next_send = 0;
  };

  uint32_t channel_of(uint32_t peer, uint16_t qp);
  void consider(uint32_t op, MemberActions& actions);
  void advance_sends(Channel& channel, MemberActions& actions);
  void complete(uint32_t op, MemberActions& actions);

  // By chunk operation.
  std::vector<collectives::ChunkOpView> view_;
  std::vector<uint32_t> waiting_;  // dependencies not yet completed
  std::vector<uint32_t> channel_;
  std::vector<State> state_;
  std::vector<uint8_t> arrived_;  // receives: the data is here
  std::vector<uint64_t> dependents_begin_;
  std::vector<uint32_t> dependents_;
  std::vector<Channel> channels_;
  std::vector<uint32_t> stack_;  // completions still to propagate (no recursion)
  uint32_t self_ = 0;
  uint64_t total_ = 0;
  uint64_t completed_ = 0;
  uint64_t sends_posted_ = 0;
  uint64_t sends_completed_ = 0;
};

}  // namespace etwire::engine
