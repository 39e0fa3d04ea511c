// fabric.partitions: the twin in partitions of its leaves (parallel virtual time). The key is read
// and range-checked; a fabric that cannot be cut that many ways, and what a partitioned twin does
// not do yet, are refused with the key's line, by validate as by run.
#include <gtest/gtest.h>

#include <string>

#include "tests/control/test_configs.h"

namespace etwire::control {
namespace {

using testing::kMinimalConfig;
using testing::load_inline;
using testing::only_error;

// kMinimalConfig is 6 lines: `fabric:` is line 7, `partitions:` line 8, the rest after it.
std::string with_fabric(const std::string& partitions, const std::string& more = "",
                        const std::string& after = "") {
  return std::string(kMinimalConfig) + "fabric:\n  partitions: " + partitions + "\n" + more + after;
}

const std::string kLeafSpine = "  topology: leaf-spine\n  leaf_spine: {ports_per_leaf: 2}\n";

TEST(PartitionsConfig, OneByDefaultAndReadWhenGiven) {
  const auto defaults = load_inline(kMinimalConfig, {}, false);
  ASSERT_TRUE(defaults.ok()) << defaults.diagnostics.to_text();
  EXPECT_EQ(defaults.config.fabric.partitions, 1u);
  const auto four = load_inline(with_fabric("4", kLeafSpine), {}, false);
  ASSERT_TRUE(four.ok()) << four.diagnostics.to_text();
  EXPECT_EQ(four.config.fabric.partitions, 4u);
  const auto by_override = load_inline(std::string(kMinimalConfig) + "fabric:\n" + kLeafSpine,
                                       {"fabric.partitions=2"}, false);
  ASSERT_TRUE(by_override.ok()) << by_override.diagnostics.to_text();
  EXPECT_EQ(by_override.config.fabric.partitions, 2u);
}

TEST(PartitionsConfig, WhatCannotBeCutIsRefusedWithTheLine) {
  struct Case {
    std::string config;
    std::string says;
  };
  const Case cases[] = {
      {with_fabric("0", kLeafSpine), "0"},
      {with_fabric("2"), "2 partitions need as many leaves; the fabric has 0"},
      {with_fabric("5", kLeafSpine), "5 partitions need as many leaves; the fabric has 4"},
      {with_fabric("2", kLeafSpine + "  propagation_delay: 0s\n"), "no propagation delay"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.config);
    const auto loaded = load_inline(c.config, {}, false);
    EXPECT_FALSE(loaded.ok());
    const Diagnostic* error = only_error(loaded);
    ASSERT_NE(error, nullptr) << loaded.diagnostics.to_text();
    EXPECT_EQ(error->key_path, "fabric.partitions");
    EXPECT_EQ(error->where.line, 8) << format_diagnostic(*error);
    EXPECT_NE(format_diagnostic(*error).find(c.says), std::string::npos)
        << format_diagnostic(*error);
  }
}

// Frame capture, of ports and of switch ports, and queue samples are built for a partitioned twin.
TEST(PartitionsConfig, FrameCaptureAndQueueSamplesAreAccepted) {
  const auto loaded = load_inline(
      with_fabric("2", kLeafSpine,
                  "telemetry:\n  record:\n    pcap: true\n    queue_sample_interval: 1ms\n"
                  "  capture:\n    switch_ports: [leaf0/spine0]\n"),
      {}, false);
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  EXPECT_EQ(loaded.config.telemetry.record.queue_sample_interval_ns, 1'000'000);
  EXPECT_TRUE(loaded.config.telemetry.record.pcap);
  EXPECT_EQ(loaded.config.fabric.partitions, 2u);
}

TEST(PartitionsConfig, OnlyTheLoopbackTwinIsPartitioned) {
  const std::string lab = testing::shipped_config("verbs-software.yaml");
  const auto loaded = load_config_file(lab, {.overrides = {"fabric.partitions=2"}});
  EXPECT_FALSE(loaded.ok());
  const Diagnostic* error = only_error(loaded);
  ASSERT_NE(error, nullptr) << loaded.diagnostics.to_text();
  EXPECT_EQ(error->key_path, "fabric.partitions");
  EXPECT_NE(error->message.find("not built yet"), std::string::npos) << error->message;
}

}  // namespace
}  // namespace etwire::control
