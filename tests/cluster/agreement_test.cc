// The emulator processes' agreement on what they loaded: one message naming every process that
// failed to load, else every process whose digest differs from process 0's.
#include "cluster/agreement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace etwire::cluster {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(Agreement, TheSameDigestEverywhereAgrees) {
  EXPECT_FALSE(disagreement({{"a", "fnv1a64:1", ""}, {"b", "fnv1a64:1", ""}}));
  EXPECT_FALSE(disagreement({{"a", "fnv1a64:1", ""}}));
}

TEST(Agreement, DifferingProcessesAreNamedWithTheirHosts) {
  const auto message = disagreement(
      {{"lab-a", "fnv1a64:1", ""}, {"lab-b", "fnv1a64:1", ""}, {"lab-c", "fnv1a64:2", ""}});
  ASSERT_TRUE(message);
  EXPECT_THAT(*message, HasSubstr("Process 0 on host lab-a has fnv1a64:1"));
  EXPECT_THAT(*message, HasSubstr("process 2 on host lab-c: fnv1a64:2"));
  EXPECT_THAT(*message, Not(HasSubstr("lab-b")));
}

TEST(Agreement, AProcessThatCouldNotLoadIsNamedWithItsReason) {
  const auto message =
      disagreement({{"lab-a", "fnv1a64:1", ""}, {"lab-b", "", "run.yaml: cannot read"}});
  ASSERT_TRUE(message);
  EXPECT_THAT(*message, HasSubstr("not every emulator process could load the run"));
  EXPECT_THAT(*message, HasSubstr("process 1 on host lab-b: run.yaml: cannot read"));
}

}  // namespace
}  // namespace etwire::cluster
