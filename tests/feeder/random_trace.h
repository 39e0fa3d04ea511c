// Random dependency graphs written out as traces in awkward file orders (forward references,
// shuffles, reversed files) and id schemes (dense, sparse, random, descending), for property tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "trace/node.h"

namespace etwire::feeder::testing {

enum class FileOrder { kTopological, kShuffledInGroups, kShuffled, kReversed };
enum class IdScheme { kDense, kSparse, kRandom, kDescending };

struct RandomTrace {
  std::vector<trace::TraceNode> nodes;  // in file order
  FileOrder order = FileOrder::kTopological;
  IdScheme ids = IdScheme::kDense;
  bool has_dangling_ctrl = false;  // ctrl deps on ids that are not in the file
  bool has_self_ctrl = false;
};

inline RandomTrace make_random_trace(std::mt19937_64& rng, size_t max_nodes) {
  auto uniform = [&rng](uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
  };
  RandomTrace out;
  size_t count = uniform(1, max_nodes);
  out.order = static_cast<FileOrder>(uniform(0, 3));
  out.ids = static_cast<IdScheme>(uniform(0, 3));

  // Ids by topological index.
  std::vector<uint64_t> ids(count);
  uint64_t base = uniform(0, 1) ? 0 : uniform(0, uint64_t{1} << 40);
  std::set<uint64_t> used;
  for (size_t i = 0; i < count; ++i) {
    switch (out.ids) {
      case IdScheme::kDense:
        ids[i] = base + i;
        break;
      case IdScheme::kSparse:
        ids[i] = (i == 0 ? base : ids[i - 1] + uniform(1, 9));
        break;
      case IdScheme::kDescending:
        ids[i] = base + count - 1 - i;
        break;
      case IdScheme::kRandom:
        do ids[i] = rng();
        while (!used.insert(ids[i]).second);
        break;
    }
  }
  used.insert(ids.begin(), ids.end());
  auto unused_id = [&]() {
    uint64_t id;
    do id = rng();
    while (used.count(id) != 0);
    return id;
  };

  const trace::NodeType kTypes[] = {trace::NodeType::kComp,     trace::NodeType::kComp,
                                    trace::NodeType::kCommColl, trace::NodeType::kCommSend,
                                    trace::NodeType::kCommRecv, trace::NodeType::kMemLoad};
  uint64_t parent_locality = uniform(1, 12);
  std::vector<trace::TraceNode> topological(count);
  for (size_t i = 0; i < count; ++i) {
    trace::TraceNode& node = topological[i];
    node.id = ids[i];
    node.name = std::to_string(i);
    node.type = kTypes[uniform(0, 5)];
    node.start_time_us = uniform(0, 20);  // few values, so ties are common
    if (i == 0) continue;
    auto pick_parent = [&]() -> uint64_t {
      if (uniform(0, 9) < 7)
        return ids[i - 1 - std::min<uint64_t>(i - 1, uniform(0, parent_locality))];
      return ids[uniform(0, i - 1)];
    };
    for (uint64_t k = uniform(0, 3); k > 0; --k) node.data_deps.push_back(pick_parent());
    for (uint64_t k = uniform(0, 2) == 0 ? uniform(1, 2) : 0; k > 0; --k) {
      node.ctrl_deps.push_back(pick_parent());
    }
    if (uniform(0, 40) == 0) {
      node.ctrl_deps.push_back(node.id);
      out.has_self_ctrl = true;
    }
    if (uniform(0, 60) == 0) {
      node.ctrl_deps.push_back(unused_id());
      out.has_dangling_ctrl = true;
    }
  }

  std::vector<size_t> order(count);
  for (size_t i = 0; i < count; ++i) order[i] = i;
  switch (out.order) {
    case FileOrder::kTopological:
      break;
    case FileOrder::kShuffledInGroups: {
      size_t group = uniform(2, 30);
      for (size_t first = 0; first < count; first += group) {
        std::shuffle(order.begin() + static_cast<std::ptrdiff_t>(first),
                     order.begin() + static_cast<std::ptrdiff_t>(std::min(count, first + group)),
                     rng);
      }
      break;
    }
    case FileOrder::kShuffled:
      std::shuffle(order.begin(), order.end(), rng);
      break;
    case FileOrder::kReversed:
      std::reverse(order.begin(), order.end());
      break;
  }
  for (size_t index : order) out.nodes.push_back(topological[index]);
  return out;
}

// The parents each node (by file position) waits for under the given ctrl-dep rule, as file
// positions; a dangling ctrl dep is given position `nodes.size()` (it is settled only at the end
// of the file). Self ctrl refs are left out, as the feeder drops them at once.
inline std::vector<std::vector<size_t>> parent_positions(const std::vector<trace::TraceNode>& nodes,
                                                         bool honour_ctrl) {
  std::unordered_map<uint64_t, size_t> position_of;
  for (size_t p = 0; p < nodes.size(); ++p) position_of[nodes[p].id] = p;
  std::vector<std::vector<size_t>> parents(nodes.size());
  for (size_t p = 0; p < nodes.size(); ++p) {
    for (uint64_t id : nodes[p].data_deps) parents[p].push_back(position_of.at(id));
    if (!honour_ctrl) continue;
    for (uint64_t id : nodes[p].ctrl_deps) {
      if (id == nodes[p].id) continue;
      auto found = position_of.find(id);
      parents[p].push_back(found == position_of.end() ? nodes.size() : found->second);
    }
  }
  return parents;
}

// How far past its window the feeder may have to read. The feeder reads beyond the window only
// while some node read so far waits for a parent not read yet, i.e. while the prefix of the file
// read so far is not closed under "parent of". A run of such reads starting at position r ends at
// the latest at the first closed prefix at or after r. So the extra nodes held never exceed the
// longest distance from a position to the next closed prefix.
inline uint64_t forced_extension_bound(const std::vector<std::vector<size_t>>& parents) {
  size_t count = parents.size();
  // closed[e]: every parent of the first e nodes lies within them.
  std::vector<bool> closed(count + 1, false);
  closed[0] = true;
  size_t furthest_parent = 0;
  for (size_t e = 1; e <= count; ++e) {
    for (size_t parent : parents[e - 1]) furthest_parent = std::max(furthest_parent, parent + 1);
    closed[e] = furthest_parent <= e || e == count;
  }
  uint64_t bound = 0;
  size_t next_closed = count;
  for (size_t r = count + 1; r-- > 0;) {
    if (closed[r]) next_closed = r;
    bound = std::max<uint64_t>(bound, next_closed - r);
  }
  return bound;
}

}  // namespace etwire::feeder::testing
