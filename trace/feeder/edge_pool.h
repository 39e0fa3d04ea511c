// Dependency edges (parent -> child slot) as singly linked lists threaded through one pooled array.
// Every list in the feeder (a node's children, the children waiting for a parent not read yet)
// draws from the same pool and returns its edges to a free list when released, so once the pool
// has grown to the peak number of live edges, adding and releasing edges never allocates. Lists
// keep insertion order, which is file order, so children are released in file order.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace etwire::feeder {

inline constexpr uint32_t kNoEdge = UINT32_MAX;

// Why a child waits for its parent: a data dependency always, a ctrl dependency only when the
// feeder honours them (and unlike data deps, ctrl deps on ids never read are forgiven).
enum class EdgeKind : uint8_t { kData, kCtrl };

// A list is just its two ends, so moving a whole list from one owner to another is a copy.
struct EdgeList {
  uint32_t head = kNoEdge;
  uint32_t tail = kNoEdge;

  bool empty() const { return head == kNoEdge; }
  friend bool operator==(const EdgeList&, const EdgeList&) = default;
};

class EdgePool {
 public:
  void append(EdgeList& list, uint32_t child, EdgeKind kind) {
    if (child > kChildMask) throw std::length_error("feeder: too many live nodes for an edge");
    uint32_t index = allocate();
    edges_[index] = Edge{child | (kind == EdgeKind::kCtrl ? kCtrlBit : 0u), kNoEdge};
    if (list.empty()) {
      list.head = index;
    } else {
      edges_[list.tail].next = index;
    }
    list.tail = index;
    ++live_edges_;
  }

  // Calls fn(child, kind) for each edge in order, returning every edge to the pool and leaving the
  // list empty. `fn` may append to other lists.
  template <typename Fn>
  void release(EdgeList& list, Fn&& fn) {
    uint32_t index = list.head;
    list = EdgeList{};
    while (index != kNoEdge) {
      Edge edge = edges_[index];
      edges_[index].next = free_head_;
      free_head_ = index;
      --live_edges_;
      index = edge.next;
      fn(edge.child_and_kind & kChildMask,
         (edge.child_and_kind & kCtrlBit) != 0 ? EdgeKind::kCtrl : EdgeKind::kData);
    }
  }

  // Calls fn(child, kind) for each edge in order without changing the list.
  template <typename Fn>
  void for_each(const EdgeList& list, Fn&& fn) const {
    for (uint32_t index = list.head; index != kNoEdge; index = edges_[index].next) {
      const Edge& edge = edges_[index];
      fn(edge.child_and_kind & kChildMask,
         (edge.child_and_kind & kCtrlBit) != 0 ? EdgeKind::kCtrl : EdgeKind::kData);
    }
  }

  uint64_t live_edges() const { return live_edges_; }
  size_t capacity() const { return edges_.size(); }

 private:
  // The kind shares the child's word: slot numbers never approach 2^31, and 8-byte edges keep the
  // pool dense in cache.
  static constexpr uint32_t kCtrlBit = 0x80000000u;
  static constexpr uint32_t kChildMask = 0x7fffffffu;

  struct Edge {
    uint32_t child_and_kind;
    uint32_t next;
  };

  uint32_t allocate() {
    if (free_head_ != kNoEdge) {
      uint32_t index = free_head_;
      free_head_ = edges_[index].next;
      return index;
    }
    if (edges_.size() >= kNoEdge) throw std::length_error("feeder: too many live edges");
    edges_.push_back(Edge{0, kNoEdge});
    return static_cast<uint32_t>(edges_.size() - 1);
  }

  std::vector<Edge> edges_;
  uint32_t free_head_ = kNoEdge;
  uint64_t live_edges_ = 0;
};

}  // namespace etwire::feeder
