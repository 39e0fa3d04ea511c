#include "engine/member_execution.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace etwire::engine {

void MemberExecution::reset(const collectives::ProgramGenerator& generator, uint32_t self,
                            uint64_t part_ops) {
  generator_ = &generator;
  part_ops_ = part_ops;
  self_ = self;
  cursor_ = generator.begin_parts(self);
  base_ = 0;
  op_base_ = 0;
  ops_.clear();
  parts_held_.clear();
  op_first_.clear();
  op_chunk_begin_.clear();
  deps_begin_.assign(1, 0);
  deps_.clear();
  channels_.clear();
  stack_.clear();
  emitted_ = 0;
  completed_ = 0;
  sends_posted_ = 0;
  sends_completed_ = 0;
  sends_emitted_ = 0;
  extend();
}

void MemberExecution::extend() {
  retire();
  // Kept from one part to the next, to reuse its storage; one per thread (reset()).
  thread_local collectives::CollectiveProgram part;
  // An empty part could never be the one whose completion emits the next: go on to one with
  // operations, or to the end.
  uint64_t first_op = cursor_.ops;
  while (generator_->next_part(cursor_, part, part_ops_)) {
    take_in(part, first_op);
    if (cursor_.ops > first_op) break;
  }
  link_dependents();
}

// Drops the leading parts whose chunk operations have all completed: nothing refers to them
// again (a dependency on them is met, and their channels' entries are behind every cursor).
void MemberExecution::retire() {
  size_t drop = 0;
  while (drop < parts_held_.size() && parts_held_[drop].remaining == 0) ++drop;
  if (drop == 0) return;
  const bool all = drop == parts_held_.size();
  const uint32_t new_base =
      all ? base_ + static_cast<uint32_t>(ops_.size()) : parts_held_[drop].first;
  const uint64_t new_op_base = all ? op_base_ + op_first_.size() : parts_held_[drop].first_op;
  const size_t chunk_ops = new_base - base_;
  const uint32_t deps_dropped = deps_begin_[chunk_ops] - deps_begin_[0];
  ops_.erase(ops_.begin(), ops_.begin() + chunk_ops);
  deps_.erase(deps_.begin(), deps_.begin() + deps_dropped);
  deps_begin_.erase(deps_begin_.begin(), deps_begin_.begin() + chunk_ops);
  for (uint32_t& begin : deps_begin_) begin -= deps_dropped;
  const size_t ops = new_op_base - op_base_;
  op_first_.erase(op_first_.begin(), op_first_.begin() + ops);
  op_chunk_begin_.erase(op_chunk_begin_.begin(), op_chunk_begin_.begin() + ops);
  for (Channel& channel : channels_) {
    for (auto [list, list_base] : {std::pair{&channel.sends, &channel.send_base},
                                   std::pair{&channel.recvs, &channel.recv_base}}) {
      const auto kept = std::lower_bound(list->begin(), list->end(), new_base);
      *list_base += static_cast<uint32_t>(kept - list->begin());
      list->erase(list->begin(), kept);
    }
  }
  parts_held_.erase(parts_held_.begin(), parts_held_.begin() + static_cast<ptrdiff_t>(drop));
  base_ = new_base;
  op_base_ = new_op_base;
}

void MemberExecution::take_in(const collectives::CollectiveProgram& part, uint64_t first_op) {
  Part held{first_op, static_cast<uint32_t>(emitted_), 0};
  const uint32_t ops = part.ops(0);
  for (uint32_t i = 0; i < ops; ++i) {
    const collectives::OpView op = part.op(0, i);
    op_first_.push_back(static_cast<uint32_t>(emitted_));
    op_chunk_begin_.push_back(op.chunks.chunk_begin);
    for (uint32_t k = op.chunks.chunk_begin; k < op.chunks.chunk_end(); ++k) {
      const uint32_t g = static_cast<uint32_t>(emitted_);
      ChunkOp c;
      c.bytes = op.chunks.first.length;
      c.peer = op.peer;
      c.chunk = k;
      c.qp = op.qp;
      c.kind = op.kind;
      for (uint32_t dep : op.deps) {
        if (dep < op_base_) continue;  // in a part dropped: completed
        const size_t d = dep - op_base_;
        const uint32_t dependency = op_first_[d] + (k - op_chunk_begin_[d]);
        if (at(dependency).state == kDone) continue;
        deps_.push_back(dependency);
        ++c.waiting;
      }
      deps_begin_.push_back(static_cast<uint32_t>(deps_.size()));
      if (held.first_op > 0 && c.waiting == 0 && (c.is_send() || c.peer == self_)) {
        // Emitter::emit_part promises otherwise; this operation would have started earlier.
        throw std::logic_error(fmt::format(
            "member {}: chunk operation {} of a later program part depends on nothing pending "
            "(Emitter::emit_part)",
            self_, g));
      }
      if (c.peer != self_) {  // a local copy uses no channel
        if (c.is_send()) ++sends_emitted_;
        c.channel = channel_of(c.peer, c.qp);
        (c.is_send() ? channels_[c.channel].sends : channels_[c.channel].recvs).push_back(g);
      }
      ops_.push_back(c);
      ++emitted_;
      ++held.remaining;
    }
  }
  parts_held_.push_back(held);
}

// Reverse edges over the held chunk operations, counted then filled (compressed rows): chunk k of
// a dependency releases chunk k of each operation that names it, in ascending order.
void MemberExecution::link_dependents() {
  const size_t held = ops_.size();
  dependents_begin_.assign(held + 1, 0);
  auto pending = [&](uint32_t dependency) {
    return dependency >= base_ && at(dependency).state != kDone;
  };
  for (size_t i = 0; i < held; ++i) {
    for (uint32_t j = deps_begin_[i]; j < deps_begin_[i + 1]; ++j) {
      if (pending(deps_[j])) ++dependents_begin_[deps_[j] - base_ + 1];
    }
  }
  for (size_t i = 0; i < held; ++i) dependents_begin_[i + 1] += dependents_begin_[i];
  dependents_.resize(dependents_begin_[held]);
  std::vector<uint32_t>& fill = fill_;
  fill.assign(dependents_begin_.begin(), dependents_begin_.end() - 1);
  for (size_t i = 0; i < held; ++i) {
    for (uint32_t j = deps_begin_[i]; j < deps_begin_[i + 1]; ++j) {
      if (pending(deps_[j]))
        dependents_[fill[deps_[j] - base_]++] = base_ + static_cast<uint32_t>(i);
    }
  }
}

MemberExecution::Part& MemberExecution::part_of(uint32_t g) {
  for (size_t i = parts_held_.size(); i-- > 1;) {
    if (parts_held_[i].first <= g) return parts_held_[i];
  }
  return parts_held_.front();
}

MemberExecution::Channel* MemberExecution::find_channel(uint32_t peer, uint16_t qp) {
  // Members have few channels (a ring two or four, an all-to-all one per peer and QP), and
  // channel_of runs once per chunk operation as it is emitted: a linear search from the most
  // recent channel is enough.
  for (size_t c = channels_.size(); c-- > 0;) {
    if (channels_[c].peer == peer && channels_[c].qp == qp) return &channels_[c];
  }
  return nullptr;
}

uint32_t MemberExecution::channel_of(uint32_t peer, uint16_t qp) {
  if (const Channel* found = find_channel(peer, qp)) {
    return static_cast<uint32_t>(found - channels_.data());
  }
  Channel& channel = channels_.emplace_back();
  channel.peer = peer;
  channel.qp = qp;
  return static_cast<uint32_t>(channels_.size() - 1);
}

void MemberExecution::start(MemberActions& actions) {
  // The first part: later ones hold nothing that may start before them (Emitter::emit_part).
  const uint32_t end = base_ + static_cast<uint32_t>(ops_.size());
  for (uint32_t g = base_; g < end; ++g) {
    if (g >= base_ && at(g).waiting == 0) consider(g, actions);
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
  Channel* channel = find_channel(peer, qp);
  // Data may run ahead of the parts emitted: emit up to its receive.
  while (!cursor_.done &&
         (channel == nullptr || index >= channel->recv_base + channel->recvs.size())) {
    extend();
    channel = find_channel(peer, qp);
  }
  if (channel == nullptr || index >= channel->recv_base + channel->recvs.size()) return false;
  if (index < channel->recv_base) return true;  // its receive completed and was dropped
  const uint32_t op = channel->recvs[index - channel->recv_base];
  ChunkOp& c = at(op);
  c.arrived = 1;
  if (c.waiting == 0 && c.state != kDone) complete(op, actions);
  return true;
}

uint64_t MemberExecution::receives_waiting() const {
  uint64_t waiting = 0;
  for (const ChunkOp& c : ops_) {
    if (c.state != kDone && !c.is_send() && c.peer != self_ && !c.arrived) ++waiting;
  }
  return waiting;
}

// Called when op's dependencies have all completed.
void MemberExecution::consider(uint32_t op, MemberActions& actions) {
  const ChunkOp& c = at(op);
  if (c.peer == self_) {
    complete(op, actions);
  } else if (c.is_send()) {
    advance_sends(channels_[c.channel], actions);
  } else if (c.arrived) {
    complete(op, actions);
  }
}

void MemberExecution::advance_sends(Channel& channel, MemberActions& actions) {
  if (!actions.peer_ready(channel.peer)) return;
  while (channel.next_send - channel.send_base < channel.sends.size()) {
    const uint32_t op = channel.sends[channel.next_send - channel.send_base];
    ChunkOp& c = at(op);
    if (c.waiting != 0) return;
    c.state = kPosted;
    ++sends_posted_;
    actions.send({op, c.peer, c.qp, c.chunk, c.bytes, channel.next_send});
    ++channel.next_send;
  }
}

void MemberExecution::complete(uint32_t op, MemberActions& actions) {
  stack_.push_back(op);
  while (!stack_.empty()) {
    const uint32_t g = stack_.back();
    stack_.pop_back();
    if (g < base_ || at(g).state == kDone) continue;
    // The first completion in the last part emits the next, before this one releases anything.
    if (!cursor_.done && g >= parts_held_.back().first) extend();
    at(g).state = kDone;
    ++completed_;
    --part_of(g).remaining;
    for (uint32_t i = dependents_begin_[g - base_]; i < dependents_begin_[g - base_ + 1]; ++i) {
      const uint32_t d = dependents_[i];
      ChunkOp& c = at(d);
      if (--c.waiting != 0) continue;
      if (c.peer == self_ || (!c.is_send() && c.arrived)) {
        stack_.push_back(d);
      } else if (c.is_send()) {
        advance_sends(channels_[c.channel], actions);
      }
    }
  }
}

}  // namespace etwire::engine
