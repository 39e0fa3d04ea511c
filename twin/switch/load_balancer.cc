#include "twin/switch/load_balancer.h"

#include "twin/layout/ecmp_hash.h"

namespace etwire::twin {

LoadBalancer::LoadBalancer(config::LoadBalancing mode, const config::LoadBalancingConfig& settings,
                           const SwitchInfo& info, SplitMix64 random)
    : mode_(mode),
      spray_order_(settings.spray),
      seed_(info.ecmp_seed),
      first_port_(info.first_port),
      flowlet_gap_(settings.flowlet_gap_ns),
      adaptive_bias_(settings.adaptive_bias_bytes),
      random_(random) {
  if (mode_ == config::LoadBalancing::kSpray && spray_order_ == config::SprayOrder::kRoundRobin) {
    turns_.assign(info.ports, 0);
  }
  if (mode_ == config::LoadBalancing::kFlowlet) flowsets_.resize(kFlowsets);
}

uint32_t LoadBalancer::spray(const EgressLinks& links, const nic::Packet& packet) {
  switch (spray_order_) {
    case config::SprayOrder::kRandom:
      // Multiply-shift: the draw's top 32 bits onto 0 .. count - 1 without a division.
      return static_cast<uint32_t>(((random_.next() >> 32) * links.count) >> 32);
    case config::SprayOrder::kRoundRobin: {
      // One turn per group of links (the group's first port), so that a spine's groups toward
      // different leaves each go round on their own.
      uint32_t& turn = turns_[links.port(0) - first_port_];
      if (turn >= links.count) turn = 0;  // the group shrank when routing lost a link
      return turn++;
    }
    case config::SprayOrder::kEntropy:
      return static_cast<uint32_t>(
          ((ecmp_hash(packet, config::EcmpHash::kUdpSourcePort, seed_) >> 32) * links.count) >> 32);
  }
  return links.hashed;
}

uint32_t LoadBalancer::index_of(const EgressLinks& links, uint32_t port) {
  if (links.listed == nullptr) {
    return port >= links.first && port - links.first < links.count ? port - links.first : kNoRoute;
  }
  for (uint32_t index = 0; index < links.count; ++index) {
    if (links.listed[index] == port) return index;
  }
  return kNoRoute;
}

}  // namespace etwire::twin
