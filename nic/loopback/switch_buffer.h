// The packet memory of one switch. Shared: one pool for all ports. Per-port: the size split
// evenly between the switch's ports, each packet charged to one port's share. Which share is the
// caller's choice (the twin charges lossy traffic to the egress port, lossless traffic to the
// ingress port whose PFC account bounds it). A packet that does not fit is tail-dropped.
#pragma once

#include <cstdint>
#include <vector>

#include "control/fabric_config.h"

namespace etwire::nic::loopback {

class SwitchBuffer {
 public:
  // `first_port`, `ports`: the switch's range of global switch-port indexes.
  SwitchBuffer(const control::SwitchBuffer& config, uint32_t first_port, uint32_t ports);

  // Reserves `bytes` for a packet charged to switch port `port`; false (and nothing reserved)
  // when they do not fit.
  bool try_charge(uint32_t port, uint32_t bytes) {
    uint64_t& used = used_[shared_ ? 0 : port - first_port_];
    if (used + bytes > limit_) return false;
    used += bytes;
    return true;
  }

  void release(uint32_t port, uint32_t bytes) { used_[shared_ ? 0 : port - first_port_] -= bytes; }

  // Bytes held, in total.
  uint64_t used_bytes() const;
  // Bytes one share may hold: the whole buffer (shared) or one port's part (per-port).
  uint64_t limit_bytes() const { return limit_; }

 private:
  bool shared_;
  uint32_t first_port_;
  uint64_t limit_;
  std::vector<uint64_t> used_;  // one entry (shared) or one per port
};

}  // namespace etwire::nic::loopback
