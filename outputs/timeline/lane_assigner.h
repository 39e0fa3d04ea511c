// Spreads a track's slices over lanes so that no two slices of a lane overlap. A Chrome trace's
// thread holds properly nested slices only, while a rank's nodes, a group's collectives and a QP's
// messages may overlap in time: each lane becomes a thread of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace etwire::outputs::timeline {

class LaneAssigner {
 public:
  // Adds a slice of `track` from `start` to `end`; slices are numbered in the order added.
  void add(uint64_t track, int64_t start, int64_t end);
  // Gives each slice a lane: a track's slices, taken by start time, each take the lowest lane
  // free at their start (the fewest lanes any assignment can do with).
  void assign();
  // The lane of the n-th slice added (after assign()).
  uint32_t lane(size_t slice) const { return lanes_[slice]; }
  size_t slices() const { return slices_.size(); }

 private:
  struct Slice {
    int64_t start = 0;
    int64_t end = 0;
    uint64_t track = 0;
    uint32_t index = 0;
  };
  std::vector<Slice> slices_;
  std::vector<uint32_t> lanes_;
};

}  // namespace etwire::outputs::timeline
