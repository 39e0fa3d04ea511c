#include "outputs/timeline/lane_assigner.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <tuple>
#include <utility>

namespace etwire::outputs::timeline {

void LaneAssigner::add(uint64_t track, int64_t start, int64_t end) {
  slices_.push_back({start, std::max(start, end), track, static_cast<uint32_t>(slices_.size())});
}

void LaneAssigner::assign() {
  std::vector<Slice> order = slices_;
  std::sort(order.begin(), order.end(), [](const Slice& a, const Slice& b) {
    return std::tie(a.track, a.start, a.end, a.index) < std::tie(b.track, b.start, b.end, b.index);
  });
  lanes_.assign(slices_.size(), 0);
  using Busy = std::pair<int64_t, uint32_t>;  // (end, lane)
  std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> free;
  uint32_t opened = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const Slice& slice = order[i];
    if (i > 0 && order[i - 1].track != slice.track) {  // a new track starts with no lane
      busy = {};
      free = {};
      opened = 0;
    }
    // A slice that ends where the next starts leaves its lane free: they touch, not overlap.
    while (!busy.empty() && busy.top().first <= slice.start) {
      free.push(busy.top().second);
      busy.pop();
    }
    uint32_t lane = opened;
    if (free.empty()) {
      ++opened;
    } else {
      lane = free.top();
      free.pop();
    }
    lanes_[slice.index] = lane;
    busy.push({slice.end, lane});
  }
}

}  // namespace etwire::outputs::timeline
