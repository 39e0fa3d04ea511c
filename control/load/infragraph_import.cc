#include "control/load/infragraph_import.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "common/bounded_file.h"
#include "common/duration.h"
#include "common/rate.h"
#include "control/load/infragraph_graph.h"
#include "control/load/key_path.h"
#include "control/load/section_parsers.h"
#include "twin/layout/fabric_layout.h"

namespace etwire::control {

namespace {

// A fabric of tens of thousands of nodes and links is a few MiB; the cap keeps an endless stream
// from being read forever.
constexpr uint64_t kMaxInfraGraphFileBytes = uint64_t{64} << 20;

using infragraph::Cable;
using infragraph::End;
using infragraph::Graph;

// The keys of fabric that say what fabric.infragraph says.
constexpr const char* kShapeKeys[] = {"topology", "three_tier", "rails"};
constexpr const char* kLeafSpineShapeKeys[] = {"ports_per_leaf", "spines", "links",
                                               "oversubscription", "uplink_speed"};

// Tiers by how far above the hosts they are.
constexpr const char* kTier[] = {"host", "leaf", "spine", "super-spine"};
constexpr const char* kTiers[] = {"hosts", "leaves", "spines", "super-spines"};

std::string plural(size_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// The graph's topology in the terms of the fabric keys, and its host NICs in port order.
struct Shape {
  config::Topology topology = config::Topology::kSingleSwitch;
  config::LeafSpineConfig leaf_spine;
  config::ThreeTierConfig three_tier;
  config::RailsConfig rails;
  std::optional<uint64_t> latency_ns;
  std::vector<size_t> host_cables;  // port k's cable
  std::vector<const End*> host_ends;
};

// "leafsw.0 (1 link), leafsw.1 (2 links), ... and 3 more"
std::string list_counts(const std::vector<std::pair<std::string, uint32_t>>& items) {
  constexpr size_t kShown = 6;
  std::string text;
  for (size_t i = 0; i < items.size() && i < kShown; ++i) {
    if (i > 0) text += ", ";
    text += fmt::format("{} ({})", items[i].first, plural(items[i].second, "link", "links"));
  }
  if (items.size() > kShown) text += fmt::format(" and {} more", items.size() - kShown);
  return text.empty() ? "nothing" : text;
}

class Recognizer {
 public:
  Recognizer(DocumentContext& doc, const Graph& graph)
      : doc_(doc), g_(graph), cables_of_(graph.nodes.size()), level_(graph.nodes.size(), -1) {
    for (size_t c = 0; c < g_.cables.size(); ++c) {
      cables_of_[g_.cables[c].node_a].push_back(c);
      if (g_.cables[c].node_b != g_.cables[c].node_a) cables_of_[g_.cables[c].node_b].push_back(c);
    }
  }

  std::optional<Shape> recognize() {
    const size_t errors = doc_.diagnostics().error_count();
    const auto failed = [&] { return doc_.diagnostics().error_count() != errors; };
    check_ends();
    if (failed()) return std::nullopt;
    if (!order_hosts()) return std::nullopt;
    assign_tiers();
    if (failed()) return std::nullopt;
    check_links();
    if (failed()) return std::nullopt;
    if (!infer_shape()) return std::nullopt;
    if (!compare_with_layout()) return std::nullopt;
    return std::move(shape_);
  }

 private:
  const Cable& cable(size_t c) const { return g_.cables[c]; }
  uint32_t other(const Cable& c, uint32_t node) const {
    return c.node_a == node ? c.node_b : c.node_a;
  }
  const std::string& name(uint32_t node) const { return g_.nodes[node].name; }

  // Once per edge: one edge expands into many cables, and one message says it.
  void refuse(size_t edge, Problem problem, const std::string& message) {
    if (!refused_edges_.insert(edge).second) return;
    doc_.error(problem, g_.edges[edge], g_.edge_path(edge), message);
  }
  void refuse_graph(Problem problem, const std::string& message) {
    doc_.error(problem, g_.root, g_.path, message);
  }

  void check_ends() {
    for (const Cable& c : g_.cables) {
      if (c.node_a == c.node_b) {
        refuse(c.edge, Problem::kBackend,
               fmt::format("cables {} to {}, two components of one instance ({}): etwire models "
                           "the cables between devices only",
                           c.a.name, c.b.name, name(c.node_a)));
      } else if (g_.nodes[c.node_a].host && g_.nodes[c.node_b].host) {
        refuse(c.edge, Problem::kBackend,
               fmt::format("cables host {} directly to host {}: etwire's hosts meet only through "
                           "switches (a host is an instance whose device holds an xpu or nic "
                           "component)",
                           c.a.name, c.b.name));
      }
    }
  }

  // Every NIC cabled from a host to a switch is a port of the twin, in the graph's order.
  bool order_hosts() {
    std::vector<size_t> cables;
    for (size_t c = 0; c < g_.cables.size(); ++c) {
      if (g_.nodes[cable(c).node_a].host != g_.nodes[cable(c).node_b].host) cables.push_back(c);
    }
    const auto host_end = [&](size_t c) -> const End& {
      return g_.nodes[cable(c).node_a].host ? cable(c).a : cable(c).b;
    };
    std::stable_sort(cables.begin(), cables.end(),
                     [&](size_t x, size_t y) { return host_end(x).order < host_end(y).order; });
    for (const size_t c : cables) {
      shape_.host_cables.push_back(c);
      shape_.host_ends.push_back(&host_end(c));
      const uint32_t host = g_.nodes[cable(c).node_a].host ? cable(c).node_a : cable(c).node_b;
      host_of_.push_back(host);
      leaf_of_.push_back(other(cable(c), host));
    }
    if (cables.empty()) {
      refuse_graph(Problem::kBackend,
                   "no host's NIC is cabled to a switch: etwire takes the instances of devices "
                   "holding an xpu or nic component for hosts, every other instance for a "
                   "switch, and needs hosts cabled to switches");
      return false;
    }
    return true;
  }

  // Leaves are the switches hosts are cabled to; every other switch is as many tiers above them
  // as its shortest path of cables to a leaf.
  void assign_tiers() {
    std::deque<uint32_t> queue;
    for (uint32_t node = 0; node < g_.nodes.size(); ++node) {
      if (g_.nodes[node].host) level_[node] = 0;
    }
    for (const uint32_t leaf : leaf_of_) {
      if (level_[leaf] == 1) continue;
      level_[leaf] = 1;
      queue.push_back(leaf);
    }
    while (!queue.empty()) {
      const uint32_t node = queue.front();
      queue.pop_front();
      for (const size_t c : cables_of_[node]) {
        const uint32_t next = other(cable(c), node);
        if (level_[next] >= 0) continue;
        level_[next] = level_[node] + 1;
        if (level_[next] > 3) {
          refuse(cable(c).edge, Problem::kBackend,
                 fmt::format("{} is a fourth tier of switches, above super-spine {}: etwire "
                             "builds one switch, leaf-spine and three-tier fabrics",
                             name(next), name(node)));
          return;
        }
        queue.push_back(next);
      }
    }
    for (uint32_t node = 0; node < g_.nodes.size(); ++node) {
      if (level_[node] >= 0) continue;
      refuse(cable(cables_of_[node].front()).edge, Problem::kBackend,
             fmt::format("switch {} leads to no host: no cables join it to a switch that hosts "
                         "are cabled to",
                         name(node)));
    }
    for (const Cable& c : g_.cables) {
      const int la = level_[c.node_a];
      const int lb = level_[c.node_b];
      if (la == lb && la > 0) {
        refuse(
            c.edge, Problem::kBackend,
            fmt::format("cables {} {} to {} {} directly ({} to {}): etwire models Clos "
                        "fabrics only, where every link joins a tier to the next",
                        kTier[la], name(c.node_a), kTier[lb], name(c.node_b), c.a.name, c.b.name));
      }
      if (std::max(la, lb) > max_level_) max_level_ = std::max(la, lb);
    }
  }

  // One bandwidth per tier of switch links (a host's link is checked against its port), one
  // latency for every link.
  void check_links() {
    std::map<int, size_t> first_of_tier;
    std::set<size_t> unusable_reported;
    std::optional<size_t> first;
    for (size_t c = 0; c < g_.cables.size(); ++c) {
      const Cable& here = cable(c);
      const infragraph::Link& link = g_.links[here.link];
      if (!link.unusable.empty() && unusable_reported.insert(here.link).second) {
        doc_.error(Problem::kBackend, link.node, link.path, link.unusable);
      }
      const int tier = std::max(level_[here.node_a], level_[here.node_b]);
      const auto [it, inserted] = first_of_tier.emplace(tier, c);
      const infragraph::Link& theirs = g_.links[cable(it->second).link];
      if (tier > 1 && !inserted && theirs.bandwidth_bps != link.bandwidth_bps) {
        refuse(here.edge, Problem::kBackend,
               fmt::format("links of different bandwidths on one tier: this edge cables {} to {} "
                           "by link {} ({}), {} cables {} to {} by link {} ({}); etwire runs "
                           "every link between {} and {} at one speed",
                           kTiers[tier - 1], kTiers[tier], link.name, bandwidth(link),
                           g_.edge_path(cable(it->second).edge), kTiers[tier - 1], kTiers[tier],
                           theirs.name, bandwidth(theirs), kTiers[tier - 1], kTiers[tier]));
      }
      if (!first) {
        first = c;
        continue;
      }
      const infragraph::Link& one = g_.links[cable(*first).link];
      if (one.latency_ns != link.latency_ns) {
        refuse(here.edge, Problem::kBackend,
               fmt::format("links of different latencies: link {} ({}) here, link {} ({}) on {}; "
                           "etwire gives every link one propagation delay",
                           link.name, latency(link), one.name, latency(one),
                           g_.edge_path(cable(*first).edge)));
      }
    }
    shape_.latency_ns = g_.links[cable(*first).link].latency_ns;
    for (int tier = 2; tier <= max_level_; ++tier) {
      tier_bandwidth_[tier] = g_.links[cable(first_of_tier.at(tier)).link].bandwidth_bps;
    }
  }

  static std::string bandwidth(const infragraph::Link& link) {
    return link.bandwidth_bps ? format_rate(*link.bandwidth_bps) : "no bandwidth given";
  }
  static std::string latency(const infragraph::Link& link) {
    return link.latency_ns ? format_duration_ns(*link.latency_ns) : "no latency given";
  }

  std::map<uint32_t, uint32_t> neighbours(uint32_t node, int level) const {
    std::map<uint32_t, uint32_t> counts;
    for (const size_t c : cables_of_[node]) {
      const uint32_t next = other(cable(c), node);
      if (level_[next] == level) ++counts[next];
    }
    return counts;
  }

  size_t first_cable_between(uint32_t a, uint32_t b) const {
    for (const size_t c : cables_of_[a]) {
      if (other(cable(c), a) == b) return c;
    }
    return cables_of_[a].front();
  }

  // Every switch of tier `level` has as many links up as `reference`, as many to each switch
  // above it. Returns the reference's count of switches above and links to each.
  bool check_uplinks(int level, uint32_t reference, const char* key_count, const char* key_links,
                     uint32_t& count, uint32_t& links) {
    const std::map<uint32_t, uint32_t> up = neighbours(reference, level + 1);
    if (up.empty()) {
      refuse(cable(cables_of_[reference].front()).edge, Problem::kBackend,
             fmt::format("{} {} has no link to a {}, and other {} have: etwire cables every {} "
                         "to {}",
                         kTier[level], name(reference), kTier[level + 1], kTiers[level],
                         kTier[level], kTiers[level + 1]));
      return false;
    }
    count = static_cast<uint32_t>(up.size());
    links = up.begin()->second;
    const uint32_t reference_above = up.begin()->first;
    bool ok = true;
    for (uint32_t node = 0; node < g_.nodes.size() && ok; ++node) {
      if (level_[node] != level) continue;
      const std::map<uint32_t, uint32_t> mine = neighbours(node, level + 1);
      if (mine.empty()) {
        refuse(cable(cables_of_[node].front()).edge, Problem::kBackend,
               fmt::format("{} {} has no link to a {}, {} has {}: etwire cables every {} to {}",
                           kTier[level], name(node), kTier[level + 1], name(reference),
                           plural(count, kTier[level + 1], kTiers[level + 1]), kTier[level],
                           kTiers[level + 1]));
        ok = false;
        break;
      }
      if (mine.size() != count) {
        refuse(cable(first_cable_between(node, mine.begin()->first)).edge, Problem::kBackend,
               fmt::format("{} {} is cabled to {}, {} to {}: etwire cables every {} to as many "
                           "({})",
                           kTier[level], name(node),
                           plural(mine.size(), kTier[level + 1], kTiers[level + 1]),
                           name(reference), count, kTier[level], key_count));
        ok = false;
        break;
      }
      for (const auto& [above, n] : mine) {
        if (n == links) continue;
        refuse(
            cable(first_cable_between(node, above)).edge, Problem::kBackend,
            fmt::format("{} has {} to {}, {} {} to {}: etwire gives every {}-{} pair as many "
                        "parallel links ({})",
                        name(node), plural(n, "link", "links"), name(above), name(reference), links,
                        name(reference_above), kTier[level], kTier[level + 1], key_links));
        ok = false;
        break;
      }
    }
    return ok;
  }

  bool within(uint64_t value, uint64_t max, const std::string& what) {
    if (value <= max) return true;
    refuse_graph(Problem::kBackend,
                 fmt::format("{} ({}) is above what etwire builds ({})", what, value, max));
    return false;
  }

  // The fabric keys that would build this graph, from its first leaf (port 0's) and that leaf's
  // first spine; the other switches are checked against them.
  bool infer_shape() {
    std::vector<uint32_t> leaves;
    for (uint32_t node = 0; node < g_.nodes.size(); ++node) {
      if (level_[node] == 1) leaves.push_back(node);
    }
    // Rails: a host's NICs on different leaves.
    std::map<uint32_t, std::vector<size_t>> ports_of_host;
    for (size_t k = 0; k < host_of_.size(); ++k) ports_of_host[host_of_[k]].push_back(k);
    bool rails = false;
    for (const auto& [host, ports] : ports_of_host) {
      for (const size_t k : ports) rails = rails || leaf_of_[k] != leaf_of_[ports.front()];
    }
    uint32_t nics = 0;
    if (rails) {
      nics = static_cast<uint32_t>(ports_of_host[host_of_[0]].size());
      for (const auto& [host, ports] : ports_of_host) {
        if (ports.size() == nics) continue;
        refuse(
            cable(shape_.host_cables[ports.front()]).edge, Problem::kBackend,
            fmt::format("host {} has {} cabled, host {} {}: a host whose NICs go to different "
                        "leaves makes the fabric rail-optimized, and etwire's rails take as "
                        "many NICs from every host (rails.nics_per_host)",
                        name(host), plural(ports.size(), "NIC", "NICs"), name(host_of_[0]), nics));
        return false;
      }
      if (!within(nics, 64, "NICs per host")) return false;
    }

    if (max_level_ == 1) {
      if (leaves.size() == 1) {
        shape_.topology = config::Topology::kSingleSwitch;
        return true;
      }
      refuse_graph(Problem::kBackend,
                   fmt::format("hosts are cabled to {} switches ({}, {}{}) and no switch joins "
                               "them: etwire joins leaves through spines (or holds every host on "
                               "one switch)",
                               leaves.size(), name(leaves[0]), name(leaves[1]),
                               leaves.size() > 2 ? ", ..." : ""));
      return false;
    }

    // Planes: the switches fall apart into networks no switch joins.
    std::vector<uint32_t> root(g_.nodes.size());
    std::iota(root.begin(), root.end(), 0);
    const auto find = [&](uint32_t x) {
      while (root[x] != x) x = root[x] = root[root[x]];
      return x;
    };
    for (const Cable& c : g_.cables) {
      if (level_[c.node_a] > 0 && level_[c.node_b] > 0) root[find(c.node_a)] = find(c.node_b);
    }
    std::vector<uint32_t> networks;  // a leaf of each
    for (const uint32_t leaf : leaves) {
      const bool seen = std::any_of(networks.begin(), networks.end(),
                                    [&](uint32_t l) { return find(l) == find(leaf); });
      if (!seen) networks.push_back(leaf);
    }
    const auto planes = static_cast<uint32_t>(networks.size());
    if (planes > 1 && !rails) {
      refuse_graph(Problem::kBackend,
                   fmt::format("the switches form {} networks that no switch joins (leaf {}'s and "
                               "leaf {}'s): etwire joins every leaf through spines, and keeps "
                               "networks apart only as planes of rails (hosts whose NICs go to "
                               "different leaves)",
                               planes, name(networks[0]), name(networks[1])));
      return false;
    }
    if (rails && nics % planes != 0) {
      refuse_graph(Problem::kBackend,
                   fmt::format("the rails form {} networks that no switch joins, which does not "
                               "divide the {} NICs of each host: etwire puts rail i in plane i "
                               "mod planes (rails.planes)",
                               planes, nics));
      return false;
    }

    const uint32_t first_leaf = leaf_of_[0];
    uint32_t ports = 0;
    for (const uint32_t leaf : leaf_of_) ports += leaf == first_leaf;
    uint32_t spines = 0;
    uint32_t links = 0;
    if (!check_uplinks(1, first_leaf, "leaf_spine.spines", "leaf_spine.links", spines, links)) {
      return false;
    }
    if (!within(ports, 4096,
                fmt::format("{} on leaf {}", rails ? "hosts" : "ports", name(first_leaf))) ||
        !within(spines, 1024, "spines per leaf") ||
        !within(links, 256, "links per leaf-spine pair") || !within(planes, 64, "planes")) {
      return false;
    }
    shape_.topology = config::Topology::kLeafSpine;
    shape_.leaf_spine.ports_per_leaf = ports;
    shape_.leaf_spine.spines = spines;
    shape_.leaf_spine.links = links;
    shape_.leaf_spine.uplink_speed_bps = tier_bandwidth_[2].value_or(0);
    shape_.rails.nics_per_host = nics;
    shape_.rails.planes = planes;
    if (max_level_ == 2) return true;

    const uint32_t first_spine = neighbours(first_leaf, 2).begin()->first;
    const auto pod = static_cast<uint32_t>(neighbours(first_spine, 1).size()) * planes;
    uint32_t supers = 0;
    uint32_t super_links = 0;
    if (!check_uplinks(2, first_spine, "three_tier.super_spines", "three_tier.links", supers,
                       super_links)) {
      return false;
    }
    if (!within(pod, 4096, "leaves per pod") || !within(supers, 1024, "super-spines per spine") ||
        !within(super_links, 256, "links per spine-super-spine pair")) {
      return false;
    }
    shape_.topology = config::Topology::kThreeTier;
    shape_.three_tier.leaves_per_pod = pod;
    shape_.three_tier.super_spines = supers;
    shape_.three_tier.links = super_links;
    shape_.three_tier.uplink_speed_bps = tier_bandwidth_[3].value_or(0);
    return true;
  }

  std::string summary() const {
    const config::LeafSpineConfig& ls = shape_.leaf_spine;
    std::string text =
        fmt::format("{}, {} per leaf, {} per pod, {} per leaf-spine pair",
                    config::topology_name(shape_.topology),
                    plural(ls.ports_per_leaf, shape_.rails.nics_per_host ? "host" : "port",
                           shape_.rails.nics_per_host ? "hosts" : "ports"),
                    plural(ls.spines, "spine", "spines"), plural(ls.links, "link", "links"));
    if (shape_.topology == config::Topology::kThreeTier) {
      const config::ThreeTierConfig& tt = shape_.three_tier;
      text += fmt::format(", pods of {} with {} per spine group, {} per spine-super-spine pair",
                          plural(tt.leaves_per_pod, "leaf", "leaves"),
                          plural(tt.super_spines, "super-spine", "super-spines"),
                          plural(tt.links, "link", "links"));
    }
    if (shape_.rails.nics_per_host > 0) {
      text += fmt::format(", rails of {} per host in {}",
                          plural(shape_.rails.nics_per_host, "NIC", "NICs"),
                          plural(shape_.rails.planes, "plane", "planes"));
    }
    return text;
  }

  config::FabricConfig candidate() const {
    config::FabricConfig fabric;
    fabric.topology = shape_.topology;
    fabric.leaf_spine = shape_.leaf_spine;
    fabric.three_tier = shape_.three_tier;
    fabric.rails = shape_.rails;
    return fabric;
  }

  // Builds etwire's twin from the inferred keys and checks it is the graph: the same leaf for
  // every port, and a spine (super-spine) of the graph for each of the twin's, cabled to the
  // same leaves (spines) by as many links.
  bool compare_with_layout() {
    if (shape_.topology == config::Topology::kSingleSwitch) return true;
    std::vector<twin::TwinPortSpec> specs;
    for (const End* end : shape_.host_ends) specs.push_back({end->name, 100'000'000'000});
    std::optional<twin::FabricLayout> built;
    try {
      built.emplace(candidate(), specs);
    } catch (const std::exception& e) {
      refuse_graph(Problem::kBackend, fmt::format("etwire cannot build the fabric this graph "
                                                  "describes ({}): {}",
                                                  summary(), e.what()));
      return false;
    }
    const twin::FabricLayout& layout = *built;
    std::vector<int64_t> graph_of(layout.switches(), -1);
    std::map<uint32_t, uint32_t> layout_of;
    std::map<uint32_t, size_t> first_port_of;  // graph leaf -> first port on it
    std::vector<size_t> first_port_on(layout.switches(), 0);
    const bool rails = shape_.rails.nics_per_host > 0;
    const std::string rule =
        rails ? fmt::format(
                    "etwire's rails put NIC i of each host on rail leaf i of its group of "
                    "{} (as many as leaf {} holds)",
                    plural(shape_.leaf_spine.ports_per_leaf, "host", "hosts"), name(leaf_of_[0]))
              : fmt::format(
                    "etwire fills leaves in port order, {} to a leaf (as many as leaf {} "
                    "holds)",
                    plural(shape_.leaf_spine.ports_per_leaf, "port", "ports"), name(leaf_of_[0]));
    for (size_t k = 0; k < leaf_of_.size(); ++k) {
      const uint32_t mine = leaf_of_[k];
      const uint32_t theirs = layout.switch_port(layout.host_switch_port(k)).switch_index;
      const size_t edge = cable(shape_.host_cables[k]).edge;
      const auto known = layout_of.find(mine);
      if (known != layout_of.end() && known->second != theirs) {
        const size_t j = first_port_of.at(mine);
        refuse(edge, Problem::kBackend,
               fmt::format("leaf {} holds ports {} ({}) and {} ({}), which etwire puts on "
                           "different leaves: {}",
                           name(mine), j, shape_.host_ends[j]->name, k, shape_.host_ends[k]->name,
                           rule));
        return false;
      }
      if (graph_of[theirs] >= 0 && graph_of[theirs] != mine) {
        const size_t j = first_port_on[theirs];
        refuse(edge, Problem::kBackend,
               fmt::format("ports {} ({}, on leaf {}) and {} ({}, on leaf {}) are on different "
                           "leaves, which etwire puts on one: {}",
                           j, shape_.host_ends[j]->name, name(leaf_of_[j]), k,
                           shape_.host_ends[k]->name, name(mine), rule));
        return false;
      }
      if (known == layout_of.end()) {
        layout_of[mine] = theirs;
        first_port_of[mine] = k;
        graph_of[theirs] = mine;
        first_port_on[theirs] = k;
      }
    }
    // The twin's switch-to-switch cables, by upper switch: lower switch -> links.
    std::map<uint32_t, std::map<uint32_t, uint32_t>> below;
    for (size_t c = 0; c < layout.cables(); ++c) {
      const twin::CableInfo& info = layout.cable(c);
      if (info.lower.is_host()) continue;
      ++below[layout.switch_port(info.upper.index).switch_index]
             [layout.switch_port(info.lower.index).switch_index];
    }
    const twin::SwitchRole roles[] = {twin::SwitchRole::kSpine, twin::SwitchRole::kSuperSpine};
    for (int level = 2; level <= max_level_; ++level) {
      std::map<std::map<uint32_t, uint32_t>, std::deque<uint32_t>> unmatched;
      for (uint32_t s = 0; s < layout.switches(); ++s) {
        if (layout.switch_info(s).role == roles[level - 2]) unmatched[below[s]].push_back(s);
      }
      for (uint32_t node = 0; node < g_.nodes.size(); ++node) {
        if (level_[node] != level) continue;
        std::map<uint32_t, uint32_t> mine;
        std::vector<std::pair<std::string, uint32_t>> shown;
        for (const auto& [lower, n] : neighbours(node, level - 1)) {
          mine[layout_of.at(lower)] = n;
          shown.emplace_back(name(lower), n);
        }
        auto it = unmatched.find(mine);
        if (it == unmatched.end() || it->second.empty()) {
          refuse(
              cable(cables_of_[node].front()).edge, Problem::kBackend,
              fmt::format("{} {} is cabled to {}; no {} of the fabric etwire builds from this "
                          "graph ({}) is cabled so",
                          kTier[level], name(node), list_counts(shown), kTier[level], summary()));
          return false;
        }
        layout_of[node] = it->second.front();
        graph_of[it->second.front()] = node;
        it->second.pop_front();
      }
      for (const auto& [signature, left] : unmatched) {
        if (left.empty()) continue;
        std::vector<std::pair<std::string, uint32_t>> shown;
        for (const auto& [lower, n] : signature) {
          shown.emplace_back(name(static_cast<uint32_t>(graph_of[lower])), n);
        }
        refuse_graph(Problem::kBackend,
                     fmt::format("the fabric etwire builds from this graph ({}) has a {} cabled "
                                 "to {}, which the graph lacks",
                                 summary(), kTier[level], list_counts(shown)));
        return false;
      }
    }
    return true;
  }

  DocumentContext& doc_;
  const Graph& g_;
  std::vector<std::vector<size_t>> cables_of_;  // per node
  std::vector<int> level_;                      // per node: 0 host, 1 leaf, 2 spine, 3 super
  int max_level_ = 0;
  std::vector<uint32_t> host_of_;  // per port: its host node
  std::vector<uint32_t> leaf_of_;  // per port: its leaf node
  std::map<int, std::optional<uint64_t>> tier_bandwidth_;
  std::set<size_t> refused_edges_;
  Shape shape_;
};

// Reports each shape key given beside fabric.infragraph; true when there was one.
bool report_shape_keys(MapReader& fabric) {
  DocumentContext& ctx = fabric.context();
  std::vector<std::pair<std::string, YAML::Node>> given;
  for (const char* key : kShapeKeys) {
    if (fabric.has(key)) given.emplace_back(fabric.key_path(key), fabric.get(key));
  }
  const YAML::Node leaf_spine = fabric.get("leaf_spine");
  if (leaf_spine.IsMap()) {
    for (const char* key : kLeafSpineShapeKeys) {
      const YAML::Node value = leaf_spine[key];
      if (value.IsDefined() && !value.IsNull()) {
        given.emplace_back(child_path(fabric.key_path("leaf_spine"), key), value);
      }
    }
  }
  for (const auto& [path, node] : given) {
    ctx.error(Problem::kInconsistent, node, path,
              "fabric.infragraph describes the topology: give either it or this key, not both "
              "(one source of truth)");
  }
  return !given.empty();
}

// Port k is the graph's k-th host NIC: as many ports, each at its link's bandwidth.
void check_ports(MapReader& fabric, const Graph& graph, const Shape& shape,
                 const std::vector<const config::PortConfig*>& ports) {
  DocumentContext& ctx = fabric.context();
  const YAML::Node where = fabric.get("infragraph");
  const std::string path = fabric.key_path("infragraph");
  const size_t hosts = shape.host_ends.size();
  if (ports.size() != hosts) {
    ctx.error(Problem::kInconsistent, where, path,
              fmt::format("the graph cables {} of its hosts to switches ({} .. {}), and the run "
                          "has {} on the fabric twin: one port per host NIC, in the graph's order",
                          plural(hosts, "NIC", "NICs"), shape.host_ends.front()->name,
                          shape.host_ends.back()->name, plural(ports.size(), "port", "ports")));
    return;
  }
  for (size_t k = 0; k < hosts; ++k) {
    const Cable& cable = graph.cables[shape.host_cables[k]];
    const infragraph::Link& link = graph.links[cable.link];
    if (!link.bandwidth_bps || *link.bandwidth_bps == ports[k]->speed_bps) continue;
    ctx.error(
        Problem::kInconsistent, where, path,
        fmt::format("port \"{}\" runs at {}, but its NIC in the graph ({}) is cabled at {} "
                    "(link {}, {}): the port's speed and its link's bandwidth must agree",
                    ports[k]->name, format_rate(ports[k]->speed_bps), shape.host_ends[k]->name,
                    format_rate(*link.bandwidth_bps), link.name, graph.edge_path(cable.edge)));
    return;
  }
}

}  // namespace

bool import_infragraph(MapReader& fabric, const std::string& config_dir,
                       const std::vector<const config::PortConfig*>& twin_ports,
                       config::FabricConfig& out) {
  std::string text;
  if (!fabric.has("infragraph") || !fabric.text("infragraph", text)) return false;
  DocumentContext& ctx = fabric.context();
  const size_t errors = ctx.diagnostics().error_count();
  const std::string key = fabric.key_path("infragraph");
  report_shape_keys(fabric);
  const std::string file = resolve_config_path(ctx, key, text, config_dir);
  std::string content;
  try {
    content = read_bounded_file(file, kMaxInfraGraphFileBytes, "an InfraGraph file");
  } catch (const InputFileError& e) {
    std::string why = e.what();
    if (e.reason() == InputFileError::Reason::kOpen) {
      why = e.error_number() == ENOENT ? "no such file" : "not readable";
    } else if (e.reason() == InputFileError::Reason::kRead) {
      why = std::strerror(e.error_number());
    }
    ctx.error(Problem::kBadReference, fabric.get("infragraph"), key,
              fmt::format("cannot read the InfraGraph file {}: {}", file, why));
    return false;
  }
  YAML::Node document;
  try {
    document = YAML::Load(content);
  } catch (const YAML::Exception& e) {
    Diagnostic d;
    d.problem = Problem::kSyntax;
    d.where = location_from_mark(file, e.mark);
    d.message = "invalid YAML or JSON in the InfraGraph file: " +
                (e.msg.empty() ? std::string(e.what()) : e.msg);
    ctx.report(std::move(d));
    return false;
  }
  const AppliedOverrides none;
  SourceMap places(file);
  DocumentContext doc(none, places, ctx.diagnostics());
  const std::optional<Graph> graph = infragraph::read_graph(doc, document);
  if (!graph) return false;
  const std::optional<Shape> shape = Recognizer(doc, *graph).recognize();
  if (!shape) return false;
  if (!twin_ports.empty()) check_ports(fabric, *graph, *shape, twin_ports);
  if (shape->latency_ns && fabric.has("propagation_delay")) {
    ctx.error(Problem::kInconsistent, fabric.get("propagation_delay"),
              fabric.key_path("propagation_delay"),
              fmt::format("fabric.infragraph gives every link's latency ({}): give either it or "
                          "this key, not both (one source of truth)",
                          format_duration_ns(*shape->latency_ns)));
  }
  if (ctx.diagnostics().error_count() != errors) return false;
  out.topology = shape->topology;
  out.leaf_spine.ports_per_leaf = shape->leaf_spine.ports_per_leaf;
  out.leaf_spine.spines = shape->leaf_spine.spines;
  out.leaf_spine.links = shape->leaf_spine.links;
  out.leaf_spine.uplink_speed_bps = shape->leaf_spine.uplink_speed_bps;
  out.three_tier = shape->three_tier;
  out.rails = shape->rails;
  if (shape->latency_ns) out.propagation_delay_ns = *shape->latency_ns;
  return true;
}

}  // namespace etwire::control
