// wire_addresses: the Ethernet and IP addresses of the frames a connection sends. Toward a
// router under test (ports[].next_hop_mac) the destination MAC is the router's, the IP addresses
// stay the ranks' own.
#include <gtest/gtest.h>

#include "config/run_config.h"
#include "dataplane/data_plane.h"

namespace etwire::dataplane {
namespace {

config::RunConfig two_ports() {
  config::RunConfig config;
  config.ports.resize(2);
  return config;
}

WireEndpoint endpoint(uint32_t port, const char* mac, const char* ip) {
  WireEndpoint e;
  e.port = port;
  e.mac = *config::MacAddress::parse(mac);
  e.ipv4 = *config::Ipv4Address::parse(ip);
  return e;
}

TEST(WireAddresses, DestinationMacIsThePeersWithoutANextHop) {
  const config::RunConfig config = two_ports();
  const auto a = endpoint(0, "02:00:00:00:00:10", "10.0.0.1");
  const auto b = endpoint(1, "02:00:00:00:00:11", "10.0.1.1");
  const frame::FrameAddresses f = wire_addresses(a, b, config);
  EXPECT_EQ(f.src_mac, a.mac.bytes);
  EXPECT_EQ(f.dst_mac, b.mac.bytes);
}

TEST(WireAddresses, DestinationMacIsTheSendingPortsNextHop) {
  config::RunConfig config = two_ports();
  const config::MacAddress router_a = *config::MacAddress::parse("02:00:00:00:01:00");
  config.ports[0].next_hop_mac = router_a;
  const auto a = endpoint(0, "02:00:00:00:00:10", "10.0.0.1");
  const auto b = endpoint(1, "02:00:00:00:00:11", "10.0.1.1");

  const frame::FrameAddresses forward = wire_addresses(a, b, config);
  EXPECT_EQ(forward.dst_mac, router_a.bytes);
  EXPECT_EQ(forward.src_mac, a.mac.bytes);
  const std::array<uint8_t, 4> b_ip{10, 0, 1, 1};
  EXPECT_TRUE(std::equal(b_ip.begin(), b_ip.end(), forward.dst_ip.begin()));  // the rank's IP

  // The other direction leaves by port b, which has no next hop: b's frames go to a's MAC.
  const frame::FrameAddresses backward = wire_addresses(b, a, config);
  EXPECT_EQ(backward.dst_mac, a.mac.bytes);

  // A route carries both directions.
  const nic::WireRoute route = wire_route({a, b, 49152}, config);
  EXPECT_EQ(route.forward.dst_mac, router_a.bytes);
  EXPECT_EQ(route.backward.dst_mac, a.mac.bytes);
}

}  // namespace
}  // namespace etwire::dataplane
