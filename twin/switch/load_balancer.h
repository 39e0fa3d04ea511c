// How one switch spreads packets over the equal links toward their destination
// (fabric.load_balancing, a mode per tier):
// - ecmp: the flow's hash picks one link for all its packets (the layout's pick).
// - spray: every packet anew: a seeded random draw, the group's links in turn, or the hash of the
//   packet's entropy field alone (RoCEv2's UDP source port), which spreads one QP only when its
//   sender varies that field.
// - flowlet: a flow keeps its link while its packets follow each other closer than the flowlet
//   gap; after a longer pause it starts a flowlet on the least loaded link, as dynamic load
//   balancing switches do. Flows are kept in a table of flowsets indexed by their hash, so flows
//   that share a flowset share its link and its gaps, as in a switch's table.
// - adaptive: every packet goes to the link whose egress queue holds the fewest bytes, unless
//   its hashed link holds no more than the bias above that, as adaptive routing switches weigh
//   their local queues.
// Ties go to the hashed link, then to the links after it in order, so every mode is a fixed
// function of the seed and what the switch has seen.
#pragma once

#include <cstdint>
#include <vector>

#include "clock/time.h"
#include "config/fabric_config.h"
#include "nic/packet.h"
#include "twin/layout/fabric_layout.h"
#include "twin/prng.h"

namespace etwire::twin {

class LoadBalancer {
 public:
  // Flowsets in a flowlet switch's table.
  static constexpr uint32_t kFlowsets = 2048;

  // For switch `info` in mode `mode`, with the modes' settings; `random`: its own stream.
  LoadBalancer(config::LoadBalancing mode, const config::LoadBalancingConfig& settings,
               const SwitchInfo& info, SplitMix64 random);

  config::LoadBalancing mode() const { return mode_; }

  // Which of `links` (0 .. count - 1) `packet` leaves on at `now`; `queued(port)`: the bytes
  // waiting in global switch port `port`'s egress queues.
  template <typename Queued>
  uint32_t pick(const EgressLinks& links, const nic::Packet& packet, clock::Nanos now,
                Queued&& queued) {
    if (links.count <= 1 || mode_ == config::LoadBalancing::kEcmp) return links.hashed;
    switch (mode_) {
      case config::LoadBalancing::kSpray:
        return spray(links, packet);
      case config::LoadBalancing::kFlowlet:
        return flowlet(links, packet, now, queued);
      case config::LoadBalancing::kAdaptive: {
        uint64_t least = 0;
        const uint32_t index = least_loaded(links, queued, least);
        return queued(links.port(links.hashed)) <= least + adaptive_bias_ ? links.hashed : index;
      }
      case config::LoadBalancing::kEcmp:
        break;
    }
    return links.hashed;
  }

 private:
  struct Flowset {
    clock::Nanos last = 0;
    uint32_t port = kNoRoute;  // the global switch port of its flowlet; kNoRoute: none yet
  };

  uint32_t spray(const EgressLinks& links, const nic::Packet& packet);

  template <typename Queued>
  uint32_t flowlet(const EgressLinks& links, const nic::Packet& packet, clock::Nanos now,
                   Queued&& queued) {
    Flowset& set =
        flowsets_[ecmp_hash(packet, config::EcmpHash::kFiveTuple, seed_) & (kFlowsets - 1)];
    const bool in_gap = set.port != kNoRoute && now - set.last <= flowlet_gap_;
    set.last = now;
    if (in_gap) {
      const uint32_t index = index_of(links, set.port);
      if (index != kNoRoute) return index;  // its link still leads there
    }
    uint64_t least = 0;
    const uint32_t index = least_loaded(links, queued, least);
    set.port = links.port(index);
    return index;
  }

  // The link with the fewest queued bytes, the first in order from the hashed one on a tie.
  template <typename Queued>
  static uint32_t least_loaded(const EgressLinks& links, Queued&& queued, uint64_t& least) {
    uint32_t best = links.hashed;
    least = queued(links.port(best));
    for (uint32_t step = 1; step < links.count && least > 0; ++step) {
      uint32_t index = links.hashed + step;
      if (index >= links.count) index -= links.count;
      const uint64_t bytes = queued(links.port(index));
      if (bytes < least) {
        least = bytes;
        best = index;
      }
    }
    return best;
  }

  // Where global switch port `port` is among `links`, or kNoRoute.
  static uint32_t index_of(const EgressLinks& links, uint32_t port);

  config::LoadBalancing mode_;
  config::SprayOrder spray_order_;
  uint64_t seed_;  // the switch's ECMP seed
  uint32_t first_port_;
  clock::Nanos flowlet_gap_;
  uint64_t adaptive_bias_;
  SplitMix64 random_;
  std::vector<uint32_t> turns_;    // spray round-robin: by the group's first port, local
  std::vector<Flowset> flowsets_;  // flowlet: kFlowsets of them
};

}  // namespace etwire::twin
