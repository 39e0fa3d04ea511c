#include "engine/member_execution.h"

#include <algorithm>

namespace etwire::engine {

void MemberExecution::reset(const collectives::CollectiveProgram& program, size_t member_program,
                            uint32_t self) {
  self_ = self;
  view_.clear();
  channels_.clear();
  completed_ = 0;
  sends_posted_ = 0;
  sends_completed_ = 0;

  // Chunk operations in program order; first_[i] is operation i's first one.
  const uint32_t ops = program.ops(member_program);
  std::vector<uint64_t> first(ops + 1, 0);
  for (uint32_t i = 0; i < ops; ++i) {
    const collectives::OpView op = program.op(member_program, i);
    first[i + 1] = first[i] + op.chunks.chunk_count;
    for (uint32_t k = op.chunks.chunk_begin; k < op.chunks.chunk_end(); ++k) {
      view_.push_back(op.chunk(k));
    }
  }
  total_ = view_.size();
  waiting_.assign(total_, 0);
  channel_.assign(total_, 0);
  state_.assign(total_, kWaiting);
  arrived_.assign(total_, 0);
  dependents_begin_.assign(total_ + 1, 0);

  // Reverse edges, counted then filled (compressed rows): chunk k of a dependency releases chunk k
  // of each operation that names it.
  auto dependency = [&](uint32_t dep, uint32_t chunk) {
    return first[dep] + (chunk - program.op(member_program, dep).chunks.chunk_begin);
  };
  for (uint64_t g = 0; g < total_; ++g) {
    for (uint32_t dep : view_[g].deps) ++dependents_begin_[dependency(dep, view_[g].chunk) + 1];
    waiting_[g] = static_cast<uint32_t>(view_[g].deps.size());
  }
  for (uint64_t g = 0; g < total_; ++g) dependents_begin_[g + 1] += dependents_begin_[g];
  dependents_.resize(dependents_begin_[total_]);
  std::vector<uint64_t> fill(dependents_begin_.begin(), dependents_begin_.end() - 1);
  for (uint64_t g = 0; g < total_; ++g) {
    for (uint32_t dep : view_[g].deps) {
      dependents_[fill[dependency(dep, view_[g].chunk)]++] = static_cast<uint32_t>(g);
    }
  }

  // Channels: posting order is program order, which is the order of view_.
  for (uint64_t g = 0; g < total_; ++g) {
    const collectives::ChunkOpView& op = view_[g];
    if (op.peer == self_) continue;  // a local copy uses no channel
    const uint32_t c = channel_of(op.peer, op.qp);
    channel_[g] = c;
    (op.is_send() ? channels_[c].sends : channels_[c].recvs).push_back(static_cast<uint32_t>(g));
  }
}

uint32_t MemberExecution::channel_of(uint32_t peer, uint16_t qp) {
  // Members have few channels (a ring two or four, an all-to-all one per peer and QP), and this
  // runs once per chunk operation when the member joins: a linear search from the most recent
  // channel is enough.
  for (size_t c = channels_.size(); c-- > 0;) {
    if (channels_[c].peer == peer && channels_[c].qp == qp) return static_cast<uint32_t>(c);
  }
  Channel& channel = channels_.emplace_back();
  channel.peer = peer;
  channel.qp = qp;
  return static_cast<uint32_t>(channels_.size() - 1);
}

void MemberExecution::start(MemberActions& actions) {
  for (uint64_t g = 0; g < total_; ++g) {
    if (waiting_[g] == 0) consider(static_cast<uint32_t>(g), actions);
  }
}

void MemberExecution::peer_arrived(uint32_t peer, MemberActions& actions) {
  for (Channel& channel : channels_) {
    if (channel.peer == peer) advance_sends(channel, actions);
  }
}

void MemberExecution::send_completed(uint32_t op, MemberActions& actions) {
  ++sends_completed_;
  complete(op, actions);
}

bool MemberExecution::data_arrived(uint32_t peer, uint16_t qp, uint32_t index,
                                   MemberActions& actions) {
  for (Channel& channel : channels_) {
    if (channel.peer != peer || channel.qp != qp) continue;
    if (index >= channel.recvs.size()) return false;
    const uint32_t op = channel.recvs[index];
    arrived_[op] = 1;
    if (waiting_[op] == 0 && state_[op] != kDone) complete(op, actions);
    return true;
  }
  return false;
}

uint64_t MemberExecution::receives_waiting() const {
  uint64_t waiting = 0;
  for (uint64_t g = 0; g < total_; ++g) {
    if (state_[g] != kDone && !view_[g].is_send() && view_[g].peer != self_ && !arrived_[g]) {
      ++waiting;
    }
  }
  return waiting;
}

// Called when op's dependencies have all completed.
void MemberExecution::consider(uint32_t op, MemberActions& actions) {
  const collectives::ChunkOpView& view = view_[op];
  if (view.peer == self_) {
    complete(op, actions);
  } else if (view.is_send()) {
    advance_sends(channels_[channel_[op]], actions);
  } else if (arrived_[op]) {
    complete(op, actions);
  }
}

void MemberExecution::advance_sends(Channel& channel, MemberActions& actions) {
  if (!actions.peer_ready(channel.peer)) return;
  while (channel.next_send < channel.sends.size()) {
    const uint32_t op = channel.sends[channel.next_send];
    if (waiting_[op] != 0) return;
    state_[op] = kPosted;
    ++sends_posted_;
    const collectives::ChunkOpView& view = view_[op];
    actions.send({op, view.peer, view.qp, view.chunk, view.range.length, channel.next_send});
    ++channel.next_send;
  }
}

void MemberExecution::complete(uint32_t op, MemberActions& actions) {
  stack_.push_back(op);
  while (!stack_.empty()) {
    const uint32_t g = stack_.back();
    stack_.pop_back();
    if (state_[g] == kDone) continue;
    state_[g] = kDone;
    ++completed_;
    for (uint64_t i = dependents_begin_[g]; i < dependents_begin_[g + 1]; ++i) {
      const uint32_t d = dependents_[i];
      if (--waiting_[d] != 0) continue;
      const collectives::ChunkOpView& view = view_[d];
      if (view.peer == self_ || (!view.is_send() && arrived_[d])) {
        stack_.push_back(d);
      } else if (view.is_send()) {
        advance_sends(channels_[channel_[d]], actions);
      }
    }
  }
}

}  // namespace etwire::engine
