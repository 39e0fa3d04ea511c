// The run engine across emulator processes: a run split between several replays on each only the
// ranks of its emulator's ports. The receiving halves of every connection from another process
// are opened before any traffic; a message from another process is known by its immediate (its
// instance's wire hash, wire_tag.h) and its place by counting, since one connection carries an
// instance's messages in posting order; a member sends to a member in another process without
// waiting for it to join (as point-to-point sends always do: the receiving process keeps what
// arrives early). The processes meet over MPI only before the first packet and after the last.
#include <fmt/format.h>

#include <stdexcept>

#include "control/plan/run_plan.h"
#include "engine/run_engine.h"
#include "engine/wire_tag.h"

namespace etwire::engine {

void RunEngine::open_planned_connections() {
  // A collective the plan could not build (RunPlan::traffic_problems) stops the run when joined.
  if (!loaded_.traffic) {
    throw std::invalid_argument(fmt::format(
        "{}: a run on the wall clock or split between emulator processes opens the plan's "
        "connections first, and the plan has no traffic planned",
        config_.source_file));
  }
  const control::TrafficPlan& plan = *loaded_.traffic;
  for (size_t j = 0; j < plan.connections.size(); ++j) {
    const auto job = static_cast<uint32_t>(j);
    for (const control::PlannedConnection& planned : plan.connections[j]) {
      if (rank_here(job, planned.src) || rank_here(job, planned.dst)) {
        connection(job, planned.src, planned.dst, planned.qp);
      }
    }
  }
}

void RunEngine::on_delivered_to_responder(uint32_t requester_qpn, clock::Nanos now,
                                          uint32_t ecn_marks, uint32_t immediate) {
  last_progress_ = clock_.now();
  auto it = remote_senders_.find(requester_qpn);
  if (it == remote_senders_.end()) {
    stop_stuck(fmt::format(
        "a message from requester QP {} arrived, which no connection of this process's ranks "
        "names: the emulator processes do not agree on the address plan",
        requester_qpn));
    return;
  }
  const RemoteSender& from = it->second;
  remote_deliveries_.push_back({process_of(from.job, from.src),
                                data_plane_->recorded_requester_qpn(requester_qpn), ecn_marks,
                                now});
  if (!wire_tag_last(immediate)) return;  // a chunk operation's earlier messages
  FlowEvent event;
  event.delivered = true;
  event.src_rank = from.src;
  event.dst_rank = from.dst;
  event.qp = from.qp;
  event.wire_hash = wire_tag_instance(immediate);
  event.job = from.job;
  queue_flow_event(event);
}

void RunEngine::handle_remote_delivery(const FlowEvent& event) {
  const uint64_t key = (uint64_t{event.job} << 32) | event.wire_hash;
  auto it = instance_by_wire_hash_.find(key);
  if (it == instance_by_wire_hash_.end()) {
    // None of this process's ranks has reached the collective yet.
    unjoined_[key].push_back({event.src_rank, event.dst_rank, event.qp});
    return;
  }
  deliver_remote(*it->second, event.src_rank, event.dst_rank, event.qp);
}

void RunEngine::deliver_remote(CollectiveInstance& instance, int32_t src, int32_t dst,
                               uint16_t qp) {
  const uint32_t sender = instance.position_of(src);
  const uint32_t receiver = instance.position_of(dst);
  if (sender >= instance.size() || receiver >= instance.size() || !instance.here(receiver)) {
    stop_stuck(fmt::format(
        "instance {}: a message from rank {} to rank {} on QP {} arrived from another emulator "
        "process, but {} (its wire tag matches this instance's: a hash collision, or processes "
        "whose traces differ)",
        instance.record().instance, src, dst, qp,
        receiver < instance.size() && !instance.here(receiver)
            ? fmt::format("rank {} is not replayed here", dst)
            : std::string("they are not both members of it")));
    return;
  }
  deliver(instance, receiver, sender, qp, instance.next_remote_index(sender, receiver, qp));
}

bool RunEngine::register_wire_hash(CollectiveInstance& instance) {
  const InstanceKey& key = instance.key();
  const uint64_t hashed = (uint64_t{key.job} << 32) | instance.wire_hash();
  auto [it, fresh] = instance_by_wire_hash_.emplace(hashed, &instance);
  if (!fresh) {
    const InstanceKey& other = it->second->key();
    stop_stuck(fmt::format(
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

PartialResults RunEngine::partial_results() const {
  PartialResults part;
  part.results = results_;
  part.fct_samples = fct_samples_;
  part.members_here = collective_members_here_;
  for (const Job& job : jobs_) {
    auto& ranks = part.ranks_here.emplace_back();
    for (int32_t rank = 0; rank < job.world_size; ++rank) {
      ranks.push_back(runtime_here_[job.first_runtime + static_cast<uint32_t>(rank)]);
    }
  }
  for (const config::PortConfig& port : config_.ports) {
    part.ports_here.push_back(config::drives_port(config_, port, emulator_) ? 1 : 0);
  }
  if (options_.session != nullptr) part.host = options_.session->host();
  for (const config::EmulatorConfig& emulator : config_.emulators) {
    if (emulator.rank == emulator_) part.emulator = emulator.name;
  }
  return part;
}

void RunEngine::wait_for_other_processes() {
  // Their last messages still need this process's acknowledgements.
  const auto everyone = options_.session->arrive();
  while (!everyone->passed()) {
    if (stop_requested()) {
      // The launcher is ending the run (a signal, or another process died): no one else may
      // arrive. The caller writes what this process has and aborts.
      everyone->abandon();
      results_.status = RunStatus::kInterrupted;
      results_.diagnosis = "interrupted while waiting for the other emulator processes to finish";
      return;
    }
    data_plane_->poll();
  }
}

}  // namespace etwire::engine
