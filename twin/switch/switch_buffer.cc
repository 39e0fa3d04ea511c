#include "twin/switch/switch_buffer.h"

#include <numeric>

namespace etwire::twin {

namespace {

uint64_t pool_after_reserves(const config::SwitchBuffer& config, uint32_t ports) {
  const uint64_t reserves = config.ingress_reserve_bytes * ports;
  return reserves < config.size_bytes ? config.size_bytes - reserves : 0;
}

}  // namespace

SwitchBuffer::SwitchBuffer(const config::SwitchBuffer& config, uint32_t first_port, uint32_t ports)
    : shared_(config.mode == config::BufferMode::kShared),
      dynamic_(config.mode == config::BufferMode::kDynamic),
      alpha_(config.alpha),
      first_port_(first_port),
      reserve_(config.ingress_reserve_bytes),
      limit_(config.mode == config::BufferMode::kPerPort
                 ? pool_after_reserves(config, ports) / ports
                 : pool_after_reserves(config, ports)),
      used_(shared_ ? 1 : ports, 0),
      reserved_used_(ports + 1, 0) {}

uint64_t SwitchBuffer::used_bytes() const {
  return std::accumulate(used_.begin(), used_.end(), uint64_t{0}) +
         std::accumulate(reserved_used_.begin(), reserved_used_.end() - 1, uint64_t{0});
}

}  // namespace etwire::twin
