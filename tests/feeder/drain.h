// Drives a feeder the way the engine does: keeps up to `max_in_flight` nodes issued and completes
// one when no more can be issued, until the feeder is done.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "trace/feeder/feeder.h"

namespace etwire::feeder::testing {

// Completes the oldest in-flight node, or a random one when `rng` is given. Returns the ids in
// issue order.
inline std::vector<uint64_t> drain(Feeder& feeder, uint32_t max_in_flight = 1,
                                   std::mt19937_64* rng = nullptr) {
  std::vector<uint64_t> order;
  std::vector<IssuedNode> in_flight;
  for (;;) {
    while (in_flight.size() < max_in_flight) {
      std::optional<IssuedNode> issued = feeder.next();
      if (!issued) break;
      order.push_back(issued->node->id);
      in_flight.push_back(*issued);
    }
    if (in_flight.empty()) break;
    size_t pick = rng == nullptr ? 0 : (*rng)() % in_flight.size();
    IssuedNode finished = in_flight[pick];
    in_flight.erase(in_flight.begin() + static_cast<std::ptrdiff_t>(pick));
    feeder.complete(finished);
  }
  EXPECT_TRUE(feeder.done());
  return order;
}

}  // namespace etwire::feeder::testing
