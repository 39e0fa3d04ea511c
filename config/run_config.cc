#include "config/run_config.h"

namespace etwire::config {

const PortConfig* RunConfig::find_port(std::string_view name) const {
  for (const auto& port : ports) {
    if (port.name == name) return &port;
  }
  return nullptr;
}

const JobConfig* RunConfig::find_job(std::string_view name) const {
  for (const auto& job : workload.jobs) {
    if (job.name == name) return &job;
  }
  return nullptr;
}

bool on_fabric_twin(const RunConfig& config, const PortConfig& port) {
  // Split between emulator processes, the software RNIC cables its ports by datagrams instead.
  return port.backend == Backend::kLoopback ||
         (port.backend == Backend::kVerbs && config.verbs.rnic == RnicKind::kSoftware &&
          config.emulators.size() <= 1);
}

bool drives_port(const RunConfig& config, const PortConfig& port, uint32_t emulator) {
  if (config.emulators.empty()) return true;
  for (const EmulatorConfig& e : config.emulators) {
    if (e.name == port.emulator) return e.rank == emulator;
  }
  return false;
}

uint32_t largest_path_mtu(uint32_t port_mtu) {
  uint32_t best = 0;
  for (uint32_t mtu : kRocePathMtus) {
    if (mtu + kRoceHeaderAllowance <= port_mtu) best = mtu;
  }
  return best;
}

uint16_t default_tx_descriptors(uint64_t speed_bps) {
  uint32_t descriptors = 1024;
  while (descriptors < 4096 && uint64_t{descriptors} * 100'000'000'000 < 1024 * speed_bps) {
    descriptors *= 2;
  }
  return static_cast<uint16_t>(descriptors);
}

const FabricPortOverride* FabricConfig::override_for(std::string_view port) const {
  for (const auto& entry : port_overrides) {
    if (entry.port == port) return &entry;
  }
  return nullptr;
}

bool NodeFilterConfig::keeps_everything() const {
  return node_types.empty() && min_node_id == 0 && max_node_id == UINT64_MAX &&
         process_groups.empty();
}

}  // namespace etwire::config
