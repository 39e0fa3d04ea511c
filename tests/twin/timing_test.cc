// Exact arrival times through one switch, computed by hand: serialization on the NIC's link and
// on the switch's egress link, propagation on both, and the switch's forwarding latency.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "clock/virtual_clock.h"
#include "tests/twin/nic_driver.h"
#include "twin/fabric/fabric_twin.h"

namespace etwire::twin::testing {
namespace {

// ceil(bytes x 8 / 100 Gb/s x (count)) in ns, for a train of `count` equal packets: the exact
// end of the count-th packet, rounded up.
clock::Nanos train_end_at_100g(uint64_t bytes, uint64_t count) {
  return static_cast<clock::Nanos>((bytes * 8 * count + 99) / 100);
}

TEST(FabricTwinTiming, OnePacketTakesTwoSerializationsTwoPropagationsAndTheSwitchLatency) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(2);
  FabricTwin twin(quiet_fabric(), ports, clock, 1);
  NicDriver driver(twin, clock);
  driver.send(data_packet(0, 1, 1000, 7));
  clock.run_until(clock::kNever);

  const auto received = driver.data_received_by(1);
  ASSERT_EQ(received.size(), 1u);
  // 1000 B at 100 Gb/s = 80 ns on each link; 1000 ns propagation on each; 500 ns in the switch.
  EXPECT_EQ(received[0].at, 80 + 1000 + 500 + 80 + 1000);
  EXPECT_EQ(received[0].packet.psn, 7u);
  EXPECT_EQ(twin.host_counters(0).tx_packets, 1u);
  EXPECT_EQ(twin.host_counters(0).tx_bytes, 1000u);
  EXPECT_EQ(twin.host_counters(1).rx_packets, 1u);
  EXPECT_EQ(twin.switch_port_counters(0).rx_packets, 1u);
  EXPECT_EQ(twin.switch_port_counters(1).tx_packets, 1u);
  EXPECT_EQ(twin.packets_in_fabric(), 0u);
}

TEST(FabricTwinTiming, TrainOfFractionalDurationsRunsAtExactlyLineRate) {
  // 4178 B at 100 Gb/s is 334.24 ns: the train must not lose the 0.24 ns per packet to rounding.
  clock::VirtualClock clock;
  const auto ports = uniform_ports(2);
  FabricTwin twin(quiet_fabric(), ports, clock, 1);
  NicDriver driver(twin, clock);
  constexpr uint32_t kCount = 200;
  for (uint32_t i = 0; i < kCount; ++i) driver.send(data_packet(0, 1, 4178, i));
  clock.run_until(clock::kNever);

  // The NIC starts packet i when packet i-1's exact end has passed.
  const auto& starts = driver.start_times(0);
  ASSERT_EQ(starts.size(), kCount);
  for (uint32_t i = 0; i < kCount; ++i) EXPECT_EQ(starts[i], train_end_at_100g(4178, i));

  // The first packet reaches the switch's egress at 335 + 1000 + 500 = 1835 and starts at once;
  // the rest follow back to back on the egress wire (each arrives before the previous is out),
  // so packet i's last byte leaves at exactly 1835 + 334.24 (i + 1) and arrives 1000 ns later.
  const auto received = driver.data_received_by(1);
  ASSERT_EQ(received.size(), kCount);
  for (uint32_t i = 0; i < kCount; ++i) {
    EXPECT_EQ(received[i].packet.psn, i);
    EXPECT_EQ(received[i].at, 1835 + train_end_at_100g(4178, i + 1) + 1000) << "packet " << i;
  }
}

TEST(FabricTwinTiming, SlowerReceiverSerializesAtItsOwnRate) {
  clock::VirtualClock clock;
  std::vector<TwinPortSpec> ports{{"fast", k100G}, {"slow", k25G}};
  FabricTwin twin(quiet_fabric(), ports, clock, 1);
  NicDriver driver(twin, clock);
  driver.send(data_packet(0, 1, 1000, 0));
  driver.send(data_packet(0, 1, 1000, 1));
  clock.run_until(clock::kNever);
  const auto received = driver.data_received_by(1);
  ASSERT_EQ(received.size(), 2u);
  // 80 ns at 100G in, 320 ns at 25G out; the second waits for the first on the slow wire.
  EXPECT_EQ(received[0].at, 80 + 1000 + 500 + 320 + 1000);
  EXPECT_EQ(received[1].at, received[0].at + 320);
}

TEST(FabricTwinTiming, PortOverrideSetsThePropagationDelayOfThatPortsCable) {
  config::FabricConfig config = quiet_fabric();
  config::FabricPortOverride far;
  far.port = "nic1";
  far.propagation_delay_ns = 5000;
  far.ecn = config.ecn;
  far.pfc = config.pfc;
  config.port_overrides.push_back(far);

  clock::VirtualClock clock;
  const auto ports = uniform_ports(3);
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  driver.send(data_packet(0, 1, 1000, 0));
  driver.send(data_packet(2, 1, 1000, 0), 100'000);
  driver.send(data_packet(1, 2, 1000, 0), 200'000);
  clock.run_until(clock::kNever);

  ASSERT_EQ(driver.data_received_by(1).size(), 2u);
  // Into the far port: its cable carries the last hop.
  EXPECT_EQ(driver.data_received_by(1)[0].at, 80 + 1000 + 500 + 80 + 5000);
  EXPECT_EQ(driver.data_received_by(1)[1].at, 100'000 + 80 + 1000 + 500 + 80 + 5000);
  // Out of it: the first hop, the other direction of the same cable.
  ASSERT_EQ(driver.data_received_by(2).size(), 1u);
  EXPECT_EQ(driver.data_received_by(2)[0].at, 200'000 + 80 + 5000 + 500 + 80 + 1000);
}

// A receiver that answers every data packet at once from inside receive(), as a transport's
// ACK path does: the twin must be re-entrant there.
class Echo final : public nic::PacketReceiver {
 public:
  explicit Echo(nic::Port& port) : port_(port) {}
  void receive(const nic::Packet& packet, clock::Nanos now) override {
    arrivals.push_back(now);
    if (packet.kind != nic::PacketKind::kRoce || packet.opcode == nic::opcode::kAcknowledge) return;
    nic::Packet ack = data_packet(packet.dst_port, packet.src_port, 84, packet.psn);
    ack.opcode = nic::opcode::kAcknowledge;
    port_.transmit(ack, now);
  }
  std::vector<clock::Nanos> arrivals;

 private:
  nic::Port& port_;
};

TEST(FabricTwinTiming, AReceiverMayTransmitFromInsideReceive) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(2);
  FabricTwin twin(quiet_fabric(), ports, clock, 1);
  Echo responder(twin.port(1));
  Echo requester(twin.port(0));
  twin.port(1).set_receiver(&responder);
  twin.port(0).set_receiver(&requester);
  twin.port(0).transmit(data_packet(0, 1, 1000, 1), 0);
  clock.run_until(clock::kNever);
  ASSERT_EQ(responder.arrivals.size(), 1u);
  ASSERT_EQ(requester.arrivals.size(), 1u);
  // 84 B at 100 Gb/s is 6.72 ns: each of its two wires ends on the next whole nanosecond.
  EXPECT_EQ(requester.arrivals[0], 2660 + 7 + 1000 + 500 + 7 + 1000);
}

// Receive times of a train of `count` 1000 B packets from port 0 to port 1 with
// fabric.sender_jitter `jitter_ns` and seed `seed`; the sender's start times in `starts`.
std::vector<clock::Nanos> jittered_train(uint64_t jitter_ns, uint64_t seed, uint32_t count,
                                         std::vector<clock::Nanos>* starts = nullptr) {
  clock::VirtualClock clock;
  config::FabricConfig config = quiet_fabric();
  config.sender_jitter_ns = jitter_ns;
  FabricTwin twin(config, uniform_ports(2), clock, seed);
  NicDriver driver(twin, clock);
  for (uint32_t i = 0; i < count; ++i) driver.send(data_packet(0, 1, 1000, i));
  clock.run_until(clock::kNever);
  std::vector<clock::Nanos> at;
  for (const auto& received : driver.data_received_by(1)) {
    EXPECT_EQ(received.packet.psn, at.size()) << "frames kept their order";
    at.push_back(received.at);
  }
  if (starts != nullptr) *starts = driver.start_times(0);
  return at;
}

TEST(FabricTwinTiming, SenderJitterDelaysEachFrameUpToItsBoundInOrderAndBySeed) {
  constexpr uint32_t kCount = 400;
  std::vector<clock::Nanos> paced_starts, jittered_starts;
  const auto paced = jittered_train(0, 1, kCount, &paced_starts);
  const auto jittered = jittered_train(5000, 1, kCount, &jittered_starts);
  ASSERT_EQ(paced.size(), kCount);
  ASSERT_EQ(jittered.size(), kCount);
  // The sender's wire is as paced as without: the lateness is on the way to the switch.
  EXPECT_EQ(jittered_starts, paced_starts);
  // The first frame is late by its own draw alone, at most the bound.
  EXPECT_GE(jittered[0] - paced[0], 0);
  EXPECT_LE(jittered[0] - paced[0], 5000);
  // Paced, 1000 B frames leave the switch back to back every 80 ns; jittered, gaps open where
  // a frame came late, and frames behind it bunch up but never overtake it.
  clock::Nanos widest_gap = 0;
  for (uint32_t i = 1; i < kCount; ++i) {
    EXPECT_EQ(paced[i] - paced[i - 1], 80);
    ASSERT_GE(jittered[i] - jittered[i - 1], 80);
    widest_gap = std::max(widest_gap, jittered[i] - jittered[i - 1]);
  }
  EXPECT_GT(widest_gap, 80);
  // Nothing arrives before it would without jitter, nor later than the bound allows: the last
  // frame is at most the bound behind, as every frame's lateness is.
  for (uint32_t i = 0; i < kCount; ++i) EXPECT_GE(jittered[i], paced[i]);
  EXPECT_LE(jittered.back() - paced.back(), 5000);
  // The seed decides the draws: the same seed, the same times; another, others.
  EXPECT_EQ(jittered_train(5000, 1, kCount), jittered);
  EXPECT_NE(jittered_train(5000, 2, kCount), jittered);
}

}  // namespace
}  // namespace etwire::twin::testing
