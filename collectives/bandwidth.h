// Bandwidth figures as nccl-tests defines them, so etwire's reports compare with theirs:
//   algbw = bytes / time, with `bytes` the collective's full buffer (ResolvedSpec's
//           layout.full_bytes(): the all-reduce buffer, the all-gather output, the
//           reduce-scatter input, what each member sends in an all-to-all);
//   busbw = algbw * factor, the factor making every collective comparable with the link speed:
//           all-reduce 2(n-1)/n; reduce-scatter, all-gather, all-to-all, gather, scatter (n-1)/n;
//           broadcast, reduce, send/recv 1.
//   ideal % = busbw / link goodput.
#pragma once

#include <cstdint>
#include <string_view>

#include "collectives/algorithm.h"

namespace etwire::collectives {

// 0 for a barrier (no payload); the (n-1)/n factors are 0 for a group of one.
double busbw_factor(CollectiveKind kind, uint32_t ranks);
// "2(n-1)/n", "(n-1)/n", "1", or "-" for a barrier.
std::string_view busbw_formula(CollectiveKind kind);

// Bytes per second; 0 when seconds <= 0.
double algbw(uint64_t bytes, double seconds);
double busbw(CollectiveKind kind, uint32_t ranks, uint64_t bytes, double seconds);
// Percent of the link's goodput (bytes per second of payload); 0 when the goodput is not positive.
double ideal_percent(double busbw_bytes_per_second, double link_goodput_bytes_per_second);

}  // namespace etwire::collectives
