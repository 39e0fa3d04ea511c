// The fabric keys that would build a recognized graph, and the twin built from them held against
// the graph.
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <exception>
#include <map>
#include <numeric>
#include <set>

#include "control/load/infragraph_recognizer.h"
#include "control/load/key_path.h"
#include "twin/layout/fabric_layout.h"

namespace etwire::control::infragraph {

namespace {

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

}  // namespace

// Rails: a host's NICs on different leaves. `nics` gets the NICs per host with rails, else 0;
// false when the graph is refused.
bool Recognizer::infer_rails(uint32_t& nics) {
  std::map<uint32_t, std::vector<size_t>> ports_of_host;
  for (size_t k = 0; k < host_of_.size(); ++k) ports_of_host[host_of_[k]].push_back(k);
  bool rails = false;
  for (const auto& [host, ports] : ports_of_host) {
    for (const size_t k : ports) rails = rails || leaf_of_[k] != leaf_of_[ports.front()];
  }
  nics = 0;
  if (rails) {
    nics = static_cast<uint32_t>(ports_of_host[host_of_[0]].size());
    for (const auto& [host, ports] : ports_of_host) {
      if (ports.size() == nics) continue;
      refuse(cable(shape_.host_cables[ports.front()]).edge, Problem::kBackend,
             fmt::format("host {} has {} cabled, host {} {}: a host whose NICs go to different "
                         "leaves makes the fabric rail-optimized, and etwire's rails take as "
                         "many NICs from every host (rails.nics_per_host)",
                         name(host), plural(ports.size(), "NIC", "NICs"), name(host_of_[0]), nics));
      return false;
    }
    if (!within(nics, 64, "NICs per host")) return false;
  }
  return true;
}

// Planes: the switches fall apart into networks no switch joins. Returns their count, 0 when the
// graph is refused.
uint32_t Recognizer::infer_planes(const std::vector<uint32_t>& leaves, uint32_t nics) {
  const bool rails = nics > 0;
  std::vector<uint32_t> root(g_.nodes.size());
  std::iota(root.begin(), root.end(), 0);
  const auto find = [&](uint32_t x) {
    while (root[x] != x) x = root[x] = root[root[x]];
    return x;
  };
  for (const Cable& c : g_.cables) {
    if (level_[c.node_a] > 0 && level_[c.node_b] > 0) root[find(c.node_a)] = find(c.node_b);
  }
  // A leaf of each network, the first in `leaves`; known by its root, so that each leaf is
  // looked up once rather than held against every network found before it.
  std::vector<uint32_t> networks;
  std::set<uint32_t> roots;
  for (const uint32_t leaf : leaves) {
    if (roots.insert(find(leaf)).second) networks.push_back(leaf);
  }
  const auto planes = static_cast<uint32_t>(networks.size());
  if (planes > 1 && !rails) {
    refuse_graph(Problem::kBackend,
                 fmt::format("the switches form {} networks that no switch joins (leaf {}'s and "
                             "leaf {}'s): etwire joins every leaf through spines, and keeps "
                             "networks apart only as planes of rails (hosts whose NICs go to "
                             "different leaves)",
                             planes, name(networks[0]), name(networks[1])));
    return 0;
  }
  if (rails && nics % planes != 0) {
    refuse_graph(Problem::kBackend,
                 fmt::format("the rails form {} networks that no switch joins, which does not "
                             "divide the {} NICs of each host: etwire puts rail i in plane i "
                             "mod planes (rails.planes)",
                             planes, nics));
    return 0;
  }

  return planes;
}

// The leaf-spine keys from the first leaf, then the three-tier ones from its first spine.
bool Recognizer::infer_tiers(uint32_t nics, uint32_t planes) {
  const bool rails = nics > 0;
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

bool Recognizer::infer_shape() {
  std::vector<uint32_t> leaves;
  for (uint32_t node = 0; node < g_.nodes.size(); ++node) {
    if (level_[node] == 1) leaves.push_back(node);
  }
  uint32_t nics = 0;
  if (!infer_rails(nics)) return false;
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

  const uint32_t planes = infer_planes(leaves, nics);
  return planes > 0 && infer_tiers(nics, planes);
}

std::string Recognizer::summary() const {
  const config::LeafSpineConfig& ls = shape_.leaf_spine;
  std::string text = fmt::format(
      "{}, {} per leaf, {} per pod, {} per leaf-spine pair", config::topology_name(shape_.topology),
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

config::FabricConfig Recognizer::candidate() const {
  config::FabricConfig fabric;
  fabric.topology = shape_.topology;
  fabric.leaf_spine = shape_.leaf_spine;
  fabric.three_tier = shape_.three_tier;
  fabric.rails = shape_.rails;
  return fabric;
}

// The graph's leaves against the twin's: each leaf holds the ports of one twin leaf. Fills both
// ways of the match; false when the graph is refused.
bool Recognizer::match_leaves(const twin::FabricLayout& layout, LayoutMatch& match) {
  auto& [graph_of, layout_of] = match;
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
  return true;
}

// The graph's spines (and super-spines) against the twin's, each cabled to the same switches
// below by as many links; false when the graph is refused.
bool Recognizer::match_upper_tiers(const twin::FabricLayout& layout, LayoutMatch& match) {
  auto& [graph_of, layout_of] = match;
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
        refuse(cable(cables_of_[node].front()).edge, Problem::kBackend,
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

bool Recognizer::compare_with_layout() {
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
  LayoutMatch match{std::vector<int64_t>(layout.switches(), -1), {}};
  return match_leaves(layout, match) && match_upper_tiers(layout, match);
}

}  // namespace etwire::control::infragraph
