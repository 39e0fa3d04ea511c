// The shape of the twin's network, built once from the configuration: which switches exist, which
// ports each has, what every cable connects at what speed and delay, and where a switch sends a
// packet. Indexes, not pointers: hosts are 0..H-1 (the NIC ports, Packet::src_port/dst_port),
// switch ports are numbered globally across switches, and cable c is the two links 2c (from its
// lower end: host to switch, leaf to spine) and 2c+1 (back).
//
//   single-switch: switch 0 "switch", port h faces host h; cable h is host h's.
//   leaf-spine:    leaves 0..L-1 ("leaf0"...) then spines ("spine0"...). Leaf l holds hosts
//                  l*P .. l*P+P-1 (P = ports_per_leaf; the last leaf may hold fewer) on its first
//                  ports, then K uplinks per spine (K = links, parallel links per leaf-spine pair):
//                  uplink (s, k) is its port host_ports + s*K + k; spine s has K ports per leaf,
//                  (l, k) at l*K + k. Cables: hosts 0..H-1, then link k of (l, s) is cable
//                  H + (l*S + s)*K + k. With K > 1 a link's ports are named "leaf0/spine1:k".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "config/fabric_config.h"
#include "nic/loopback/ecmp_hash.h"
#include "nic/loopback/link.h"
#include "nic/packet.h"

namespace etwire::nic::loopback {

// A NIC port the twin attaches: its name (matched against fabric.port_overrides) and speed.
struct TwinPortSpec {
  std::string name;
  uint64_t speed_bps = 0;
};

enum class SwitchRole : uint8_t { kSingle, kLeaf, kSpine };

struct SwitchInfo {
  std::string name;
  SwitchRole role = SwitchRole::kSingle;
  uint32_t role_index = 0;  // leaf or spine number
  uint32_t first_port = 0;  // global index of its port 0
  uint32_t ports = 0;
  uint32_t host_ports = 0;  // its first ports face hosts (single switch, leaves)
};

struct SwitchPortInfo {
  std::string name;  // "<switch>/<peer>": "leaf0/nic3", "leaf0/spine1", "spine1/leaf0"
  uint32_t switch_index = 0;
  uint32_t local_port = 0;
  uint32_t cable = 0;
  Endpoint peer;  // what the other end of its cable is
};

struct CableInfo {
  Endpoint lower;  // a host, or a leaf's uplink port
  Endpoint upper;  // a switch port
  uint64_t speed_bps = 0;
  uint64_t propagation_ns = 0;
  double drop_probability = 0;
  // Marking and PFC of the switch port(s) on this cable: a host cable's port override, else the
  // fabric-wide settings.
  config::EcnMarking ecn;
  config::PfcConfig pfc;
};

class FabricLayout {
 public:
  // Throws std::invalid_argument when the topology cannot be built.
  FabricLayout(const config::FabricConfig& config, std::span<const TwinPortSpec> ports);

  size_t hosts() const { return host_names_.size(); }
  const std::string& host_name(size_t host) const { return host_names_.at(host); }
  size_t switches() const { return switches_.size(); }
  const SwitchInfo& switch_info(size_t index) const { return switches_.at(index); }
  size_t switch_ports() const { return switch_ports_.size(); }
  const SwitchPortInfo& switch_port(size_t index) const { return switch_ports_.at(index); }
  size_t cables() const { return cables_.size(); }
  const CableInfo& cable(size_t index) const { return cables_.at(index); }

  // The switch port host `host` is cabled to.
  uint32_t host_switch_port(size_t host) const;
  // The switches a packet from host `from` to host `to` crosses: 1 on one switch or leaf, 3
  // between leaves (leaf, spine, leaf).
  uint32_t switches_between(size_t from, size_t to) const;
  // Leaf-spine: link `link` of a leaf and a spine: the leaf's port, the spine's, their cable.
  uint32_t uplink_port(size_t leaf, size_t spine, size_t link = 0) const;
  uint32_t spine_port(size_t spine, size_t leaf, size_t link = 0) const;
  uint32_t uplink_cable(size_t leaf, size_t spine, size_t link = 0) const;
  size_t leaves() const { return leaves_; }
  size_t spines() const { return spines_; }
  size_t links() const { return links_; }  // parallel links per leaf-spine pair
  // The resolved speed of every leaf-spine link (0 for a single switch).
  uint64_t uplink_speed_bps() const { return uplink_speed_bps_; }

  // The global switch port through which switch `switch_index` forwards `packet`: toward its
  // destination host; from a leaf to another leaf's host, up the uplink (spine and link) its ECMP
  // hash picks; from a spine, down the link to the destination's leaf its hash picks.
  // Inline and division-free: it runs once per packet per switch.
  uint32_t egress_port(uint32_t switch_index, const Packet& packet) const {
    const SwitchInfo& info = switches_[switch_index];
    if (info.role == SwitchRole::kSingle) return packet.dst_port;
    const HostPlace& place = host_places_[packet.dst_port];
    if (info.role == SwitchRole::kSpine) {
      const uint32_t first = info.first_port + place.leaf * links_;
      if (links_ == 1) return first;
      // Its own seed, so that a spine does not repeat the choice its leaf made (polarization).
      return first + pick(ecmp_hash(packet, ecmp_, spine_seeds_[info.role_index]), links_);
    }
    if (place.leaf == info.role_index) return info.first_port + place.leaf_port;
    return info.first_port + info.host_ports + pick(ecmp_hash(packet, ecmp_, ecmp_seed_), uplinks_);
  }

 private:
  // Multiply-shift maps a hash's top 32 bits evenly onto 0..n-1 without a division.
  static uint32_t pick(uint64_t hash, uint32_t n) {
    return static_cast<uint32_t>(((hash >> 32) * n) >> 32);
  }
  void build_single_switch(const config::FabricConfig& config, std::span<const TwinPortSpec> ports);
  void build_leaf_spine(const config::FabricConfig& config, std::span<const TwinPortSpec> ports);
  uint32_t add_switch(std::string name, SwitchRole role, uint32_t role_index, uint32_t ports,
                      uint32_t host_ports);
  void add_host_cable(const config::FabricConfig& config, const TwinPortSpec& spec, uint32_t host,
                      uint32_t switch_port);

  // Leaf-spine: each host's leaf and its port on that leaf.
  struct HostPlace {
    uint32_t leaf = 0;
    uint32_t leaf_port = 0;
  };

  std::vector<std::string> host_names_;
  std::vector<HostPlace> host_places_;
  std::vector<SwitchInfo> switches_;
  std::vector<SwitchPortInfo> switch_ports_;
  std::vector<CableInfo> cables_;
  uint32_t ports_per_leaf_ = 0;
  size_t leaves_ = 0;
  size_t spines_ = 0;
  uint32_t links_ = 1;
  uint32_t uplinks_ = 0;  // per leaf: spines x links
  uint64_t uplink_speed_bps_ = 0;
  config::EcmpHash ecmp_ = config::EcmpHash::kUdpSourcePort;
  uint64_t ecmp_seed_ = 0;
  std::vector<uint64_t> spine_seeds_;
};

}  // namespace etwire::nic::loopback
