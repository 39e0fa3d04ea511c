#include "twin/layout/fabric_layout.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "config/fabric_shape.h"
#include "twin/layout/setup_problem.h"

namespace etwire::twin {

namespace {

// Event tags carry switch-port and link indexes in 28 and 29 bits (see twin_event.h).
constexpr uint64_t kMaxIndexes = uint64_t{1} << 28;

// A layout problem blames the fabric section as a whole: the message names the keys involved.
[[noreturn]] void fail(const std::string& message) {
  throw SetupError({"fabric", message});
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
    build_clos(config, ports);
  }
  if (switch_ports_.size() >= kMaxIndexes || cables_.size() >= kMaxIndexes) {
    fail("the fabric has " + std::to_string(switch_ports_.size()) + " switch ports and " +
         std::to_string(cables_.size()) + " cables; the twin supports fewer than " +
         std::to_string(kMaxIndexes) + " of each");
  }
}

uint32_t FabricLayout::add_switch(std::string name, SwitchRole role, uint32_t role_index,
                                  uint32_t ports, uint32_t down_ports) {
  SwitchInfo info;
  info.name = std::move(name);
  info.role = role;
  info.role_index = role_index;
  info.first_port = static_cast<uint32_t>(switch_ports_.size());
  info.ports = ports;
  info.down_ports = down_ports;
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
  cable.shaper = exception ? exception->shaper : config.shaper;
  SwitchPortInfo& port = switch_ports_[switch_port];
  port.cable = static_cast<uint32_t>(cables_.size());
  port.peer = cable.lower;
  port.name = switches_[port.switch_index].name + "/" + spec.name;
  cables_.push_back(std::move(cable));
}

void FabricLayout::add_inner_cable(const config::FabricConfig& config, uint32_t lower,
                                   uint32_t upper, uint64_t speed_bps, uint32_t link,
                                   uint32_t links) {
  CableInfo cable;
  cable.lower = {Endpoint::Kind::kSwitchPort, lower};
  cable.upper = {Endpoint::Kind::kSwitchPort, upper};
  cable.speed_bps = speed_bps;
  cable.propagation_ns = config.propagation_delay_ns;
  cable.drop_probability = config.drop_probability;
  cable.ecn = config.ecn;
  cable.pfc = config.pfc;
  cable.shaper = config.shaper;
  std::string suffix;
  if (links > 1) suffix.append(":").append(std::to_string(link));
  const auto index = static_cast<uint32_t>(cables_.size());
  SwitchPortInfo& down = switch_ports_[lower];
  SwitchPortInfo& up = switch_ports_[upper];
  down.cable = index;
  down.peer = cable.upper;
  down.name = switches_[down.switch_index].name + "/" + switches_[up.switch_index].name + suffix;
  up.cable = index;
  up.peer = cable.lower;
  up.name = switches_[up.switch_index].name + "/" + switches_[down.switch_index].name + suffix;
  cables_.push_back(std::move(cable));
}

void FabricLayout::build_single_switch(const config::FabricConfig& config,
                                       std::span<const TwinPortSpec> ports) {
  const auto hosts = static_cast<uint32_t>(ports.size());
  add_switch("switch", SwitchRole::kSingle, 0, hosts, hosts);
  for (uint32_t host = 0; host < hosts; ++host) add_host_cable(config, ports[host], host, host);
}

void FabricLayout::check_clos(const config::FabricConfig& config) const {
  const config::LeafSpineConfig& ls = config.leaf_spine;
  if (ls.ports_per_leaf == 0) {
    fail(
        "fabric.leaf_spine.ports_per_leaf is 0: a leaf-spine fabric needs at least one port "
        "per leaf");
  }
  if (ls.spines == 0) fail("fabric.leaf_spine.spines is 0: a leaf-spine fabric needs a spine");
  if (ls.links == 0) fail("fabric.leaf_spine.links is 0: a leaf needs a link to each spine");
  const config::RailsConfig& rails = config.rails;
  if (rails.planes == 0) fail("fabric.rails.planes is 0: a fabric needs a plane");
  if (rails.planes > 1 && rails.nics_per_host == 0) {
    fail("fabric.rails.planes is " + std::to_string(rails.planes) +
         " without fabric.rails.nics_per_host: planes are made of rails");
  }
  if (rails.nics_per_host > 0 && rails.nics_per_host % rails.planes != 0) {
    fail("fabric.rails.nics_per_host (" + std::to_string(rails.nics_per_host) +
         ") is not a multiple of fabric.rails.planes (" + std::to_string(rails.planes) +
         "): every plane takes as many rails");
  }
  if (config.topology != config::Topology::kThreeTier) return;
  const config::ThreeTierConfig& tt = config.three_tier;
  if (tt.leaves_per_pod == 0) fail("fabric.three_tier.leaves_per_pod is 0: a pod needs a leaf");
  if (tt.super_spines == 0) {
    fail("fabric.three_tier.super_spines is 0: a three-tier fabric needs super-spines");
  }
  if (tt.links == 0) fail("fabric.three_tier.links is 0: a spine needs a link to each super-spine");
  if (rails.nics_per_host > 0 && tt.leaves_per_pod % rails.nics_per_host != 0) {
    fail("fabric.three_tier.leaves_per_pod (" + std::to_string(tt.leaves_per_pod) +
         ") is not a multiple of fabric.rails.nics_per_host (" +
         std::to_string(rails.nics_per_host) + "): a pod holds whole groups of rail leaves");
  }
}

void FabricLayout::place_hosts(const config::FabricConfig& config, uint32_t hosts,
                               uint32_t leaves_per_pod) {
  const uint32_t per_leaf = config.leaf_spine.ports_per_leaf;
  const uint32_t nics = config.rails.nics_per_host;
  const auto planes = static_cast<uint32_t>(planes_);
  for (uint32_t leaf = 0; leaf < leaves_; ++leaf) {
    LeafPlace place;
    place.pod = leaf / leaves_per_pod;
    const uint32_t in_pod = leaf % leaves_per_pod;
    // Rails: a pod holds whole groups of nics rail leaves, and nics is a multiple of the planes,
    // so a leaf's rail modulo the planes is its place in the pod modulo the planes.
    place.plane = nics == 0 ? 0 : (leaf % nics) % planes;
    place.slot = in_pod / planes;
    leaf_places_.push_back(place);
  }
  for (uint32_t host = 0; host < hosts; ++host) {
    HostPlace place;
    if (nics == 0) {
      place.leaf = host / per_leaf;
      place.leaf_port = host % per_leaf;
    } else {
      const uint32_t server = host / nics;
      place.leaf = server / per_leaf * nics + host % nics;
      place.leaf_port = server % per_leaf;
    }
    place.pod = leaf_places_[place.leaf].pod;
    place.plane = leaf_places_[place.leaf].plane;
    place.slot = leaf_places_[place.leaf].slot;
    host_places_.push_back(place);
  }
}

void FabricLayout::build_clos(const config::FabricConfig& config,
                              std::span<const TwinPortSpec> ports) {
  check_clos(config);
  const config::LeafSpineConfig& ls = config.leaf_spine;
  const bool three_tier = config.topology == config::Topology::kThreeTier;
  const auto hosts = static_cast<uint32_t>(ports.size());
  leaves_ = config::leaves_for(config, hosts);
  planes_ = config.rails.planes;
  // Consecutive leaves form pods of leaves_per_pod (the last may hold fewer); one pod of every
  // leaf on two tiers.
  const auto leaves_per_pod =
      three_tier ? config.three_tier.leaves_per_pod : static_cast<uint32_t>(leaves_);
  pods_ = (leaves_ + leaves_per_pod - 1) / leaves_per_pod;
  spines_ = ls.spines;
  spines_total_ = spines_ * pods_ * planes_;
  links_ = ls.links;
  leaf_uplinks_ = config::leaf_uplinks(config);
  if (three_tier) {
    supers_per_group_ = config.three_tier.super_spines;
    super_links_ = config.three_tier.links;
    spine_uplinks_ = config::spine_uplinks(config);
  }
  place_hosts(config, hosts, leaves_per_pod);

  uint64_t fastest = 0;
  for (const TwinPortSpec& port : ports) fastest = std::max(fastest, port.speed_bps);
  uplink_speed_bps_ = config::leaf_uplink_speed_bps(config, fastest);
  if (uplink_speed_bps_ == 0) {
    fail(
        "cannot derive the leaf-spine uplink speed: fabric.leaf_spine.oversubscription must be "
        "above 0 (got " +
        std::to_string(ls.oversubscription) + ")");
  }
  if (three_tier) {
    spine_uplink_speed_bps_ =
        config::spine_uplink_speed_bps(config, static_cast<uint32_t>(leaves_), uplink_speed_bps_);
    if (spine_uplink_speed_bps_ == 0) {
      fail(
          "cannot derive the spine-super-spine uplink speed: fabric.three_tier.oversubscription "
          "must be above 0 (got " +
          std::to_string(config.three_tier.oversubscription) + ")");
    }
  }

  // Leaves, with their hosts first.
  std::vector<uint32_t> leaf_hosts(leaves_, 0);
  for (const HostPlace& place : host_places_) ++leaf_hosts[place.leaf];
  for (uint32_t leaf = 0; leaf < leaves_; ++leaf) {
    const uint32_t index = add_switch("leaf" + std::to_string(leaf), SwitchRole::kLeaf, leaf,
                                      leaf_hosts[leaf] + leaf_uplinks_, leaf_hosts[leaf]);
    switches_[index].pod = leaf_places_[leaf].pod;
    switches_[index].plane = leaf_places_[leaf].plane;
    switches_[index].ecmp_seed = ls.ecmp_seed;
  }
  // Spines: plane by plane, pod by pod; each has a port per link to each of its pod's leaves of
  // its plane, then its uplinks.
  std::vector<uint32_t> slots(pods_ * planes_, 0);  // leaves per (plane, pod)
  for (const LeafPlace& place : leaf_places_) ++slots[place.plane * pods_ + place.pod];
  // Every spine and super-spine hashes with its own seed, so that it does not repeat the choice
  // the switch below it made (polarization).
  const auto own_seed = [&](uint64_t n) {
    return mix64(ls.ecmp_seed ^ (n + 1) * 0x9E3779B97F4A7C15ull);
  };
  for (uint32_t plane = 0; plane < planes_; ++plane) {
    for (uint32_t pod = 0; pod < pods_; ++pod) {
      for (uint32_t s = 0; s < spines_; ++s) {
        const auto number = static_cast<uint32_t>((plane * pods_ + pod) * spines_ + s);
        const uint32_t down = slots[plane * pods_ + pod] * links_;
        const uint32_t index = add_switch("spine" + std::to_string(number), SwitchRole::kSpine,
                                          number, down + spine_uplinks_, down);
        switches_[index].pod = pod;
        switches_[index].plane = plane;
        switches_[index].ecmp_seed = own_seed(number);
      }
    }
  }
  // Super-spines: plane by plane, spine group by group.
  for (uint32_t plane = 0; plane < planes_ && three_tier; ++plane) {
    for (uint32_t group = 0; group < spines_; ++group) {
      for (uint32_t g = 0; g < supers_per_group_; ++g) {
        const auto number =
            static_cast<uint32_t>((plane * spines_ + group) * supers_per_group_ + g);
        const auto down = static_cast<uint32_t>(pods_) * super_links_;
        const uint32_t index = add_switch("super" + std::to_string(number), SwitchRole::kSuperSpine,
                                          number, down, down);
        switches_[index].plane = plane;
        switches_[index].ecmp_seed = own_seed(spines_total_ + number);
      }
    }
  }

  for (uint32_t host = 0; host < hosts; ++host) {
    add_host_cable(config, ports[host], host, host_switch_port(host));
  }
  for (uint32_t leaf = 0; leaf < leaves_; ++leaf) {
    const LeafPlace& place = leaf_places_[leaf];
    for (uint32_t s = 0; s < spines_; ++s) {
      const size_t spine = (place.plane * pods_ + place.pod) * spines_ + s;
      for (uint32_t link = 0; link < links_; ++link) {
        add_inner_cable(config, uplink_port(leaf, s, link), spine_port(spine, leaf, link),
                        uplink_speed_bps_, link, links_);
      }
    }
  }
  for (size_t spine = 0; spine < spines_total_ && three_tier; ++spine) {
    const SwitchInfo& info = switches_[spine_switch(spine)];
    const size_t group = spine % spines_;
    for (uint32_t g = 0; g < supers_per_group_; ++g) {
      const size_t super = (info.plane * spines_ + group) * supers_per_group_ + g;
      for (uint32_t link = 0; link < super_links_; ++link) {
        add_inner_cable(config, spine_uplink_port(spine, g, link),
                        super_spine_port(super, info.pod, link), spine_uplink_speed_bps_, link,
                        super_links_);
      }
    }
  }
}

std::optional<size_t> FabricLayout::host_named(std::string_view name) const {
  for (size_t host = 0; host < host_names_.size(); ++host) {
    if (host_names_[host] == name) return host;
  }
  return std::nullopt;
}

std::optional<size_t> FabricLayout::cable_named(std::string_view name) const {
  if (const std::optional<size_t> host = host_named(name)) {
    return switch_ports_[host_switch_port(*host)].cable;
  }
  for (const SwitchPortInfo& port : switch_ports_) {
    if (port.name == name) return port.cable;
  }
  return std::nullopt;
}

uint32_t FabricLayout::host_switch_port(size_t host) const {
  if (host >= hosts()) {
    throw std::out_of_range("fabric twin: no host port " + std::to_string(host));
  }
  if (switches_.front().role == SwitchRole::kSingle) return static_cast<uint32_t>(host);
  const HostPlace& place = host_places_[host];
  return switches_[place.leaf].first_port + place.leaf_port;
}

uint32_t FabricLayout::switches_between(size_t from, size_t to) const {
  if (from >= hosts() || to >= hosts()) {
    throw std::out_of_range("fabric twin: no host port " + std::to_string(std::max(from, to)));
  }
  if (switches_.front().role == SwitchRole::kSingle) return 1;
  const HostPlace& a = host_places_[from];
  const HostPlace& b = host_places_[to];
  if (a.plane != b.plane) return 0;
  if (a.leaf == b.leaf) return 1;
  return a.pod == b.pod ? 3 : 5;
}

uint32_t FabricLayout::plane_of(size_t host) const {
  if (host >= hosts()) {
    throw std::out_of_range("fabric twin: no host port " + std::to_string(host));
  }
  return host_places_.empty() ? 0 : host_places_[host].plane;
}

uint32_t FabricLayout::uplink_port(size_t leaf, size_t spine, size_t link) const {
  if (leaf >= leaves_ || spine >= spines_ || link >= links_) {
    throw std::out_of_range("fabric twin: no uplink " + std::to_string(link) + " from leaf " +
                            std::to_string(leaf) + " to spine " + std::to_string(spine));
  }
  const SwitchInfo& info = switches_[leaf];
  return info.first_port + info.down_ports + static_cast<uint32_t>(spine * links_ + link);
}

uint32_t FabricLayout::spine_port(size_t spine, size_t leaf, size_t link) const {
  const bool exists = leaf < leaves_ && spine < spines_total_ && link < links_;
  const SwitchInfo* info = exists ? &switches_[spine_switch(spine)] : nullptr;
  if (info == nullptr || info->pod != leaf_places_[leaf].pod ||
      info->plane != leaf_places_[leaf].plane) {
    throw std::out_of_range("fabric twin: no port " + std::to_string(link) + " on spine " +
                            std::to_string(spine) + " toward leaf " + std::to_string(leaf));
  }
  return info->first_port + leaf_places_[leaf].slot * links_ + static_cast<uint32_t>(link);
}

uint32_t FabricLayout::uplink_cable(size_t leaf, size_t spine, size_t link) const {
  return switch_ports_[uplink_port(leaf, spine, link)].cable;
}

uint32_t FabricLayout::spine_uplink_port(size_t spine, size_t super, size_t link) const {
  if (spine >= spines_total_ || super >= supers_per_group_ || link >= super_links_) {
    throw std::out_of_range("fabric twin: no uplink " + std::to_string(link) + " from spine " +
                            std::to_string(spine) + " to super-spine " + std::to_string(super) +
                            " of its group");
  }
  const SwitchInfo& info = switches_[spine_switch(spine)];
  return info.first_port + info.down_ports + static_cast<uint32_t>(super * super_links_ + link);
}

uint32_t FabricLayout::super_spine_port(size_t super, size_t pod, size_t link) const {
  if (super >= spines_ * planes_ * supers_per_group_ || pod >= pods_ || link >= super_links_) {
    throw std::out_of_range("fabric twin: no port " + std::to_string(link) + " on super-spine " +
                            std::to_string(super) + " toward pod " + std::to_string(pod));
  }
  return switches_[super_spine_switch(super)].first_port +
         static_cast<uint32_t>(pod * super_links_ + link);
}

}  // namespace etwire::twin
