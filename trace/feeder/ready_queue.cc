#include "trace/feeder/ready_queue.h"

#include <algorithm>

namespace etwire::feeder {

void ReadyQueue::push(uint32_t slot, const trace::TraceNode& node, uint64_t file_order) {
  switch (policy_) {
    case Policy::kFifo:
      in_order_.push_back(slot);
      return;
    case Policy::kCommFirst:
      (trace::is_comm_type(node.type) ? comm_ : in_order_).push_back(slot);
      return;
    case Policy::kStartTime:
      by_start_time_.push_back(Timed{node.start_time_us, file_order, slot});
      std::push_heap(by_start_time_.begin(), by_start_time_.end(), starts_later);
      return;
  }
}

uint32_t ReadyQueue::pop() {
  if (!comm_.empty()) return comm_.pop_front();
  if (!in_order_.empty()) return in_order_.pop_front();
  std::pop_heap(by_start_time_.begin(), by_start_time_.end(), starts_later);
  uint32_t slot = by_start_time_.back().slot;
  by_start_time_.pop_back();
  return slot;
}

}  // namespace etwire::feeder
