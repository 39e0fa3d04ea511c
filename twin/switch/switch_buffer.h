// The packet memory of one switch. Each switch port has a small reserve of its own for packets
// it receives (as switch MMUs guarantee every ingress port a minimum), and the rest is one shared
// pool, split evenly into per-port shares, or one pool whose per-port shares are bounded by
// dynamic thresholds: a share may hold at most alpha times what the pool has free, so that one
// congested port leaves room for the next (Choudhury and Hahne). A packet goes into its ingress
// port's reserve while that has room, else into a share: which share is the caller's choice (the
// twin charges lossy traffic to the egress port, lossless traffic to the ingress port whose PFC
// account bounds it). A packet that fits in neither is tail-dropped.
//
// The reserve is what keeps a full buffer fair between senders: without it, the free slots of a
// full queue go to whichever sender's packet arrives first after a packet leaves, and senders
// running at the same rate arrive in the same order every time, so one of them wins every slot
// while another never gets a packet through (and so never sees an ECN mark to slow down for).
#pragma once

#include <cstdint>
#include <vector>

#include "config/fabric_config.h"

namespace etwire::twin {

inline constexpr uint32_t kNotCharged = UINT32_MAX;

// Where a packet's bytes were charged: the reserve of an ingress port or a share (a port index,
// or 0 for the shared pool's single share). Exactly one of the two is set when admitted.
struct BufferCharge {
  uint32_t reserve_port = kNotCharged;
  uint32_t share_port = kNotCharged;

  bool admitted() const { return reserve_port != kNotCharged || share_port != kNotCharged; }
};

class SwitchBuffer {
 public:
  // `first_port`, `ports`: the switch's range of global switch-port indexes. The reserves come
  // out of the size first (the caller checks that they leave something to share).
  SwitchBuffer(const config::SwitchBuffer& config, uint32_t first_port, uint32_t ports);

  // Admits `bytes` arriving on `ingress_port` into its reserve or else into the share of
  // `share_port`; the charge is not admitted() when they fit in neither.
  BufferCharge try_charge(uint32_t ingress_port, uint32_t share_port, uint32_t bytes) {
    uint64_t& reserved = reserved_used_[ingress_port - first_port_];
    if (reserved + bytes <= reserve_) {
      reserved += bytes;
      return {ingress_port, kNotCharged};
    }
    if (shared_) {  // the default: one share, the pool
      if (used_[0] + bytes > limit_) return {};
      used_[0] += bytes;
      return {kNotCharged, share_port};
    }
    uint64_t& used = used_[share_port - first_port_];
    if (used + bytes > limit_) return {};
    if (dynamic_) {
      const uint64_t free = limit_ - pool_used_;
      if (bytes > free || static_cast<double>(used + bytes) > alpha_ * static_cast<double>(free)) {
        return {};
      }
      pool_used_ += bytes;
    }
    used += bytes;
    return {kNotCharged, share_port};
  }

  void release(const BufferCharge& charge, uint32_t bytes) {
    if (charge.reserve_port != kNotCharged) {
      reserved_used_[charge.reserve_port - first_port_] -= bytes;
    } else if (shared_) {
      used_[0] -= bytes;
    } else {
      used_[charge.share_port - first_port_] -= bytes;
      if (dynamic_) pool_used_ -= bytes;
    }
  }
  // Admits `bytes` outside the buffer, whatever it holds: the caller bounds them (trimmed
  // headers, fabric.trimming.queue). Released as any charge is, into a reserve of their own past
  // the ports', which used_bytes() leaves out.
  BufferCharge hold_apart(uint32_t bytes) {
    reserved_used_.back() += bytes;
    return {first_port_ + static_cast<uint32_t>(reserved_used_.size() - 1), kNotCharged};
  }

  // Bytes held, in total.
  uint64_t used_bytes() const;
  // Bytes one share may hold: the pool (shared), one port's part of it (per-port), or the pool
  // when no other share holds any (dynamic, before its threshold).
  uint64_t limit_bytes() const { return limit_; }
  // Bytes reserved for each ingress port.
  uint64_t reserve_bytes() const { return reserve_; }

 private:
  bool shared_;
  bool dynamic_;
  double alpha_;
  uint32_t first_port_;
  uint64_t reserve_;
  uint64_t limit_;
  uint64_t pool_used_ = 0;               // dynamic: what every share holds together
  std::vector<uint64_t> used_;           // one entry (shared) or one per port
  std::vector<uint64_t> reserved_used_;  // one per port, then the bytes held apart
};

}  // namespace etwire::twin
