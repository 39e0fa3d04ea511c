#include "nic/loopback/switch_buffer.h"

#include <numeric>

namespace etwire::nic::loopback {

SwitchBuffer::SwitchBuffer(const control::SwitchBuffer& config, uint32_t first_port, uint32_t ports)
    : shared_(config.mode == control::BufferMode::kShared),
      first_port_(first_port),
      limit_(shared_ ? config.size_bytes : config.size_bytes / ports),
      used_(shared_ ? 1 : ports, 0) {}

uint64_t SwitchBuffer::used_bytes() const {
  return std::accumulate(used_.begin(), used_.end(), uint64_t{0});
}

}  // namespace etwire::nic::loopback
