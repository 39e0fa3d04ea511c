#include "collectives/bandwidth.h"

namespace etwire::collectives {

namespace {

using trace::CollectiveType;

enum class Factor { kTwiceShare, kShare, kOne, kNone };

Factor factor_of(CollectiveKind kind) {
  if (!kind) return Factor::kOne;
  switch (*kind) {
    case CollectiveType::kAllReduce:
      return Factor::kTwiceShare;
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock:
    case CollectiveType::kAllGather:
    case CollectiveType::kAllToAll:
    case CollectiveType::kGather:
    case CollectiveType::kScatter:
      return Factor::kShare;
    case CollectiveType::kBroadcast:
    case CollectiveType::kReduce:
      return Factor::kOne;
    case CollectiveType::kBarrier:
      return Factor::kNone;
  }
  return Factor::kNone;
}

}  // namespace

double busbw_factor(CollectiveKind kind, uint32_t ranks) {
  if (ranks == 0) return 0;
  const double n = ranks;
  switch (factor_of(kind)) {
    case Factor::kTwiceShare:
      return 2 * (n - 1) / n;
    case Factor::kShare:
      return (n - 1) / n;
    case Factor::kOne:
      return 1;
    case Factor::kNone:
      return 0;
  }
  return 0;
}

std::string_view busbw_formula(CollectiveKind kind) {
  switch (factor_of(kind)) {
    case Factor::kTwiceShare:
      return "2(n-1)/n";
    case Factor::kShare:
      return "(n-1)/n";
    case Factor::kOne:
      return "1";
    case Factor::kNone:
      return "-";
  }
  return "-";
}

double algbw(uint64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / seconds : 0;
}

double busbw(CollectiveKind kind, uint32_t ranks, uint64_t bytes, double seconds) {
  return algbw(bytes, seconds) * busbw_factor(kind, ranks);
}

double ideal_percent(double busbw_bytes_per_second, double link_goodput_bytes_per_second) {
  return link_goodput_bytes_per_second > 0
             ? 100.0 * busbw_bytes_per_second / link_goodput_bytes_per_second
             : 0;
}

}  // namespace etwire::collectives
