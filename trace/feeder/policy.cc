#include "trace/feeder/policy.h"

#include <cctype>
#include <string>

namespace etwire::feeder {

namespace {

// Lower-cases and drops separators so that "start-time", "START_TIME" and "starttime" compare
// equal.
std::string fold(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '-' || c == '_' || c == ' ') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace

std::optional<Policy> parse_policy(std::string_view text) {
  std::string folded = fold(text);
  for (Policy policy : {Policy::kFifo, Policy::kStartTime, Policy::kCommFirst}) {
    if (folded == fold(policy_name(policy))) return policy;
  }
  return std::nullopt;
}

std::string_view policy_name(Policy policy) {
  switch (policy) {
    case Policy::kFifo:
      return "fifo";
    case Policy::kStartTime:
      return "start-time";
    case Policy::kCommFirst:
      return "comm-first";
  }
  return "unknown";
}

}  // namespace etwire::feeder
