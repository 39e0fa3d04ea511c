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
//
// The program comes in parts (ProgramGenerator::next_part) and only the parts from the oldest
// not yet completed are held, so a member's memory follows how far its work is spread, not the
// length of its program. A part is emitted when an operation of the last one completes, or when
// data for a receive not yet emitted arrives; the emitter's promise (Emitter::emit_part) makes that
// early enough that the member runs exactly as it would with its whole program at once.
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/generate.h"
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
  // Operations a program part holds when the algorithm cuts its program (Emitter::emit_part): a
  // ring member of 8192 ranks has 32k operations, and holding every member's at once would take
  // tens of GB.
  static constexpr uint64_t kPartOps = 256;

  // Prepares to run participant `self`'s program, which `generator` emits part by part as the
  // member reaches it (the next part when an operation of the last one completes, or when data
  // for a receive not yet emitted arrives), in parts of about `part_ops` operations. Each part
  // passes through a scratch program of the calling thread's, so that members run on different
  // threads at once (a partitioned twin's window threads) share nothing. `generator` must outlive
  // this object. Reuses this object's storage.
  void reset(const collectives::ProgramGenerator& generator, uint32_t self,
             uint64_t part_ops = kPartOps);

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

  bool done() const { return cursor_.done && completed_ == emitted_; }
  // Chunk operations emitted so far (every one once the program is done), and completed.
  uint64_t chunk_ops() const { return emitted_; }
  uint64_t completed() const { return completed_; }
  uint32_t self() const { return self_; }
  // Chunk operations held now: the parts from the oldest with an operation not yet completed.
  uint64_t held() const { return ops_.size(); }
  // Receives emitted and waiting for data, and sends waiting for their receiver to join: for
  // diagnoses.
  uint64_t receives_waiting() const;
  uint64_t sends_posted() const { return sends_posted_; }
  uint64_t sends_completed() const { return sends_completed_; }
  // Sends emitted so far: each completes only when the network acknowledges it, so a member
  // with more emitted than completed is not done until that many more acknowledgements came.
  uint64_t sends_emitted() const { return sends_emitted_; }

 private:
  enum State : uint8_t { kWaiting, kPosted, kDone };

  // A chunk operation held. Chunk operations are numbered over the whole program (the number a
  // SendRequest carries); the one numbered g is ops_[g - base_].
  struct ChunkOp {
    uint64_t bytes = 0;
    uint32_t peer = 0;
    uint32_t chunk = 0;
    uint32_t waiting = 0;  // dependencies not yet completed
    uint32_t channel = 0;
    uint16_t qp = 0;
    collectives::OpKind kind = collectives::OpKind::kSend;
    State state = kWaiting;
    uint8_t arrived = 0;  // receives: the data is here
    bool is_send() const { return kind == collectives::OpKind::kSend; }
  };
  // A part held: its first operation and chunk operation, and how many of those are not done.
  struct Part {
    uint64_t first_op = 0;
    uint32_t first = 0;
    uint32_t remaining = 0;
  };
  // Sends and receives of one (peer, QP) in posting order; entries before the held parts are
  // dropped, counted by send_base / recv_base.
  struct Channel {
    uint32_t peer = 0;
    uint16_t qp = 0;
    std::vector<uint32_t> sends;
    std::vector<uint32_t> recvs;
    uint32_t send_base = 0;
    uint32_t recv_base = 0;
    uint32_t next_send = 0;  // counted from the channel's first send
  };

  ChunkOp& at(uint32_t g) { return ops_[g - base_]; }
  const ChunkOp& at(uint32_t g) const { return ops_[g - base_]; }
  Part& part_of(uint32_t g);
  Channel* find_channel(uint32_t peer, uint16_t qp);
  uint32_t channel_of(uint32_t peer, uint16_t qp);
  // Emits the next part: drops the parts done, takes in the new one, relinks dependents.
  void extend();
  void retire();
  void take_in(const collectives::CollectiveProgram& part, uint64_t first_op);
  void link_dependents();
  void consider(uint32_t op, MemberActions& actions);
  void advance_sends(Channel& channel, MemberActions& actions);
  void complete(uint32_t op, MemberActions& actions);

  const collectives::ProgramGenerator* generator_ = nullptr;
  collectives::EmitCursor cursor_;
  uint64_t part_ops_ = kPartOps;

  uint32_t base_ = 0;     // number of the first chunk operation held
  uint64_t op_base_ = 0;  // number of the first operation held
  std::vector<ChunkOp> ops_;
  std::vector<Part> parts_held_;
  // Per operation held (from parts_held_.front().first_op): its first chunk operation's number and
  // its first chunk, to find the chunk operation a dependency names.
  std::vector<uint32_t> op_first_;
  std::vector<uint32_t> op_chunk_begin_;
  // Per chunk operation held: the numbers of its dependencies not yet completed when it was
  // emitted (compressed rows, offsets from deps_begin_[0]), and the reverse edges over the held
  // ones, rebuilt with each part.
  std::vector<uint32_t> deps_begin_;
  std::vector<uint32_t> deps_;
  std::vector<uint32_t> dependents_begin_;
  std::vector<uint32_t> dependents_;
  std::vector<uint32_t> fill_;  // link_dependents' cursor per row
  std::vector<Channel> channels_;
  std::vector<uint32_t> stack_;  // completions still to propagate (no recursion)
  uint32_t self_ = 0;
  uint64_t emitted_ = 0;
  uint64_t completed_ = 0;
  uint64_t sends_posted_ = 0;
  uint64_t sends_completed_ = 0;
  uint64_t sends_emitted_ = 0;
};

}  // namespace etwire::engine
