#include "trace/feeder/feeder.h"

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

#include "common/ring_queue.h"
#include "trace/feeder/edge_pool.h"
#include "trace/feeder/feeder_errors.h"
#include "trace/feeder/flat_id_map.h"
#include "trace/feeder/node_slots.h"
#include "trace/feeder/ready_queue.h"
#include "trace/feeder/seen_id_set.h"

namespace etwire::feeder {

class Feeder::Impl {
  // Kept inside the class: a type of this file in an unnamed namespace would give Impl's
  // members internal types, which GCC refuses once the file is compiled as part of another
  // (a unity build).
  static constexpr uint32_t kNoSlot = UINT32_MAX;

  enum class SlotState : uint8_t { kFree, kWaiting, kReady, kInFlight };

  // Bookkeeping of one slot, kept apart from the decoded node so that dependency resolution walks a
  // dense array instead of 500-byte nodes.
  struct SlotInfo {
    uint64_t file_order = 0;       // position among the nodes read: the tie-breaker everywhere
    uint32_t pending_parents = 0;  // parents not yet completed, read or not
    EdgeList children;             // children read so far, in file order
    SlotState state = SlotState::kFree;
    bool dropped_by_filter = false;  // completes inside the feeder instead of being issued
  };

 public:
  Impl(std::unique_ptr<trace::NodeSource> source, FeederOptions options)
      : source_(std::move(source)),
        options_(std::move(options)),
        window_(std::max<uint32_t>(options_.window, 1)),
        filter_keeps_all_(options_.filter.keeps_everything()),
        honour_ctrl_deps_(options_.ctrl_deps == CtrlDeps::kHonour),
        ready_(options_.policy) {
    if (!source_) throw std::invalid_argument("Feeder needs a node source");
  }

  std::optional<IssuedNode> next() {
    for (;;) {
      while (!end_of_file_ && live_nodes_ < window_) read_one();
      if (!ready_.empty()) return issue(ready_.pop());
      if (in_flight_ > 0 || live_nodes_ == 0) return std::nullopt;
      // Every node held waits for a parent, and none is running that could release it.
      if (unresolved_.empty()) throw_cycle();
      // Some wait for parents not read yet: the window must grow until one arrives. At the end of
      // the file the unresolved set is settled (an error or dropped), so this always reads.
      read_one();
    }
  }

  void complete(IssuedNode issued) {
    if (issued.slot >= nodes_.size() || info_[issued.slot].state != SlotState::kInFlight ||
        issued.node != &nodes_[issued.slot]) {
      throw std::logic_error("Feeder::complete() called with a node that is not in flight");
    }
    --in_flight_;
    ++stats_.nodes_completed;
    finish(issued.slot);
    if (!dropped_ready_.empty()) complete_dropped_nodes();
  }

  bool done() const { return end_of_file_ && live_nodes_ == 0; }
  uint64_t in_flight() const { return in_flight_; }
  const FeederStats& stats() const { return stats_; }
  const trace::TraceMetadata& metadata() const { return source_->metadata(); }
  const std::string& path() const { return source_->path(); }

 private:
  uint32_t acquire_slot() {
    if (!free_slots_.empty()) {
      uint32_t slot = free_slots_.back();
      free_slots_.pop_back();
      return slot;
    }
    if (nodes_.size() == kNoSlot) throw std::length_error("feeder: too many live nodes");
    info_.emplace_back();
    return nodes_.add();
  }

  // Reads one node into a free slot and wires it into the graph. False at the end of the file.
  bool read_one() {
    uint32_t slot = acquire_slot();
    trace::TraceNode& node = nodes_[slot];
    if (!source_->next(node)) {
      free_slots_.push_back(slot);
      settle_unresolved_at_end();
      return false;
    }
    ++stats_.nodes_read;

    if (!seen_.insert(node.id)) {
      uint32_t first = live_.find(node.id);
      throw duplicate_id_error(
          path(), node,
          first == kNoSlot ? std::nullopt : std::optional<uint64_t>(nodes_[first].record_index));
    }
    SlotInfo& info = info_[slot];
    info.file_order = next_file_order_++;
    info.pending_parents = 0;
    info.state = SlotState::kWaiting;
    info.dropped_by_filter = !filter_keeps_all_ && !options_.filter.keeps(node);

    // Children read before this node were parked under its id; they become its children as they
    // are, already counted in their pending parents and in file order. Taking them first keeps a
    // reversed chain at one unresolved id instead of two.
    info.children = unresolved_.empty() ? EdgeList{} : unresolved_.erase(node.id);

    for (uint64_t parent : node.data_deps) {
      if (parent == node.id) throw self_dependency_error(path(), node);
      wait_for(parent, slot, EdgeKind::kData);
    }
    if (honour_ctrl_deps_) {
      for (uint64_t parent : node.ctrl_deps) {
        if (parent == node.id) {
          ++stats_.ctrl_self_refs_dropped;
          continue;
        }
        wait_for(parent, slot, EdgeKind::kCtrl);
      }
    }
    live_.insert_or_assign(node.id, slot);
    ++live_nodes_;
    stats_.peak_live_nodes = std::max(stats_.peak_live_nodes, live_nodes_);
    if (info.pending_parents == 0) became_ready(slot);
    if (!dropped_ready_.empty()) complete_dropped_nodes();
    return true;
  }

  void wait_for(uint64_t parent, uint32_t child, EdgeKind kind) {
    uint32_t parent_slot = live_.find(parent);
    if (parent_slot != kNoSlot) {
      edges_.append(info_[parent_slot].children, child, kind);
    } else if (seen_.contains(parent)) {
      return;  // read, completed and evicted already
    } else if (EdgeList* waiting = unresolved_.find_mutable(parent)) {
      edges_.append(*waiting, child, kind);
    } else {
      // An empty list marks an unused map entry, so the list gets its edge before it is stored.
      EdgeList list;
      edges_.append(list, child, kind);
      unresolved_.insert_or_assign(parent, list);
      stats_.peak_unresolved = std::max<uint64_t>(stats_.peak_unresolved, unresolved_.size());
    }
    ++info_[child].pending_parents;
  }

  void became_ready(uint32_t slot) {
    SlotInfo& info = info_[slot];
    if (info.dropped_by_filter) {
      // Completed later by complete_dropped_nodes(), iteratively: a chain of dropped nodes must
      // not recurse.
      info.state = SlotState::kReady;
      dropped_ready_.push_back(slot);
      return;
    }
    info.state = SlotState::kReady;
    ready_.push(slot, nodes_[slot], info.file_order);
  }

  IssuedNode issue(uint32_t slot) {
    info_[slot].state = SlotState::kInFlight;
    ++in_flight_;
    ++stats_.nodes_issued;
    return IssuedNode{slot, &nodes_[slot]};
  }

  // Releases the children of a completed node, then forgets it (its id stays in seen_).
  void finish(uint32_t slot) {
    edges_.release(info_[slot].children, [this](uint32_t child, EdgeKind) {
      if (--info_[child].pending_parents == 0) became_ready(child);
    });
    live_.erase(nodes_[slot].id);
    info_[slot].state = SlotState::kFree;
    free_slots_.push_back(slot);
    --live_nodes_;
  }

  void complete_dropped_nodes() {
    while (!dropped_ready_.empty()) {
      ++stats_.nodes_filtered;
      finish(dropped_ready_.pop_front());
    }
  }

  // At the end of the file every id still waited for is missing. A data dependency on a missing
  // id is an error; a ctrl dependency on one is dropped (converters write such links).
  void settle_unresolved_at_end() {
    end_of_file_ = true;
    if (unresolved_.empty()) return;

    // Report the first offending child in the file, and how many more references are missing.
    uint32_t first_child = kNoSlot;
    uint64_t first_missing_parent = 0;
    uint64_t missing_data_deps = 0;
    unresolved_.for_each([&](uint64_t parent, const EdgeList& waiting) {
      edges_.for_each(waiting, [&](uint32_t child, EdgeKind kind) {
        if (kind != EdgeKind::kData) return;
        ++missing_data_deps;
        if (first_child == kNoSlot || info_[child].file_order < info_[first_child].file_order) {
          first_child = child;
          first_missing_parent = parent;
        }
      });
    });
    if (first_child != kNoSlot) {
      throw missing_parent_error(path(), nodes_[first_child], first_missing_parent,
                                 missing_data_deps - 1);
    }

    // Only ctrl dependencies are left: drop them, returning their edges to the pool.
    std::vector<uint32_t> released;
    unresolved_.for_each([&](uint64_t, EdgeList waiting) {
      edges_.release(waiting, [&](uint32_t child, EdgeKind) {
        ++stats_.ctrl_dangling_dropped;
        if (--info_[child].pending_parents == 0) released.push_back(child);
      });
    });
    unresolved_.clear();
    // Nodes freed together become ready in file order, like every other tie.
    std::sort(released.begin(), released.end(),
              [this](uint32_t a, uint32_t b) { return info_[a].file_order < info_[b].file_order; });
    for (uint32_t slot : released) became_ready(slot);
    complete_dropped_nodes();
  }

  // Nothing is ready, nothing is running, nothing waits for an unread parent, yet nodes remain:
  // following waiting nodes to a live parent must loop. Finds that loop and reports it.
  [[noreturn]] void throw_cycle() {
    uint32_t start = kNoSlot;
    for (uint32_t slot = 0; slot < nodes_.size(); ++slot) {
      if (info_[slot].state != SlotState::kWaiting) continue;
      if (start == kNoSlot || info_[slot].file_order < info_[start].file_order) start = slot;
    }
    std::vector<CycleLink> path_links;
    std::vector<uint32_t> step_of(nodes_.size(), kNoSlot);
    uint32_t at = start;
    while (at != kNoSlot && step_of[at] == kNoSlot) {
      step_of[at] = static_cast<uint32_t>(path_links.size());
      auto [parent, kind] = waiting_parent(at);
      path_links.push_back(CycleLink{&nodes_[at], kind});
      at = parent;
    }
    if (at == kNoSlot) throw std::logic_error("feeder: stuck without a dependency cycle");
    std::vector<CycleLink> cycle(path_links.begin() + step_of[at], path_links.end());
    // Start the report at the node that comes first in the file.
    auto earliest =
        std::min_element(cycle.begin(), cycle.end(), [](const CycleLink& a, const CycleLink& b) {
          return a.node->record_index < b.node->record_index;
        });
    std::rotate(cycle.begin(), earliest, cycle.end());
    throw cycle_error(path(), cycle, honour_ctrl_deps_);
  }

  // A parent of `slot` that is held and not completed (kNoSlot if none), and which list names it.
  std::pair<uint32_t, EdgeKind> waiting_parent(uint32_t slot) const {
    const trace::TraceNode& node = nodes_[slot];
    for (uint64_t parent : node.data_deps) {
      uint32_t parent_slot = live_.find(parent);
      if (parent_slot != kNoSlot) return {parent_slot, EdgeKind::kData};
    }
    if (honour_ctrl_deps_) {
      for (uint64_t parent : node.ctrl_deps) {
        if (parent == node.id) continue;
        uint32_t parent_slot = live_.find(parent);
        if (parent_slot != kNoSlot) return {parent_slot, EdgeKind::kCtrl};
      }
    }
    return {kNoSlot, EdgeKind::kData};
  }

  std::unique_ptr<trace::NodeSource> source_;
  FeederOptions options_;
  uint32_t window_;
  bool filter_keeps_all_;
  bool honour_ctrl_deps_;

  NodeSlots nodes_;
  std::vector<SlotInfo> info_;         // by slot
  std::vector<uint32_t> free_slots_;   // a stack: the slot freed last is the warmest in cache
  FlatIdMap<uint32_t, kNoSlot> live_;  // id -> slot of every node held
  SeenIdSet seen_;                     // every id read so far
  // Parent id not read yet -> the children waiting for it.
  FlatIdMap<EdgeList, EdgeList{}> unresolved_;
  EdgePool edges_;
  ReadyQueue ready_;
  RingQueue<uint32_t> dropped_ready_;  // ready nodes the filter drops, about to complete

  uint64_t next_file_order_ = 0;
  uint64_t live_nodes_ = 0;
  uint64_t in_flight_ = 0;
  bool end_of_file_ = false;
  FeederStats stats_;
};

Feeder::Feeder(std::unique_ptr<trace::NodeSource> source, FeederOptions options)
    : impl_(std::make_unique<Impl>(std::move(source), std::move(options))) {}
Feeder::~Feeder() = default;

std::optional<IssuedNode> Feeder::next() {
  return impl_->next();
}
void Feeder::complete(IssuedNode issued) {
  impl_->complete(issued);
}
bool Feeder::done() const {
  return impl_->done();
}
uint64_t Feeder::in_flight() const {
  return impl_->in_flight();
}
const FeederStats& Feeder::stats() const {
  return impl_->stats();
}
const trace::TraceMetadata& Feeder::metadata() const {
  return impl_->metadata();
}
const std::string& Feeder::path() const {
  return impl_->path();
}

}  // namespace etwire::feeder
