#include "engine/collective_instance.h"

#include <algorithm>

#include "engine/wire_tag.h"

namespace etwire::engine {

CollectiveInstance::CollectiveInstance(const InstanceKey& key, CollectiveRecord record,
                                       const collectives::ProgramGenerator& generator,
                                       int32_t world_size, std::vector<uint8_t> here)
    : key_(key),
      record_(std::move(record)),
      generator_(generator),
      here_(std::move(here)),
      world_size_(world_size) {
  const auto& ranks = generator_.spec().ranks;
  members_.resize(generator_.spec().participants());
  members_here_ = here_.empty() ? static_cast<uint32_t>(ranks.size())
                                : static_cast<uint32_t>(std::count(here_.begin(), here_.end(), 1));
  if (!here_.empty()) wire_hash_ = instance_wire_hash(key_);
  position_by_rank_.reserve(members_.size());
  for (uint32_t p = 0; p < participants(); ++p) {
    position_by_rank_.emplace_back(participant_rank(p), p);
  }
  std::sort(position_by_rank_.begin(), position_by_rank_.end());
  // Most groups are a run of consecutive ranks in order (the world, a node's ranks): their
  // positions need no search, which runs for every message's both ends.
  consecutive_ = !position_by_rank_.empty();
  for (uint32_t p = 0; p < position_by_rank_.size(); ++p) {
    const auto& [rank, position] = position_by_rank_[p];
    if (position != p || rank != position_by_rank_.front().first + static_cast<int32_t>(p)) {
      consecutive_ = false;
      break;
    }
  }
  record_.group_size = static_cast<uint32_t>(ranks.size());
}

uint32_t CollectiveInstance::position_of(int32_t rank) const {
  if (consecutive_) {
    const int64_t offset = int64_t{rank} - position_by_rank_.front().first;
    return offset >= 0 && offset < participants() ? static_cast<uint32_t>(offset) : participants();
  }
  auto it = std::lower_bound(position_by_rank_.begin(), position_by_rank_.end(),
                             std::make_pair(rank, uint32_t{0}));
  if (it == position_by_rank_.end() || it->first != rank) return participants();
  return it->second;
}

void CollectiveInstance::arrive(uint32_t position, uint32_t runtime, feeder::IssuedNode node,
                                clock::Nanos now) {
  InstanceMember& member = members_[position];
  member.arrived = true;
  member.runtime = runtime;
  member.node = node;
  member.node_id = node.node ? node.node->id : 0;
  member.execution.reset(generator_, position);
  if (arrived_ == 0) record_.first_arrival = now;
  ++arrived_;
  if (key_.group == kPointToPointGroup) {
    // Sends are eager: the transfer starts when the SEND is issued, whenever the RECV comes.
    if (position == 0) record_.last_arrival = now;
  } else if (arrived_ == members_here_) {
    record_.last_arrival = now;
  }
}

void CollectiveInstance::arrive_aggregators() {
  for (uint32_t position = size(); position < participants(); ++position) {
    InstanceMember& node = members_[position];
    node.arrived = true;
    node.runtime = kNoRuntime;
    node.execution.reset(generator_, position);
  }
}

bool CollectiveInstance::finish_member(uint32_t position, clock::Nanos now) {
  InstanceMember& member = members_[position];
  if (member.done || !member.arrived || !member.execution.done()) return false;
  member.done = true;
  if (is_aggregator(position)) {
    ++aggregators_done_;
    return true;
  }
  ++done_;
  if (done_ == members_here_) record_.end = now;
  return true;
}

uint32_t CollectiveInstance::next_remote_index(uint32_t sender, uint32_t receiver, uint16_t qp) {
  for (RemoteChannel& channel : remote_channels_) {
    if (channel.sender == sender && channel.receiver == receiver && channel.qp == qp) {
      return channel.count++;
    }
  }
  remote_channels_.push_back({sender, receiver, qp, 1});
  return 0;
}

}  // namespace etwire::engine
