#include "nic/loopback/fabric_layout.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace etwire::nic::loopback {

namespace {

// Event tags carry switch-port and link indexes in 28 and 29 bits (see twin_event.h).
constexpr uint64_t kMaxIndexes = uint64_t{1} << 28;

[[noreturn]] void fail(const std::string& message) {
  throw std::invalid_argument("fabric twin: " + message);
}

}  // namespace

FabricLayout::FabricLayout(const config::FabricConfig& config, std::span<const TwinPortSpec> ports)
    : ecmp_(config.leaf_spine.ecmp) {
  if (ports.empty()) fail("no ports to attach: the twin needs at least one loopback port");
  for (const TwinPortSpec& port : ports) {
    if (port.speed_bps == 0) fail("port \"" + port.name + "\" has speed 0");
    host_names_.push_back(port.name);
  }
  if (config.topology == config::Topology::kSingleSwitch) {
    build_single_switch(config, ports);
  } else {
    build_leaf_spine(config, ports);
  }
  if (switch_ports_.size() >= kMaxIndexes || cables_.size() >= kMaxIndexes) {
    fail("the fabric has " + std::to_string(switch_ports_.size()) + " switch ports and " +
         std::to_string(cables_.size()) + " cables; the twin supports fewer than " +
         std::to_string(kMaxIndexes) + " of each");
  }
}

uint32_t FabricLayout::add_switch(std::string name, SwitchRole role, uint32_t role_index,
                                  uint32_t ports, uint32_t host_ports) {
  SwitchInfo info;
  info.name = std::move(name);
  info.role = role;
  info.role_index = role_index;
  info.first_port = static_cast<uint32_t>(switch_ports_.size());
  info.ports = ports;
  info.host_ports = host_ports;
  const auto index = static_cast<uint32_t>(switches_.size());
  for (uint32_t local = 0; local < ports; ++local) {
    SwitchPortInfo port;
    port.switch_index = index;
    port.local_port = local;
    switch_ports_.push_back(port);
  }
  switches_.push_back(std::move(info));
  return index;
}

void FabricLayout::add_host_cable(const config::FabricConfig& config, const TwinPortSpec& spec,
                                  uint32_t host, uint32_t switch_port) {
  const config::FabricPortOverride* exception = config.override_for(spec.name);
  CableInfo cable;
  cable.lower = {Endpoint::Kind::kHost, host};
  cable.upper = {Endpoint::Kind::kSwitchPort, switch_port};
  cable.speed_bps = spec.speed_bps;
  cable.propagation_ns = exception ? exception->propagation_delay_ns : config.propagation_delay_ns;
  cable.drop_probability = exception ? exception->drop_probability : config.drop_probability;
  cable.ecn = exception ? exception->ecn : config.ecn;
  cable.pfc = exception ? exception->pfc : config.pfc;
  SwitchPortInfo& port = switch_ports_[switch_port];
  port.cable = static_cast<uint32_t>(cables_.size());
  port.peer = cable.lower;
  port.name = switches_[port.switch_index].name + "/" + spec.name;
  cables_.push_back(std::move(cable));
}

void FabricLayout::build_single_switch(const config::FabricConfig& config,
                                       std::span<const TwinPortSpec> ports) {
  const auto hosts = static_cast<uint32_t>(ports.size());
  add_switch("switch", SwitchRole::kSingle, 0, hosts, hosts);
  for (uint32_t host = 0; host < hosts; ++host) add_host_cable(config, ports[host], host, host);
}

void FabricLayout::build_leaf_spine(const config::FabricConfig& config,
                                    std::span<const TwinPortSpec> ports) {
  const config::LeafSpineConfig& ls = config.leaf_spine;
  if (ls.ports_per_leaf == 0) {
    fail(
        "fabric.leaf_spine.ports_per_leaf is 0: a leaf-spine fabric needs at least one port "
        "per leaf");
  }
  if (ls.spines == 0) fail("fabric.leaf_spine.spines is 0: a leaf-spine fabric needs a spine");
  if (ls.links == 0) fail("fabric.leaf_spine.links is 0: a leaf needs a link to each spine");
  ports_per_leaf_ = ls.ports_per_leaf;
  spines_ = ls.spines;
  links_ = ls.links;
  uplinks_ = static_cast<uint32_t>(spines_) * links_;
  ecmp_seed_ = ls.ecmp_seed;
  const auto hosts = static_cast<uint32_t>(ports.size());
  leaves_ = (hosts + ports_per_leaf_ - 1) / ports_per_leaf_;

  uplink_speed_bps_ = ls.uplink_speed_bps;
  if (uplink_speed_bps_ == 0) {
    // The same rule as the configuration loader: the fastest port x ports per leaf is a leaf's
    // downlink capacity, shared by its uplinks and divided by the oversubscription ratio.
    if (!(ls.oversubscription > 0)) {
      fail("fabric.leaf_spine.oversubscription must be above 0 to derive the uplink speed (got " +
           std::to_string(ls.oversubscription) + ")");
    }
    uint64_t fastest = 0;
    for (const TwinPortSpec& port : ports) fastest = std::max(fastest, port.speed_bps);
    const double downlink = static_cast<double>(fastest) * ports_per_leaf_;
    uplink_speed_bps_ = static_cast<uint64_t>(
        std::ceil(downlink / (static_cast<double>(uplinks_) * ls.oversubscription)));
    if (uplink_speed_bps_ == 0) fail("the derived leaf-spine uplink speed is 0");
  }

  for (uint32_t leaf = 0; leaf < leaves_; ++leaf) {
    const uint32_t first_host = leaf * ports_per_leaf_;
    const uint32_t leaf_hosts = std::min(ports_per_leaf_, hosts - first_host);
    add_switch("leaf" + std::to_string(leaf), SwitchRole::kLeaf, leaf, leaf_hosts + uplinks_,
               leaf_hosts);
  }
  for (uint32_t spine = 0; spine < spines_; ++spine) {
    add_switch("spine" + std::to_string(spine), SwitchRole::kSpine, spine,
               static_cast<uint32_t>(leaves_) * links_, 0);
    spine_seeds_.push_back(mix64(ecmp_seed_ ^ (uint64_t{spine} + 1) * 0x9E3779B97F4A7C15ull));
  }
  for (uint32_t host = 0; host < hosts; ++host) {
    host_places_.push_back({host / ports_per_leaf_, host % ports_per_leaf_});
    add_host_cable(config, ports[host], host, host_switch_port(host));
  }
  for (uint32_t leaf = 0; leaf < leaves_; ++leaf) {
    for (uint32_t spine = 0; spine < spines_; ++spine) {
      for (uint32_t link = 0; link < links_; ++link) {
        const uint32_t down = uplink_port(leaf, spine, link);
        const uint32_t up = spine_port(spine, leaf, link);
        std::string suffix;
        if (links_ > 1) suffix.append(":").append(std::to_string(link));
        CableInfo cable;
        cable.lower = {Endpoint::Kind::kSwitchPort, down};
        cable.upper = {Endpoint::Kind::kSwitchPort, up};
        cable.speed_bps = uplink_speed_bps_;
        cable.propagation_ns = config.propagation_delay_ns;
        cable.drop_probability = config.drop_probability;
        cable.ecn = config.ecn;
        cable.pfc = config.pfc;
        const auto index = static_cast<uint32_t>(cables_.size());
        switch_ports_[down].cable = index;
        switch_ports_[down].peer = cable.upper;
        switch_ports_[down].name =
            switches_[leaf].name + "/" + switches_[leaves_ + spine].name + suffix;
        switch_ports_[up].cable = index;
        switch_ports_[up].peer = cable.lower;
        switch_ports_[up].name =
            switches_[leaves_ + spine].name + "/" + switches_[leaf].name + suffix;
        cables_.push_back(std::move(cable));
      }
    }
  }
}

uint32_t FabricLayout::host_switch_port(size_t host) const {
  if (host >= hosts()) {
    throw std::out_of_range("fabric twin: no host port " + std::to_string(host));
  }
  if (switches_.front().role == SwitchRole::kSingle) return static_cast<uint32_t>(host);
  const SwitchInfo& leaf = switches_[host / ports_per_leaf_];
  return leaf.first_port + static_cast<uint32_t>(host % ports_per_leaf_);
}

uint32_t FabricLayout::switches_between(size_t from, size_t to) const {
  if (from >= hosts() || to >= hosts()) {
    throw std::out_of_range("fabric twin: no host port " + std::to_string(std::max(from, to)));
  }
  if (switches_.front().role == SwitchRole::kSingle) return 1;
  return host_places_[from].leaf == host_places_[to].leaf ? 1 : 3;
}

uint32_t FabricLayout::uplink_port(size_t leaf, size_t spine, size_t link) const {
  if (leaf >= leaves_ || spine >= spines_ || link >= links_) {
    throw std::out_of_range("fabric twin: no uplink " + std::to_string(link) + " from leaf " +
                            std::to_string(leaf) + " to spine " + std::to_string(spine));
  }
  const SwitchInfo& info = switches_[leaf];
  return info.first_port + info.host_ports + static_cast<uint32_t>(spine * links_ + link);
}

uint32_t FabricLayout::spine_port(size_t spine, size_t leaf, size_t link) const {
  if (leaf >= leaves_ || spine >= spines_ || link >= links_) {
    throw std::out_of_range("fabric twin: no port " + std::to_string(link) + " on spine " +
                            std::to_string(spine) + " toward leaf " + std::to_string(leaf));
  }
  return switches_[leaves_ + spine].first_port + static_cast<uint32_t>(leaf * links_ + link);
}

uint32_t FabricLayout::uplink_cable(size_t leaf, size_t spine, size_t link) const {
  return switch_ports_[uplink_port(leaf, spine, link)].cable;
}

}  // namespace etwire::nic::loopback
