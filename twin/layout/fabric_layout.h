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
//                  uplink (s, k) is its port down_ports + s*K + k; spine s has K ports per leaf,
//                  (l, k) at l*K + k. Cables: hosts 0..H-1, then link k of (l, s) is cable
//                  H + (l*S + s)*K + k. With K > 1 a link's ports are named "leaf0/spine1:k".
//   three-tier:    the same leaves, in pods of leaves_per_pod; each pod has S spines of its own
//                  (spine (pod q, s) is "spine<q*S+s>", its leaves' ports first, (slot, k) at
//                  slot*K + k for the leaf's place in the pod), then G*K2 uplinks: link k2 to
//                  super-spine g of spine s's group at down_ports + g*K2 + k2. Super-spine (s, g)
//                  is "super<s*G+g>", with K2 ports per pod: (q, k2) at q*K2 + k2. Their cables
//                  follow the leaf-spine ones, spine by spine, then g, then k2.
//   rails:         on either, host h is NIC h % N of server h / N (N = nics_per_host); group
//                  server / ports_per_leaf of servers has N rail leaves, NIC i on leaf group*N + i,
//                  at the server's place in the group. With planes, rail leaf l is in plane (l % N)
//                  % planes; every plane has its own spines and super-spines (plane p's spines come
//                  after plane p-1's, and so do its super-spines), and a leaf's slot counts only
//                  its pod's leaves of its plane.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/fabric_config.h"
#include "nic/packet.h"
#include "twin/layout/ecmp_hash.h"
#include "twin/link.h"

namespace etwire::twin {

// A NIC port the twin attaches: its name (matched against fabric.port_overrides) and speed.
struct TwinPortSpec {
  std::string name;
  uint64_t speed_bps = 0;
};

enum class SwitchRole : uint8_t { kSingle, kLeaf, kSpine, kSuperSpine };

// Returned by egress_port when a switch has no way to the destination (another plane, or every
// path to it known down).
inline constexpr uint32_t kNoRoute = 0xFFFFFFFF;

// The equal links a switch may forward a packet on, and the one ECMP picks (count 0: no route).
struct EgressLinks {
  const uint32_t* listed = nullptr;  // the ports routing left, once some link is known down
  uint32_t first = 0;                // else the ports are first .. first + count - 1
  uint32_t count = 0;
  uint32_t hashed = 0;  // ECMP's pick, 0 .. count - 1
  uint32_t port(uint32_t i) const { return listed != nullptr ? listed[i] : first + i; }
};

struct SwitchInfo {
  std::string name;
  SwitchRole role = SwitchRole::kSingle;
  uint32_t role_index = 0;  // leaf, spine or super-spine number
  uint32_t first_port = 0;  // global index of its port 0
  uint32_t ports = 0;
  // Its first ports face down (hosts for a single switch or a leaf, leaves for a spine, spines
  // for a super-spine), the rest up.
  uint32_t down_ports = 0;
  uint32_t pod = 0;    // leaves and spines
  uint32_t plane = 0;  // leaves, spines and super-spines
  uint64_t ecmp_seed = 0;
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
  config::Shaper shaper;  // on the egress of the switch port(s) on this cable
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

  // The cable a name stands for: a switch port's (either end: "leaf0/spine1", "spine0/super1:1")
  // or a host's (its cable to the fabric); and the host a name stands for.
  std::optional<size_t> cable_named(std::string_view name) const;
  std::optional<size_t> host_named(std::string_view name) const;
  // The switch port host `host` is cabled to.
  uint32_t host_switch_port(size_t host) const;
  // The switches a packet from host `from` to host `to` crosses: 1 on one switch or leaf, 3
  // between leaves of a pod (leaf, spine, leaf), 5 between pods; 0 between planes (no path).
  uint32_t switches_between(size_t from, size_t to) const;
  // Which plane a host's leaf is in (0 without planes).
  uint32_t plane_of(size_t host) const;
  // Link `link` between a leaf and spine `spine` of its pod and plane (0..spines()-1): the leaf's
  // port, the spine's (spine_port takes the spine's global number, as in its name), their cable.
  uint32_t uplink_port(size_t leaf, size_t spine, size_t link = 0) const;
  uint32_t spine_port(size_t spine, size_t leaf, size_t link = 0) const;
  uint32_t uplink_cable(size_t leaf, size_t spine, size_t link = 0) const;
  // Three-tier: link `link` between spine `spine` (global) and super-spine `super` of its group
  // (0..super_spines()-1), the spine's port; and the super-spine's (global `super`) toward pod
  // `pod`.
  uint32_t spine_uplink_port(size_t spine, size_t super, size_t link = 0) const;
  uint32_t super_spine_port(size_t super, size_t pod, size_t link = 0) const;
  // The global switch number of leaf `leaf`, spine `spine`, super-spine `super`.
  uint32_t leaf_switch(size_t leaf) const { return static_cast<uint32_t>(leaf); }
  uint32_t spine_switch(size_t spine) const { return static_cast<uint32_t>(leaves_ + spine); }
  uint32_t super_spine_switch(size_t super) const {
    return static_cast<uint32_t>(leaves_ + spines_total_ + super);
  }
  size_t leaves() const { return leaves_; }
  size_t spines() const { return spines_; }  // per pod and plane
  size_t links() const { return links_; }    // parallel links per leaf-spine pair
  size_t pods() const { return pods_; }
  size_t planes() const { return planes_; }
  size_t super_spines() const { return supers_per_group_; }  // in each spine's group
  size_t super_links() const { return super_links_; }        // per spine-super-spine pair
  // The resolved speed of every leaf-spine link (0 for a single switch), and of every
  // spine-super-spine link (0 unless three-tier).
  uint64_t uplink_speed_bps() const { return uplink_speed_bps_; }
  uint64_t spine_uplink_speed_bps() const { return spine_uplink_speed_bps_; }

  // The equal links switch `switch_index` may forward `packet` on: down toward its destination
  // host when the destination is below it (the links to the destination's leaf or pod), else
  // its uplinks; with the one its ECMP hash picks. Inline and division-free: it runs once per
  // packet per switch.
  EgressLinks egress_links(uint32_t switch_index, const nic::Packet& packet) const {
    const SwitchInfo& info = switches_[switch_index];
    if (info.role == SwitchRole::kSingle) return one_link(packet.dst_port);
    const HostPlace& place = host_places_[packet.dst_port];
    if (rerouted_)
      return rerouted_egress_links(switch_index, info, place.leaf, place.leaf_port, packet);
    if (place.plane != info.plane) return EgressLinks{};
    switch (info.role) {
      case SwitchRole::kLeaf:
        if (place.leaf == info.role_index) return one_link(info.first_port + place.leaf_port);
        return equal_links(packet, info, info.first_port + info.down_ports, leaf_uplinks_);
      case SwitchRole::kSpine:
        if (place.pod == info.pod) {
          return equal_links(packet, info, info.first_port + place.slot * links_, links_);
        }
        return equal_links(packet, info, info.first_port + info.down_ports, spine_uplinks_);
      case SwitchRole::kSuperSpine:
        return equal_links(packet, info, info.first_port + place.pod * super_links_, super_links_);
      case SwitchRole::kSingle:
        break;
    }
    return EgressLinks{};
  }
  // The global switch port through which switch `switch_index` forwards `packet` by its ECMP
  // hash, or kNoRoute.
  uint32_t egress_port(uint32_t switch_index, const nic::Packet& packet) const {
    const EgressLinks links = egress_links(switch_index, packet);
    return links.count == 0 ? kNoRoute : links.port(links.hashed);
  }

  // Routing around links known to be down (the fabric's routing has converged on their loss):
  // every switch then picks, for each destination leaf, only among its usual links those that
  // are up and lead to a switch that still reaches that leaf (as a routing protocol withdraws a
  // route). Picks among the rest by the same hash (not resilient hashing: other flows may move
  // too). A leaf-spine or three-tier layout only; the cable's switch ends leave their groups.
  void set_cable_known_down(size_t cable, bool down);
  bool rerouted() const { return rerouted_; }

 private:
  // egress_links once some link is known down: the routes recompute_routes left.
  EgressLinks rerouted_egress_links(uint32_t switch_index, const SwitchInfo& info, uint32_t leaf,
                                    uint32_t leaf_port, const nic::Packet& packet) const {
    if (info.role == SwitchRole::kLeaf && leaf == info.role_index) {
      return one_link(info.first_port + leaf_port);
    }
    const Route& route = routes_[switch_index * leaves_ + leaf];
    if (route.count == 0) return EgressLinks{};
    return EgressLinks{&route_ports_[route.first], 0, route.count,
                       choose(packet, info, route.count)};
  }
  static EgressLinks one_link(uint32_t port) { return EgressLinks{nullptr, port, 1, 0}; }
  EgressLinks equal_links(const nic::Packet& packet, const SwitchInfo& info, uint32_t first,
                          uint32_t count) const {
    return EgressLinks{nullptr, first, count, choose(packet, info, count)};
  }
  void recompute_routes();
  // The ports switch `index` would pick among for traffic to leaf `leaf`, known-down or not.
  std::pair<uint32_t, uint32_t> candidates(uint32_t index, uint32_t leaf) const;

  // One of `n` equal links by the packet's ECMP hash with the switch's seed. Multiply-shift maps
  // the hash's top 32 bits evenly onto 0..n-1 without a division.
  uint32_t choose(const nic::Packet& packet, const SwitchInfo& info, uint32_t n) const {
    if (n == 1) return 0;
    return static_cast<uint32_t>(((ecmp_hash(packet, ecmp_, info.ecmp_seed) >> 32) * n) >> 32);
  }
  void build_single_switch(const config::FabricConfig& config, std::span<const TwinPortSpec> ports);
  void build_clos(const config::FabricConfig& config, std::span<const TwinPortSpec> ports);
  void check_clos(const config::FabricConfig& config) const;
  void place_hosts(const config::FabricConfig& config, uint32_t hosts, uint32_t leaves_per_pod);
  uint32_t add_switch(std::string name, SwitchRole role, uint32_t role_index, uint32_t ports,
                      uint32_t down_ports);
  void add_host_cable(const config::FabricConfig& config, const TwinPortSpec& spec, uint32_t host,
                      uint32_t switch_port);
  void add_inner_cable(const config::FabricConfig& config, uint32_t lower, uint32_t upper,
                       uint64_t speed_bps, uint32_t link, uint32_t links);

  // Each host's leaf, its port on that leaf, and where the leaf is: its pod, its plane, and its
  // slot (its place among its pod's leaves of its plane, which numbers the spines' ports).
  struct HostPlace {
    uint32_t leaf = 0;
    uint32_t leaf_port = 0;
    uint32_t pod = 0;
    uint32_t plane = 0;
    uint32_t slot = 0;
  };
  struct LeafPlace {
    uint32_t pod = 0;
    uint32_t plane = 0;
    uint32_t slot = 0;
  };

  std::vector<std::string> host_names_;
  std::vector<HostPlace> host_places_;
  std::vector<LeafPlace> leaf_places_;
  std::vector<SwitchInfo> switches_;
  std::vector<SwitchPortInfo> switch_ports_;
  std::vector<CableInfo> cables_;
  size_t leaves_ = 0;
  size_t spines_ = 0;        // per pod and plane
  size_t spines_total_ = 0;  // in the fabric
  size_t pods_ = 1;
  size_t planes_ = 1;
  uint32_t links_ = 1;
  uint32_t leaf_uplinks_ = 0;      // per leaf: spines x links
  uint32_t supers_per_group_ = 0;  // 0 unless three-tier
  uint32_t super_links_ = 1;
  uint32_t spine_uplinks_ = 0;  // per spine: super-spines of its group x links
  uint64_t uplink_speed_bps_ = 0;
  uint64_t spine_uplink_speed_bps_ = 0;
  config::EcmpHash ecmp_ = config::EcmpHash::kUdpSourcePort;

  // Rerouting (set_cable_known_down): per switch port, whether its link is known down; per
  // switch and destination leaf, the ports it may pick (route_ports_[first, first + count)).
  struct Route {
    uint32_t first = 0;
    uint32_t count = 0;
  };
  bool rerouted_ = false;
  std::vector<uint8_t> known_down_;
  std::vector<Route> routes_;
  std::vector<uint32_t> route_ports_;
};

}  // namespace etwire::twin
