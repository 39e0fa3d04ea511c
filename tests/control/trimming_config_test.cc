// fabric.trimming: off unless enabled, the headers' class, a class that would not act refused
// with its place, and a warning where the headers would wait behind the data they were cut from.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "control/resolve/config_loader.h"
#include "tests/control/test_configs.h"

namespace etwire::control {
namespace {

using ::testing::HasSubstr;
using testing::kMinimalConfig;
using testing::load_inline;
using ::testing::Not;

RunPlan load_fabric(const std::string& fabric) {
  return load_inline(std::string(kMinimalConfig) + "fabric:\n" + fabric);
}

TEST(TrimmingConfig, OffUnlessEnabledAndTheHighestClassByDefault) {
  const RunPlan plain = load_fabric("  topology: single-switch\n");
  ASSERT_TRUE(plain.ok()) << plain.diagnostics.to_text();
  EXPECT_FALSE(plain.config.fabric.trimming.enabled);

  const RunPlan on = load_fabric("  trimming: {enabled: true}\n");
  ASSERT_TRUE(on.ok()) << on.diagnostics.to_text();
  EXPECT_TRUE(on.config.fabric.trimming.enabled);
  EXPECT_EQ(on.config.fabric.trimming.priority, 7);

  EXPECT_EQ(on.config.fabric.trimming.queue_bytes, 64u * 1024);

  const RunPlan five = load_fabric("  trimming: {enabled: true, priority: 5, queue: 8KiB}\n");
  ASSERT_TRUE(five.ok()) << five.diagnostics.to_text();
  EXPECT_EQ(five.config.fabric.trimming.priority, 5);
  EXPECT_EQ(five.config.fabric.trimming.queue_bytes, 8192u);
  EXPECT_THAT(five.diagnostics.to_text(), Not(HasSubstr("fabric.trimming")));
}

TEST(TrimmingConfig, KeysThatWouldNotActAreRefusedWithTheirPlace) {
  const struct {
    std::string fabric;
    std::string said;
  } cases[] = {
      {"  trimming: {priority: 6}\n",
       "fabric.trimming.priority: priority applies to trimmed headers, and trimming is off"},
      {"  trimming: {enabled: false, queue: 16KiB}\n",
       "fabric.trimming.queue: queue applies to trimmed headers, and trimming is off"},
      {"  trimming: {enabled: true, queue: 100}\n", "fabric.trimming.queue"},
      {"  trimming: {enabled: true, priority: 8}\n", "fabric.trimming.priority"},
      {"  trimming: {enabled: true, dscp: 3}\n", "fabric.trimming.dscp"},
  };
  for (const auto& c : cases) {
    const RunPlan loaded = load_fabric(c.fabric);
    EXPECT_FALSE(loaded.ok()) << c.fabric;
    EXPECT_THAT(loaded.diagnostics.to_text(), HasSubstr(c.said)) << c.fabric;
  }
}

TEST(TrimmingConfig, HeadersInTheDataClassAreWarnedOf) {
  // The ports send data on priority 3 by default.
  const RunPlan loaded = load_fabric("  trimming: {enabled: true, priority: 3}\n");
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  EXPECT_THAT(loaded.diagnostics.to_text(),
              HasSubstr("fabric.trimming.priority: port \"p0\" sends data on priority 3 too"));
}

}  // namespace
}  // namespace etwire::control
