#include "engine/rank_runtime.h"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

namespace etwire::engine {

void RankRuntime::begin_iteration(uint32_t iteration, std::unique_ptr<feeder::Feeder> feeder,
                                  clock::Nanos now) {
  iteration_ = iteration;
  feeder_ = std::move(feeder);
  current_ = RankIteration{};
  current_.start = now;
  last_change_ = now;
}

RankIteration RankRuntime::end_iteration(clock::Nanos now) {
  account(now);
  current_.end = now;
  return current_;
}

void RankRuntime::account(clock::Nanos now) {
  const clock::Nanos elapsed = now - last_change_;
  last_change_ = now;
  if (elapsed <= 0) return;
  if (active_compute_ > 0) current_.compute_ns += elapsed;
  if (active_comm_ > 0) {
    current_.comm_ns += elapsed;
    if (active_compute_ == 0) current_.exposed_comm_ns += elapsed;
  }
}

void RankRuntime::node_started(NodeActivity activity, uint32_t slot, clock::Nanos now,
                               int64_t instance) {
  if (activity == NodeActivity::kNone) return;
  account(now);
  ++(activity == NodeActivity::kCompute ? active_compute_ : active_comm_);
  // Grows to the feeder's window once; slots are reused after that.
  if (slot >= started_.size()) started_.resize(slot + 1);
  started_[slot] = {now, instance};
}

NodeStart RankRuntime::node_completed(NodeActivity activity, uint32_t slot, clock::Nanos now) {
  if (activity == NodeActivity::kNone) return {now, -1};
  account(now);
  --(activity == NodeActivity::kCompute ? active_compute_ : active_comm_);
  return slot < started_.size() ? started_[slot] : NodeStart{now, -1};
}

void RankRuntime::hold(feeder::IssuedNode node) {
  if (node.slot >= held_.size()) held_.resize(node.slot + 1);
  held_[node.slot] = node;
}

feeder::IssuedNode RankRuntime::release(uint32_t slot) {
  if (slot >= held_.size() || held_[slot].node == nullptr) {
    throw std::logic_error(fmt::format("rank runtime: no node held in slot {}", slot));
  }
  feeder::IssuedNode node = held_[slot];
  held_[slot] = {};
  return node;
}

}  // namespace etwire::engine
