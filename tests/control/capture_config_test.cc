// telemetry.record.pcap and telemetry.capture: the limits load, mistakes are errors at their
// place, limits without a capture are said to do nothing, and verbs ports are said to capture
// nothing; switch_ports names switch ports of the twin the run uses, each once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "control/resolve/config_loader.h"
#include "tests/control/test_configs.h"

namespace etwire::control {
namespace {

using testing::load_inline;

std::string with_telemetry(const std::string& telemetry) {
  return "workload:\n  jobs:\n    - trace: traces/allreduce_8r/allreduce\n"
         "ports:\n  - name: p\n    count: 8\n    speed: 100Gbps\n"
         "telemetry:\n" +
         telemetry;
}

const Diagnostic* find(const RunPlan& loaded, const std::string& key) {
  for (const auto& d : loaded.diagnostics.items()) {
    if (d.key_path == key) return &d;
  }
  return nullptr;
}

TEST(CaptureConfig, LimitsLoad) {
  const auto loaded = load_inline(
      with_telemetry("  record: {pcap: true}\n"
                     "  capture: {snap_length: 128, max_bytes: 2GiB, max_packets: 100000}\n"));
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  EXPECT_TRUE(loaded.config.telemetry.record.pcap);
  EXPECT_EQ(loaded.config.telemetry.capture.snap_length, 128u);
  EXPECT_EQ(loaded.config.telemetry.capture.max_bytes, 2ull << 30);
  EXPECT_EQ(loaded.config.telemetry.capture.max_packets, 100000u);
}

TEST(CaptureConfig, DefaultsKeepWholeFramesUpToOneGibibyte) {
  const auto loaded = load_inline(with_telemetry("  record: {pcap: true}\n"));
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  EXPECT_EQ(loaded.config.telemetry.capture.snap_length, 0u);
  EXPECT_EQ(loaded.config.telemetry.capture.max_bytes, 1ull << 30);
  EXPECT_EQ(loaded.config.telemetry.capture.max_packets, 0u);
}

TEST(CaptureConfig, MistakesAreErrorsAtTheirPlace) {
  const struct {
    std::string capture;
    std::string key;
    std::string says;
  } cases[] = {
      {"{snap_length: 20}", "telemetry.capture.snap_length", "less than a frame's headers"},
      {"{snap_length: 1MiB}", "telemetry.capture.snap_length", ""},
      {"{max_bytes: lots}", "telemetry.capture.max_bytes", ""},
      {"{max_packets: -1}", "telemetry.capture.max_packets", ""},
      {"{ports: [p0]}", "telemetry.capture.ports", ""},
  };
  for (const auto& c : cases) {
    const auto loaded =
        load_inline(with_telemetry("  record: {pcap: true}\n  capture: " + c.capture + "\n"));
    EXPECT_FALSE(loaded.ok()) << c.capture;
    const Diagnostic* d = find(loaded, c.key);
    ASSERT_NE(d, nullptr) << c.capture << ": " << loaded.diagnostics.to_text();
    EXPECT_GT(d->where.line, 0) << c.capture;
    EXPECT_NE(d->message.find(c.says), std::string::npos) << d->message;
  }
}

TEST(CaptureConfig, LimitsWithoutACaptureAreSaidToDoNothing) {
  const auto loaded = load_inline(with_telemetry("  capture: {max_packets: 10}\n"));
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  const Diagnostic* d = find(loaded, "telemetry.capture");
  ASSERT_NE(d, nullptr) << loaded.diagnostics.to_text();
  EXPECT_NE(d->message.find("no effect"), std::string::npos) << d->message;
}

TEST(CaptureConfig, SwitchPortsOfTheTwinLoad) {
  const auto loaded = load_inline(with_telemetry(
      "  record: {pcap: true}\n  capture: {switch_ports: [switch/p3, switch/p0]}\n"));
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  const auto& ports = loaded.config.telemetry.capture.switch_ports;
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0].name, "switch/p3");
  EXPECT_EQ(ports[1].key_path, "telemetry.capture.switch_ports[1]");
}

TEST(CaptureConfig, SwitchPortsTheTwinHasNotAreErrorsAtTheirPlace) {
  const struct {
    std::string capture;
    std::string key;
    std::string says;
  } cases[] = {
      {"[switch/p9]", "telemetry.capture.switch_ports[0]", "no switch port \"switch/p9\""},
      {"[switch/p1, p2]", "telemetry.capture.switch_ports[1]", "did you mean"},
      {"[switch/p1, switch/p1]", "telemetry.capture.switch_ports[1]", "named twice"},
      {"[[switch/p1]]", "telemetry.capture.switch_ports[0]", ""},
      {"switch/p1", "telemetry.capture.switch_ports", ""},
  };
  for (const auto& c : cases) {
    const auto loaded =
        load_inline(with_telemetry("  record: {pcap: true}\n  capture: "
                                   "{switch_ports: " +
                                   c.capture + "}\n"));
    EXPECT_FALSE(loaded.ok()) << c.capture;
    const Diagnostic* d = find(loaded, c.key);
    ASSERT_NE(d, nullptr) << c.capture << ": " << loaded.diagnostics.to_text();
    EXPECT_GT(d->where.line, 0) << c.capture;
    EXPECT_NE(d->message.find(c.says), std::string::npos) << d->message;
  }
}

TEST(CaptureConfig, SwitchPortsNeedTheTwin) {
  const auto loaded = load_inline(
      "workload:\n  jobs:\n    - trace: traces/allreduce_8r/allreduce\n"
      "ports:\n  - name: p\n    count: 8\n    speed: 100Gbps\n    backend: dpdk\n"
      "    vdev: net_null0\n"
      "telemetry:\n  record: {pcap: true}\n  capture: {switch_ports: [switch/p0]}\n");
  EXPECT_FALSE(loaded.ok());
  const Diagnostic* d = find(loaded, "telemetry.capture.switch_ports");
  ASSERT_NE(d, nullptr) << loaded.diagnostics.to_text();
  EXPECT_NE(d->message.find("fabric twin"), std::string::npos) << d->message;
}

}  // namespace
}  // namespace etwire::control
