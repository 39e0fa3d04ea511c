#include "engine/split_run.h"

#include <fmt/format.h>

#include <stdexcept>

namespace etwire::engine {

SplitRun::SplitRun(const control::RunPlan& plan, const cluster::Session* session, bool virtual_time)
    : config_(plan.config), plan_(plan), session_(session) {
  if (session_ != nullptr && session_->size() > 1) {
    active_ = true;
    emulator_ = static_cast<uint32_t>(session_->rank());
    // A receiver in another process tells messages apart only by their immediates.
    if (config_.transport.op != config::RdmaOp::kWriteWithImmediate) {
      throw std::invalid_argument(fmt::format(
          "{}: transport.op: a run split between emulator processes needs write-with-imm: a "
          "receiver in another process tells which collective a message belongs to only by its "
          "immediate",
          config_.source_file));
    }
  }
  if (active_ && virtual_time) {
    throw std::invalid_argument(fmt::format(
        "{}: loopback ports cannot be split between emulator processes: the fabric twin's virtual "
        "time is one process's; run the configuration without mpirun",
        config_.source_file));
  }
  for (size_t j = 0; j < config_.workload.jobs.size(); ++j) {
    const control::JobPlacement& placement = *plan.placements.at(j);
    const int32_t world_size = plan.trace_sets.at(j)->world_size();
    auto& here = here_.emplace_back();
    uint32_t& count = ranks_here_.emplace_back(0);
    for (int32_t rank = 0; rank < world_size; ++rank) {
      const bool mine =
          !active_ || config::drives_port(config_, config_.ports[placement.port(rank)], emulator_);
      here.push_back(mine ? 1 : 0);
      count += mine ? 1 : 0;
    }
    total_here_ += count;
  }
}

const config::EmulatorConfig* SplitRun::emulator_of(uint32_t job, int32_t rank) const {
  const std::string& port = config_.ports[plan_.placements[job]->port(rank)].emulator;
  for (const config::EmulatorConfig& emulator : config_.emulators) {
    if (emulator.name == port) return &emulator;
  }
  return nullptr;
}

uint32_t SplitRun::process_of(uint32_t job, int32_t rank) const {
  const config::EmulatorConfig* emulator = emulator_of(job, rank);
  return emulator != nullptr ? emulator->rank : 0;
}

std::string SplitRun::replayed_elsewhere(uint32_t job, int32_t rank) const {
  const config::EmulatorConfig* emulator = emulator_of(job, rank);
  if (emulator == nullptr) return "is replayed by another emulator process";
  const auto& hosts = session_->hosts();
  return fmt::format("is replayed by emulator \"{}\" (process {} on host {})", emulator->name,
                     emulator->rank,
                     emulator->rank < hosts.size() ? hosts[emulator->rank] : std::string("?"));
}

void SplitRun::opened(uint32_t job, int32_t src, int32_t dst, uint16_t qp, uint32_t requester_qpn) {
  if (active_ && !rank_here(job, src)) remote_senders_[requester_qpn] = {job, src, dst, qp};
}

const SplitRun::RemoteSender* SplitRun::sender(uint32_t requester_qpn) const {
  auto it = remote_senders_.find(requester_qpn);
  return it != remote_senders_.end() ? &it->second : nullptr;
}

void SplitRun::delivered(const RemoteSender& from, uint32_t sender_port, uint32_t recorded_qpn,
                         uint32_t ecn_marks, clock::Nanos at) {
  remote_deliveries_.push_back(
      {process_of(from.job, from.src), sender_port, recorded_qpn, ecn_marks, at});
}

bool SplitRun::wait_for_other_processes(dataplane::DataPlane& data_plane,
                                        const std::atomic<bool>* stop) const {
  // Their last messages still need this process's acknowledgements.
  const auto everyone = session_->arrive();
  while (!everyone->passed()) {
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) {
      // The launcher is ending the run (a signal, or another process died): no one else may
      // arrive. The caller writes what this process has and aborts.
      everyone->abandon();
      return false;
    }
    data_plane.poll();
  }
  return true;
}

void SplitRun::describe(PartialResults& part) const {
  part.ranks_here = here_;
  for (const config::PortConfig& port : config_.ports) {
    part.ports_here.push_back(config::drives_port(config_, port, emulator_) ? 1 : 0);
  }
  if (session_ != nullptr) part.host = session_->host();
  for (const config::EmulatorConfig& emulator : config_.emulators) {
    if (emulator.rank == emulator_) part.emulator = emulator.name;
  }
}

}  // namespace etwire::engine
