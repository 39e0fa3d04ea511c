// The software RNIC's cables between processes, within one process (a session of one): every
// port here has a socket, a packet goes to the socket of its destination port, and arrives there
// whole, counted at both ends.
#include "dataplane/verbs/datagram_cables.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

namespace etwire::dataplane {
namespace {

struct Arrivals final : nic::PacketReceiver {
  void receive(const nic::Packet& packet, clock::Nanos now) override {
    packets.push_back(packet);
    times.push_back(now);
  }
  std::vector<nic::Packet> packets;
  std::vector<clock::Nanos> times;
};

// Polls until `count` packets arrived or a second passed (the kernel hands datagrams over at
// once on loopback; the wait only guards against a loaded machine).
size_t receive_until(DatagramCables& cables, const Arrivals& at, size_t count) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  size_t total = 0;
  while (at.packets.size() < count && std::chrono::steady_clock::now() < give_up) {
    total += cables.receive(42);
    std::this_thread::yield();
  }
  return total;
}

TEST(DatagramCables, APacketReachesThePortItIsFor) {
  DatagramCables cables({true, true, true}, {1'000'000'000, 1'000'000'000, 2'000'000'000},
                        cluster::Session::current());
  EXPECT_EQ(cables.port(2).speed_bps(), 2'000'000'000u);
  Arrivals one;
  Arrivals two;
  cables.port(1).set_receiver(&one);
  cables.port(2).set_receiver(&two);
  nic::Packet packet;
  packet.src_port = 0;
  packet.dst_port = 2;
  packet.dest_qpn = 0x801;
  packet.psn = 77;
  packet.payload_bytes = 4096;
  packet.wire_bytes = 4166;
  packet.immediate = 0xabcdef;
  cables.port(0).transmit(packet, 10);
  packet.dst_port = 1;
  packet.psn = 78;
  cables.port(0).transmit(packet, 20);
  EXPECT_EQ(receive_until(cables, two, 1) + receive_until(cables, one, 1), 2u);
  ASSERT_EQ(two.packets.size(), 1u);
  ASSERT_EQ(one.packets.size(), 1u);
  EXPECT_EQ(two.packets[0].psn, 77u);
  EXPECT_EQ(two.packets[0].dest_qpn, 0x801u);
  EXPECT_EQ(two.packets[0].immediate, 0xabcdefu);
  EXPECT_EQ(two.packets[0].payload_bytes, 4096u);
  EXPECT_EQ(two.times[0], 42);  // the receiving side's time
  EXPECT_EQ(one.packets[0].psn, 78u);
  EXPECT_EQ(cables.counters(0).tx_packets, 2u);
  EXPECT_EQ(cables.counters(0).tx_bytes, 2u * 4166);
  EXPECT_EQ(cables.counters(2).rx_packets, 1u);
  EXPECT_EQ(cables.counters(2).rx_bytes, 4166u);
  EXPECT_EQ(cables.counters(0).drops, 0u);
}

TEST(DatagramCables, APacketForNoPortIsDroppedAndCounted) {
  DatagramCables cables({true, true}, {1'000'000'000, 1'000'000'000}, cluster::Session::current());
  nic::Packet packet;
  packet.dst_port = 5;
  cables.port(0).transmit(packet, 0);
  EXPECT_EQ(cables.counters(0).drops, 1u);
  EXPECT_EQ(cables.counters(0).tx_packets, 0u);
  EXPECT_EQ(cables.receive(0), 0u);
}

// A port no process drives cannot be cabled: the processes would wait for it for ever.
TEST(DatagramCables, APortNoProcessDrivesIsRefused) {
  try {
    DatagramCables cables({true, false}, {1'000'000'000, 1'000'000'000},
                          cluster::Session::current());
    FAIL() << "a port of nobody's was cabled";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "the software RNIC's cables: no emulator process drives run port 1");
  }
}

}  // namespace
}  // namespace etwire::dataplane
