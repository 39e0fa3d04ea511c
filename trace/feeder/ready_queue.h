// The nodes whose parents have all completed, ordered by the issue policy. Each policy keeps its
// own preallocated structure (rings for arrival order, a binary heap for start times), so pushing
// and popping never allocate once the queue has reached its peak length.
#pragma once

#include <cstdint>
#include <vector>

#include "common/ring_queue.h"
#include "trace/feeder/policy.h"
#include "trace/node.h"

namespace etwire::feeder {

class ReadyQueue {
 public:
  explicit ReadyQueue(Policy policy) : policy_(policy) {}

  // `file_order` is the node's position among the nodes read, the tie-breaker of every policy.
  void push(uint32_t slot, const trace::TraceNode& node, uint64_t file_order);
  // The slot to issue next. Precondition: not empty.
  uint32_t pop();

  bool empty() const { return size() == 0; }
  size_t size() const { return in_order_.size() + comm_.size() + by_start_time_.size(); }

 private:
  struct Timed {
    uint64_t start_time_us;
    uint64_t file_order;
    uint32_t slot;
  };
  // Orders the heap so that its front is the earliest start, then the earliest in the file.
  static bool starts_later(const Timed& a, const Timed& b) {
    if (a.start_time_us != b.start_time_us) return a.start_time_us > b.start_time_us;
    return a.file_order > b.file_order;
  }

  Policy policy_;
  RingQueue<uint32_t> in_order_;      // kFifo; the non-comm class of kCommFirst
  RingQueue<uint32_t> comm_;          // the comm class of kCommFirst
  std::vector<Timed> by_start_time_;  // kStartTime, a binary min-heap
};

}  // namespace etwire::feeder
