// What a twin holds. Unpartitioned, the whole fabric. A partition holds only its own hosts and
// switch ports, the links with an end at one of them, and the counters of the far ends of the
// cables into it (a frame lost on such a cable when it goes down counts at its sender, here): its
// memory follows its share of the fabric, not the fabric. Held parts are kept densely, in the
// order of the fabric's indexes, so that a partition's state is packed together; the slot tables
// translate the fabric's indexes where a frame names them (routing, crossings).
#include <stdexcept>
#include <string>

#include "twin/fabric/fabric_twin.h"

namespace etwire::twin {

namespace {

// Stream numbers of the seeded PRNGs: one per link for fault drops, one per switch port for ECN,
// one per host link for sender jitter. Numbered by the fabric's indexes, so that a partition draws
// what the whole twin draws at the same place.
constexpr uint64_t kFaultStreams = uint64_t{1} << 40;
constexpr uint64_t kEcnStreams = uint64_t{2} << 40;
constexpr uint64_t kJitterStreams = uint64_t{3} << 40;
constexpr uint64_t kSprayStreams = uint64_t{4} << 40;

config::LoadBalancing tier_mode(const config::LoadBalancingConfig& config, SwitchRole role) {
  switch (role) {
    case SwitchRole::kLeaf:
      return config.leaf;
    case SwitchRole::kSpine:
      return config.spine;
    case SwitchRole::kSuperSpine:
      return config.super_spine;
    case SwitchRole::kSingle:
      break;  // one link to each port: nothing to balance
  }
  return config::LoadBalancing::kEcmp;
}

const WireCounters kNothingCounted{};

}  // namespace

bool FabricTwin::owns(const Endpoint& end) const {
  return partitioning_.of_host.empty() || partition_of(*layout_, partitioning_, end) == partition_;
}

void FabricTwin::hold(const TwinPartitioning* partitioning) {
  if (partitioning != nullptr) {
    if (partitioning->of_host.size() != layout_->hosts() ||
        partitioning->of_switch.size() != layout_->switches() ||
        partition_ >= partitioning->count || partitioning->count >= kNoCrossing) {
      throw std::invalid_argument("fabric twin: the partitioning is not of this fabric");
    }
    partitioning_ = *partitioning;
    crossings_out_.resize(partitioning->count);
  }
  host_slot_.assign(layout_->hosts(), kNotHeld);
  port_slot_.assign(layout_->switch_ports(), kNotHeld);
  link_slot_.assign(2 * size_t{layout_->cables()}, kNotHeld);
  uint32_t hosts = 0;
  for (uint32_t host = 0; host < layout_->hosts(); ++host) {
    if (owns({Endpoint::Kind::kHost, host})) host_slot_[host] = hosts++;
  }
  uint32_t ports = 0;
  for (uint32_t port = 0; port < layout_->switch_ports(); ++port) {
    if (owns({Endpoint::Kind::kSwitchPort, port})) port_slot_[port] = ports++;
  }
  for (uint32_t cable = 0; cable < layout_->cables(); ++cable) {
    const CableInfo& info = layout_->cable(cable);
    if (!owns(info.lower) && !owns(info.upper)) continue;
    for (uint32_t id : {2 * cable, 2 * cable + 1}) {
      link_slot_[id] = static_cast<uint32_t>(link_global_.size());
      link_global_.push_back(id);
    }
    for (const Endpoint& end : {info.lower, info.upper}) {
      uint32_t& slot = (end.is_host() ? host_slot_ : port_slot_)[end.index];
      if (slot != kNotHeld) continue;
      slot = kForeign | static_cast<uint32_t>(foreign_counters_.size());
      foreign_counters_.emplace_back();
    }
  }
}

void FabricTwin::build_links(const config::FabricConfig& config, uint64_t seed) {
  const auto switch_latency = static_cast<clock::Nanos>(config.switch_latency_ns);
  links_.resize(link_global_.size());
  for (size_t slot = 0; slot < links_.size(); ++slot) {
    const uint32_t id = link_global_[slot];
    const CableInfo& info = layout_->cable(id / 2);
    Link& link = links_[slot];
    link.wire = clock::LineRateTimer(info.speed_bps);
    // Even links run from the cable's lower end to its upper one, odd links back.
    link.from = id % 2 == 0 ? info.lower : info.upper;
    link.to = id % 2 == 0 ? info.upper : info.lower;
    link.propagation_ns = static_cast<clock::Nanos>(info.propagation_ns);
    link.frame_delay_ns = link.propagation_ns + (link.to.is_host() ? 0 : switch_latency);
    link.drop_probability = info.drop_probability;
    link.fault_rng = SplitMix64::for_stream(seed, kFaultStreams + id);
    if (link.from.is_host()) {
      link.jitter_ns = static_cast<clock::Nanos>(config.sender_jitter_ns);
      link.jitter_rng = SplitMix64::for_stream(seed, kJitterStreams + id);
    }
    if (owns(link.to)) {
      link.to_slot = (link.to.is_host() ? host_slot_ : port_slot_)[link.to.index];
    } else {
      link.to_slot = kNotHeld;
      // Sent from here into another partition: the frames leave as crossings.
      if (owns(link.from)) {
        link.crosses_to = static_cast<uint16_t>(partition_of(*layout_, partitioning_, link.to));
      }
    }
  }

  hosts_.reserve(layout_->hosts());
  for (uint32_t host = 0; host < layout_->hosts(); ++host) {
    if (!owns({Endpoint::Kind::kHost, host})) continue;
    const uint32_t cable = layout_->switch_port(layout_->host_switch_port(host)).cable;
    hosts_.push_back(
        Host{LoopbackPort(*this, host, host_slot_[host], layout_->cable(cable).speed_bps),
             {},
             link_slot_[2 * cable]});
  }
}

void FabricTwin::build_switches(uint64_t seed, const config::SwitchBuffer& buffer,
                                const config::LoadBalancingConfig& load_balancing) {
  std::vector<uint32_t> buffer_of(layout_->switches(), kNotHeld);
  for (uint32_t index = 0; index < layout_->switches(); ++index) {
    if (!partitioning_.of_switch.empty() && partitioning_.of_switch[index] != partition_) continue;
    const SwitchInfo& info = layout_->switch_info(index);
    buffer_of[index] = static_cast<uint32_t>(buffers_.size());
    buffers_.emplace_back(buffer, info.first_port, info.ports);
    balancers_.emplace_back(tier_mode(load_balancing, info.role), load_balancing, info,
                            SplitMix64::for_stream(seed, kSprayStreams + index));
    balancing_ = balancing_ || balancers_.back().mode() != config::LoadBalancing::kEcmp;
  }
  shapers_.clear();
  for (uint32_t index = 0; index < layout_->switch_ports(); ++index) {
    if (!owns({Endpoint::Kind::kSwitchPort, index})) continue;
    const SwitchPortInfo& info = layout_->switch_port(index);
    const CableInfo& cable = layout_->cable(info.cable);
    const bool upper_end = cable.upper == Endpoint{Endpoint::Kind::kSwitchPort, index};
    SwitchPort port{index,
                    buffer_of[info.switch_index],
                    EgressPort(start_),
                    PfcIngress(cable.pfc),
                    RedMarker(cable.ecn, cable.speed_bps),
                    SplitMix64::for_stream(seed, kEcnStreams + index),
                    {},
                    info.switch_index,
                    link_slot_[upper_end ? 2 * info.cable + 1 : 2 * info.cable],
                    // Re-send a pause at half its lifetime: early enough that the partner never
                    // resumes in between, even with a frame of delay on the way.
                    pause_duration(0xFFFF, cable.speed_bps) / 2};
    shapers_.emplace_back(cable.shaper, start_);
    shaping_ = shaping_ || cable.shaper.shapes();
    switch_ports_.push_back(std::move(port));
  }
  if (!shaping_) shapers_ = {};
}

uint32_t FabricTwin::owned_slot(const std::vector<uint32_t>& slots, size_t index,
                                const char* what) const {
  if (index >= slots.size()) {
    throw std::out_of_range("fabric twin: no " + std::string(what) + " " + std::to_string(index));
  }
  const uint32_t slot = slots[index];
  if (slot == kNotHeld || (slot & kForeign) != 0) {
    throw std::out_of_range("fabric twin: " + std::string(what) + " " + std::to_string(index) +
                            " is another partition's");
  }
  return slot;
}

const WireCounters& FabricTwin::host_counters(size_t host) const {
  if (host >= host_slot_.size()) {
    throw std::out_of_range("fabric twin: no host " + std::to_string(host));
  }
  const uint32_t slot = host_slot_[host];
  if (slot == kNotHeld) return kNothingCounted;
  return (slot & kForeign) != 0 ? foreign_counters_[slot & ~kForeign] : hosts_[slot].counters;
}

const WireCounters& FabricTwin::switch_port_counters(size_t switch_port) const {
  if (switch_port >= port_slot_.size()) {
    throw std::out_of_range("fabric twin: no switch port " + std::to_string(switch_port));
  }
  const uint32_t slot = port_slot_[switch_port];
  if (slot == kNotHeld) return kNothingCounted;
  return (slot & kForeign) != 0 ? foreign_counters_[slot & ~kForeign]
                                : switch_ports_[slot].counters;
}

}  // namespace etwire::twin
