// What identifies a collective instance: the job, the process group and the sequence number of
// the collective within the group (as every member counts it), or for point-to-point, the sender,
// the receiver, the tag and the sequence number of the send among those with the same three. A
// collective over part of its group (by involved_dim) is its part's instance.
#pragma once

#include <compare>
#include <cstdint>

namespace etwire::engine {

struct InstanceKey {
  uint32_t job = 0;
  int64_t group = 0;      // group key, or kPointToPointGroup (run_results.h)
  uint64_t sequence = 0;  // n-th collective of the group; p2p: n-th of (src, dst, tag)
  // p2p: sender, receiver and tag. A collective over part of its group by dimension: src is the
  // part's index (its host, or its ranks' local index).
  int32_t src = 0;
  int32_t dst = 0;
  int32_t tag = 0;
  auto operator<=>(const InstanceKey&) const = default;
};

}  // namespace etwire::engine
