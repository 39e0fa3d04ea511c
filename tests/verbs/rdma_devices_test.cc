#include "nic/verbs/rdma_devices.h"

#include <gtest/gtest.h>

#include <string>

namespace etwire::nic::verbs {
namespace {

TEST(RdmaDevices, SpeedIsLaneRateTimesLanes) {
  EXPECT_EQ(port_speed_bps(32, 2), 100'000'000'000u);   // EDR 4x
  EXPECT_EQ(port_speed_bps(64, 2), 200'000'000'000u);   // HDR 4x
  EXPECT_EQ(port_speed_bps(128, 2), 400'000'000'000u);  // NDR 4x
  EXPECT_EQ(port_speed_bps(32, 1), 25'000'000'000u);    // EDR 1x
  EXPECT_EQ(port_speed_bps(64, 16), 100'000'000'000u);  // HDR 2x
  EXPECT_EQ(port_speed_bps(3, 2), 0u);                  // not a speed code
  EXPECT_EQ(port_speed_bps(32, 3), 0u);                 // not a width code
}

TEST(RdmaDevices, MtuCodes) {
  EXPECT_EQ(mtu_bytes(1), 256u);
  EXPECT_EQ(mtu_bytes(3), 1024u);
  EXPECT_EQ(mtu_bytes(5), 4096u);
  EXPECT_EQ(mtu_bytes(0), 0u);
  EXPECT_EQ(mtu_bytes(6), 0u);
}

TEST(RdmaDevices, GidAddresses) {
  std::array<uint8_t, 16> v4{};
  v4[10] = 0xff;
  v4[11] = 0xff;
  v4[12] = 172;
  v4[13] = 16;
  v4[14] = 0;
  v4[15] = 7;
  EXPECT_EQ(gid_address(v4), "172.16.0.7");
  std::array<uint8_t, 16> v6{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0xff, 0xfe, 0, 0, 0x01};
  EXPECT_EQ(gid_address(v6), "fe80::200:ff:fe00:1");
  EXPECT_EQ(gid_address({}), std::nullopt);
}

TEST(RdmaDevices, TextListsPortsAndTheirGids) {
  RdmaDevice device;
  device.name = "mlx5_0";
  RdmaPort port;
  port.number = 1;
  port.state = "active";
  port.link_layer = "Ethernet";
  port.active_mtu = 4096;
  port.speed_bps = 400'000'000'000;
  GidEntry gid;
  gid.index = 3;
  gid.type = "RoCE v2";
  gid.gid[10] = 0xff;
  gid.gid[11] = 0xff;
  gid.gid[12] = 10;
  gid.gid[15] = 1;
  port.gids.push_back(gid);
  device.ports.push_back(port);
  EXPECT_EQ(devices_to_text({device}),
            "mlx5_0 port 1: active, Ethernet, active MTU 4096, 400 Gb/s\n"
            "  gid   3  RoCE v2  10.0.0.1\n");
}

// This machine (and CI's) has no RDMA support in its kernel: the listing says so instead of
// returning nothing. On a machine with RNICs the list is not empty.
TEST(RdmaDevices, ListingNamesTheReasonWhenThereIsNoDevice) {
  try {
    const auto devices = list_rdma_devices();
    EXPECT_FALSE(devices.empty());
  } catch (const NoRdmaDevice& e) {
    EXPECT_EQ(std::string(e.what()).rfind("no RDMA device: ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace etwire::nic::verbs
