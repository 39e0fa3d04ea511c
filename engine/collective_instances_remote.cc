// Instances across emulator processes (split_run.h): a message another process posted is known
// by its instance's wire hash and counted on its channel to find its place in the receiver's step
// program; what arrives before any rank here joined its instance waits for one to.
#include <fmt/format.h>

#include "control/check/trace_facts.h"
#include "engine/collective_instances.h"

namespace etwire::engine {

void CollectiveInstances::handle_remote_delivery(const FlowEvent& event) {
  const uint64_t key = (uint64_t{event.job} << 32) | event.wire_hash;
  auto it = by_wire_hash_.find(key);
  if (it == by_wire_hash_.end()) {
    // None of this process's ranks has reached the collective yet.
    unjoined_[key].push_back({event.src_rank, event.dst_rank, event.qp});
    return;
  }
  deliver_remote(*it->second, event.src_rank, event.dst_rank, event.qp);
}

void CollectiveInstances::deliver_remote(CollectiveInstance& instance, int32_t src, int32_t dst,
                                         uint16_t qp) {
  const uint32_t sender = instance.position_of(src);
  const uint32_t receiver = instance.position_of(dst);
  if (sender >= instance.size() || receiver >= instance.size() || !instance.here(receiver)) {
    run_.stop_stuck(fmt::format(
        "instance {}: a message from rank {} to rank {} on QP {} arrived from another emulator "
        "process, but {} (its wire tag matches this instance's: a hash collision, or processes "
        "whose traces differ)",
        instance.record().instance, src, dst, qp,
        receiver < instance.size() && !instance.here(receiver)
            ? fmt::format("rank {} is not replayed here", dst)
            : std::string("they are not both members of it")));
    return;
  }
  deliver(posting_.own_lane(), instance, receiver, sender, qp,
          instance.next_remote_index(sender, receiver, qp));
}

bool CollectiveInstances::register_wire_hash(CollectiveInstance& instance) {
  const InstanceKey& key = instance.key();
  const uint64_t hashed = (uint64_t{key.job} << 32) | instance.wire_hash();
  auto [it, fresh] = by_wire_hash_.emplace(hashed, &instance);
  if (!fresh) {
    const InstanceKey& other = it->second->key();
    run_.stop_stuck(fmt::format(
        "job \"{}\": collective #{} of {} and collective #{} of {} are open at once and their "
        "wire tags collide (hash {:#x}): a receiver in another emulator process cannot tell "
        "their messages apart",
        jobs_[key.job].config->name, key.sequence, control::group_label(key.group), other.sequence,
        control::group_label(other.group), hashed & 0x7FFFFFFFu));
    return false;
  }
  if (auto waiting = unjoined_.find(hashed); waiting != unjoined_.end()) {
    const std::vector<UnjoinedDelivery> early = std::move(waiting->second);
    unjoined_.erase(waiting);
    for (const UnjoinedDelivery& d : early) deliver_remote(instance, d.src, d.dst, d.qp);
  }
  return true;
}

}  // namespace etwire::engine
