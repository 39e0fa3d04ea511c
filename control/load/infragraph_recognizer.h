// Recognizing an InfraGraph's shape: which instances are hosts, leaves, spines and super-spines,
// the fabric keys that would build the same network (Shape), and a check that etwire's twin
// built from those keys is the graph. Every graph etwire cannot model is refused at the element
// that makes it so. Internal to control/ (infragraph_import.cc).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/duration.h"
#include "common/rate.h"
#include "config/fabric_config.h"
#include "control/load/document_context.h"
#include "control/load/infragraph_graph.h"
#include "twin/layout/fabric_layout.h"

namespace etwire::control::infragraph {

// Tiers by how far above the hosts they are.
inline constexpr const char* kTier[] = {"host", "leaf", "spine", "super-spine"};
inline constexpr const char* kTiers[] = {"hosts", "leaves", "spines", "super-spines"};

inline std::string plural(size_t n, const char* one, const char* many) {
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

class Recognizer {
 public:
  Recognizer(DocumentContext& doc, const Graph& graph)
      : doc_(doc), g_(graph), cables_of_(graph.nodes.size()), level_(graph.nodes.size(), -1) {
    for (size_t c = 0; c < g_.cables.size(); ++c) {
      cables_of_[g_.cables[c].node_a].push_back(c);
      if (g_.cables[c].node_b != g_.cables[c].node_a) cables_of_[g_.cables[c].node_b].push_back(c);
    }
  }

  std::optional<Shape> recognize();

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

  void check_ends();

  // Every NIC cabled from a host to a switch is a port of the twin, in the graph's order.
  bool order_hosts();

  // Leaves are the switches hosts are cabled to; every other switch is as many tiers above them
  // as its shortest path of cables to a leaf.
  void assign_tiers();

  // One bandwidth per tier of switch links (a host's link is checked against its port), one
  // latency for every link.
  void check_links();

  static std::string bandwidth(const infragraph::Link& link) {
    return link.bandwidth_bps ? format_rate(*link.bandwidth_bps) : "no bandwidth given";
  }
  static std::string latency(const infragraph::Link& link) {
    return link.latency_ns ? format_duration_ns(*link.latency_ns) : "no latency given";
  }

  std::map<uint32_t, uint32_t> neighbours(uint32_t node, int level) const;

  size_t first_cable_between(uint32_t a, uint32_t b) const;

  // Every switch of tier `level` has as many links up as `reference`, as many to each switch
  // above it. Returns the reference's count of switches above and links to each.
  bool check_uplinks(int level, uint32_t reference, const char* key_count, const char* key_links,
                     uint32_t& count, uint32_t& links);

  bool within(uint64_t value, uint64_t max, const std::string& what);

  // The fabric keys that would build this graph, from its first leaf (port 0's) and that leaf's
  // first spine; the other switches are checked against them.
  bool infer_shape();
  bool infer_rails(uint32_t& nics);
  uint32_t infer_planes(const std::vector<uint32_t>& leaves, uint32_t nics);
  bool infer_tiers(uint32_t nics, uint32_t planes);

  std::string summary() const;

  config::FabricConfig candidate() const;

  // Builds etwire's twin from the inferred keys and checks it is the graph: the same leaf for
  // every port, and a spine (super-spine) of the graph for each of the twin's, cabled to the
  // same leaves (spines) by as many links.
  bool compare_with_layout();
  // Which graph node each twin switch is (-1: none yet), and which twin switch each graph node.
  struct LayoutMatch {
    std::vector<int64_t> graph_of;
    std::map<uint32_t, uint32_t> layout_of;
  };
  bool match_leaves(const twin::FabricLayout& layout, LayoutMatch& match);
  bool match_upper_tiers(const twin::FabricLayout& layout, LayoutMatch& match);

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

}  // namespace etwire::control::infragraph
