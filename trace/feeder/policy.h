// The issue policies of the feeder: how nodes that are ready at the same time are ordered.
// Policies only choose among ready nodes; dependencies alone decide readiness.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace etwire::feeder {

enum class Policy : uint8_t {
  kFifo,       // in the order nodes became ready (ties: file order)
  kStartTime,  // smallest recorded start_time_micros first (ties: file order)
  kCommFirst,  // communication nodes before all others, each class FIFO
};

// Accepts "fifo", "start-time" and "comm-first", in any case, with '-', '_' or nothing between the
// words.
std::optional<Policy> parse_policy(std::string_view text);
// "fifo", "start-time", "comm-first".
std::string_view policy_name(Policy policy);

}  // namespace etwire::feeder
