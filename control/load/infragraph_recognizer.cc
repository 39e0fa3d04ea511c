// The graph recognized tier by tier: host ports, leaves and the switches above them, links.
#include <fmt/format.h>

#include <algorithm>
#include <deque>

#include "control/load/infragraph_recognizer.h"
#include "control/load/key_path.h"

namespace etwire::control::infragraph {

std::optional<Shape> Recognizer::recognize() {
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

void Recognizer::check_ends() {
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

bool Recognizer::order_hosts() {
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

void Recognizer::assign_tiers() {
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
      refuse(c.edge, Problem::kBackend,
             fmt::format("cables {} {} to {} {} directly ({} to {}): etwire models Clos "
                         "fabrics only, where every link joins a tier to the next",
                         kTier[la], name(c.node_a), kTier[lb], name(c.node_b), c.a.name, c.b.name));
    }
    if (std::max(la, lb) > max_level_) max_level_ = std::max(la, lb);
  }
}

void Recognizer::check_links() {
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

std::map<uint32_t, uint32_t> Recognizer::neighbours(uint32_t node, int level) const {
  std::map<uint32_t, uint32_t> counts;
  for (const size_t c : cables_of_[node]) {
    const uint32_t next = other(cable(c), node);
    if (level_[next] == level) ++counts[next];
  }
  return counts;
}

size_t Recognizer::first_cable_between(uint32_t a, uint32_t b) const {
  for (const size_t c : cables_of_[a]) {
    if (other(cable(c), a) == b) return c;
  }
  return cables_of_[a].front();
}

bool Recognizer::check_uplinks(int level, uint32_t reference, const char* key_count,
                               const char* key_links, uint32_t& count, uint32_t& links) {
  const std::map<uint32_t, uint32_t> up = neighbours(reference, level + 1);
  if (up.empty()) {
    refuse(cable(cables_of_[reference].front()).edge, Problem::kBackend,
           fmt::format("{} {} has no link to a {}, and other {} have: etwire cables every {} "
                       "to {}",
                       kTier[level], name(reference), kTier[level + 1], kTiers[level], kTier[level],
                       kTiers[level + 1]));
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
                         plural(mine.size(), kTier[level + 1], kTiers[level + 1]), name(reference),
                         count, kTier[level], key_count));
      ok = false;
      break;
    }
    for (const auto& [above, n] : mine) {
      if (n == links) continue;
      refuse(cable(first_cable_between(node, above)).edge, Problem::kBackend,
             fmt::format("{} has {} to {}, {} {} to {}: etwire gives every {}-{} pair as many "
                         "parallel links ({})",
                         name(node), plural(n, "link", "links"), name(above), name(reference),
                         links, name(reference_above), kTier[level], kTier[level + 1], key_links));
      ok = false;
      break;
    }
  }
  return ok;
}

bool Recognizer::within(uint64_t value, uint64_t max, const std::string& what) {
  if (value <= max) return true;
  refuse_graph(Problem::kBackend,
               fmt::format("{} ({}) is above what etwire builds ({})", what, value, max));
  return false;
}

}  // namespace etwire::control::infragraph
