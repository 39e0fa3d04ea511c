// Destroying a feeder that holds a very long dependency chain must not recurse once per node (a
// defect of the upstream feeder, whose nodes own their children).
#include <gtest/gtest.h>

#include <memory>
#include <optional>

#include "tests/feeder/small_stack.h"
#include "tests/feeder/vector_source.h"
#include "trace/feeder/feeder.h"

namespace etwire::feeder {
namespace {

TEST(FeederTeardown, DestroyingAFeederHoldingAMillionNodeChainDoesNotRecurse) {
  constexpr uint64_t kLength = 1000000;
  uint64_t peak_live = 0;
  uint64_t issued = 0;
  testing::run_on_small_stack([&] {
    // Each node waits for the next one in the file, so the whole chain is held before the last
    // node, the only ready one, can be issued.
    auto source =
        std::make_unique<testing::GeneratedSource>([](uint64_t position, trace::TraceNode& out) {
          if (position == kLength) return false;
          out.id = position;
          out.type = trace::NodeType::kComp;
          if (position + 1 < kLength) out.data_deps.push_back(position + 1);
          return true;
        });
    auto feeder = std::make_unique<Feeder>(std::move(source));
    for (int i = 0; i < 10; ++i) {
      std::optional<IssuedNode> node = feeder->next();
      ASSERT_TRUE(node);
      EXPECT_EQ(node->node->id, kLength - 1 - i);
      feeder->complete(*node);
    }
    ASSERT_TRUE(feeder->next().has_value());  // one left in flight
    peak_live = feeder->stats().peak_live_nodes;
    issued = feeder->stats().nodes_issued;
    feeder.reset();
  });
  EXPECT_EQ(peak_live, kLength);
  EXPECT_EQ(issued, 11u);
}

}  // namespace
}  // namespace etwire::feeder
