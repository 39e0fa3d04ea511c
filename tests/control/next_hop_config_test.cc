// ports[].next_hop_mac: the MAC every frame of a DPDK port is addressed to when the device under
// test is a router. Accepted on a DPDK port facing a device; refused where the other end is L2
// (loopback ports on the fabric twin, back-to-back DPDK peers) and for a multicast address.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "control/resolve/config_loader.h"
#include "tests/control/test_configs.h"

namespace etwire::control {

using namespace etwire::config;
namespace {

using ::testing::HasSubstr;
using testing::load_inline;

// Two af_packet ports, one rank each of a two-rank workload; `a_extra` goes into the first
// port's entry (a line of its own, "    next_hop_mac: ...\n").
std::string routed_pair(const std::string& a_extra, const std::string& a_backend = "dpdk") {
  return R"(workload:
  jobs:
    - trace: traces/allreduce_8r/allreduce
ports:
  - name: a
    backend: )" +
         a_backend + "\n" + a_extra + R"(    dpdk: {vdev: "net_af_packet0,iface=etw0"}
  - name: b
    backend: dpdk
    dpdk: {vdev: "net_af_packet1,iface=etw1"}
mapping:
  jobs:
    - placement: block
      ranks_per_port: 4
      hosts: {ranks_per_host: 4, bandwidth: 100GBps}
)";
}

TEST(NextHopMac, AcceptedOnADpdkPortFacingADevice) {
  auto loaded = load_inline(routed_pair("    next_hop_mac: 02:00:00:00:01:00\n"));
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  const auto& ports = loaded.config.ports;
  ASSERT_TRUE(ports[0].next_hop_mac.has_value());
  EXPECT_EQ(ports[0].next_hop_mac->to_string(), "02:00:00:00:01:00");
  EXPECT_FALSE(ports[1].next_hop_mac.has_value());  // not given: the destination's own MAC
}

TEST(NextHopMac, EveryPortOfAnEntryGetsTheSameNextHop) {
  auto loaded = load_inline(R"(workload:
  jobs:
    - trace: traces/allreduce_8r/allreduce
ports:
  - name: d
    count: 2
    backend: dpdk
    next_hop_mac: 02:00:00:00:01:00
    dpdk: {vdev: "net_af_packet{i},iface=etw{i}"}
mapping:
  jobs:
    - placement: block
      ranks_per_port: 4
      hosts: {ranks_per_host: 4, bandwidth: 100GBps}
)");
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  for (const PortConfig& port : loaded.config.ports) {
    ASSERT_TRUE(port.next_hop_mac.has_value()) << port.name;
    EXPECT_EQ(port.next_hop_mac->to_string(), "02:00:00:00:01:00") << port.name;
  }
}

TEST(NextHopMac, RefusedOnALoopbackPort) {
  auto loaded =
      load_inline(testing::kMinimalConfig + std::string("    next_hop_mac: 02:00:00:00:01:00\n"));
  ASSERT_FALSE(loaded.ok());
  const std::string text = loaded.diagnostics.to_text();
  EXPECT_THAT(text, HasSubstr("ports[0].next_hop_mac"));
  EXPECT_THAT(text, HasSubstr("loopback port"));
  EXPECT_THAT(text, HasSubstr("leave next_hop_mac out"));
}

TEST(NextHopMac, RefusedOnABackToBackPeer) {
  auto loaded = load_inline(testing::dpdk_ring_pair("    next_hop_mac: 02:00:00:00:01:00\n", ""));
  ASSERT_FALSE(loaded.ok());
  const std::string text = loaded.diagnostics.to_text();
  EXPECT_THAT(text, HasSubstr("ports[0].next_hop_mac"));
  EXPECT_THAT(text, HasSubstr("dpdk.peer"));
  EXPECT_THAT(text, HasSubstr("\"b\""));
}

TEST(NextHopMac, RefusesAMulticastOrMalformedAddress) {
  auto multicast = load_inline(routed_pair("    next_hop_mac: 01:00:5e:00:00:01\n"));
  ASSERT_FALSE(multicast.ok());
  EXPECT_THAT(multicast.diagnostics.to_text(), HasSubstr("ports[0].next_hop_mac"));
  EXPECT_THAT(multicast.diagnostics.to_text(), HasSubstr("unicast"));

  auto malformed = load_inline(routed_pair("    next_hop_mac: router\n"));
  ASSERT_FALSE(malformed.ok());
  EXPECT_THAT(malformed.diagnostics.to_text(), HasSubstr("expected a MAC address"));
}

TEST(NextHopMac, AnEmptyOverrideUnsetsIt) {
  // What `run --predict` does for the twin, whose switches are L2.
  auto loaded = load_inline(
      routed_pair("    next_hop_mac: 02:00:00:00:01:00\n", "dpdk"),
      {"ports[0].next_hop_mac=", "ports[0].backend=loopback", "ports[1].backend=loopback"});
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  EXPECT_FALSE(loaded.config.ports[0].next_hop_mac.has_value());
}

}  // namespace
}  // namespace etwire::control
