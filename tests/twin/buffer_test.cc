// Switch buffer: tail drop when a packet does not fit, counted per port and per queue, with the
// buffer shared by the switch's ports or split evenly between them.
#include <gtest/gtest.h>

#include "clock/virtual_clock.h"
#include "nic/pfc_frame.h"
#include "tests/twin/nic_driver.h"
#include "twin/fabric/fabric_twin.h"

namespace etwire::twin::testing {
namespace {

// The tail drops of queue (`port`, `priority`): some, each counted on the port and on the queue,
// and every packet sent either received or dropped there, none lost another way.
void expect_tail_drops_counted(const FabricTwin& twin, uint32_t port, uint8_t priority,
                               size_t received, uint32_t sent) {
  const WireCounters& egress = twin.switch_port_counters(port);
  EXPECT_GT(egress.drops_buffer, 0u);
  EXPECT_EQ(received + egress.drops_buffer, sent);
  EXPECT_EQ(twin.queue(port, priority).drops, egress.drops_buffer);
  EXPECT_EQ(egress.drops_fault + egress.drops_link_down, 0u);
}

TEST(FabricTwinBuffer, ExhaustedBufferTailDropsAndCounts) {
  config::FabricConfig config = quiet_fabric();
  config.buffer.size_bytes = 10'000;
  config.buffer.ingress_reserve_bytes = 0;
  clock::VirtualClock clock;
  std::vector<TwinPortSpec> ports{{"fast", k100G}, {"slow", k25G}};
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  constexpr uint32_t kSent = 100;
  for (uint32_t i = 0; i < kSent; ++i) driver.send(data_packet(0, 1, 1000, i, 2));
  clock.run_until(clock::kNever);

  const auto received = driver.data_received_by(1);
  const QueueSample queue = twin.queue(1, 2);
  expect_tail_drops_counted(twin, 1, 2, received.size(), kSent);
  // The buffer holds ten 1000-byte packets waiting (the one on the wire has left it).
  EXPECT_EQ(queue.max_depth_bytes, 10'000u);
  // Survivors keep their order; the first eleven all fit.
  for (size_t i = 1; i < received.size(); ++i) {
    EXPECT_LT(received[i - 1].packet.psn, received[i].packet.psn);
  }
  for (uint32_t i = 0; i < 11; ++i) EXPECT_EQ(received[i].packet.psn, i);
  EXPECT_EQ(twin.packets_in_fabric(), 0u);
}

TEST(FabricTwinBuffer, AQueueCountedInPacketsTailDropsAtItsLimitWhateverTheBytesLeft) {
  // 64 MiB of buffer, but at most 5 packets waiting in a queue: 100-byte and 1000-byte packets
  // alike, as a router's queue of "5p".
  config::FabricConfig config = quiet_fabric();
  config.buffer.queue_packets = 5;
  clock::VirtualClock clock;
  std::vector<TwinPortSpec> ports{{"fast", k100G}, {"slow", k25G}};
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  constexpr uint32_t kSent = 60;
  for (uint32_t i = 0; i < kSent; ++i) driver.send(data_packet(0, 1, i % 2 ? 1000 : 100, i, 2));
  clock.run_until(clock::kNever);

  const auto received = driver.data_received_by(1);
  const QueueSample queue = twin.queue(1, 2);
  expect_tail_drops_counted(twin, 1, 2, received.size(), kSent);
  // Five waiting packets of alternating sizes are at most three of 1000 bytes and two of 100.
  EXPECT_LE(queue.max_depth_bytes, 3'200u);
  // The first six fit: one on the wire, five waiting.
  for (uint32_t i = 0; i < 6; ++i) EXPECT_EQ(received[i].packet.psn, i);
  // Without the limit the same packets all fit.
  clock::VirtualClock unlimited_clock;
  FabricTwin unlimited(quiet_fabric(), ports, unlimited_clock, 1);
  NicDriver unlimited_driver(unlimited, unlimited_clock);
  for (uint32_t i = 0; i < kSent; ++i) {
    unlimited_driver.send(data_packet(0, 1, i % 2 ? 1000 : 100, i, 2));
  }
  unlimited_clock.run_until(clock::kNever);
  EXPECT_EQ(unlimited_driver.data_received_by(1).size(), kSent);
  EXPECT_GT(unlimited.queue(1, 2).max_depth_bytes, 3'200u);
}

// Packets admitted toward port "slow" from hosts 0 and 1 while the slow port is paused (nothing
// leaves): host 0 sends 30 packets of 1000 bytes, then host 1 sends 3.
std::pair<size_t, size_t> admitted_while_paused(uint64_t reserve) {
  config::FabricConfig config = quiet_fabric();
  config.buffer.size_bytes = 26'000;
  config.buffer.ingress_reserve_bytes = reserve;
  clock::VirtualClock clock;
  std::vector<TwinPortSpec> ports{{"a", k100G}, {"b", k100G}, {"slow", k25G}};
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  // 0xFFFF quanta: 1.3 ms at 25G; the switch holds the queue until then.
  twin.port(2).transmit(nic::pfc_frame(2, 2, 0, 0xFFFF), 0);
  for (uint32_t i = 0; i < 30; ++i) driver.send(data_packet(0, 2, 1000, i), 2'000);
  for (uint32_t i = 0; i < 3; ++i) driver.send(data_packet(1, 2, 1000, 1000 + i), 6'000);
  clock.run_until(clock::kNever);
  std::pair<size_t, size_t> admitted{0, 0};
  for (const Delivery& d : driver.data_received_by(2)) {
    ++(d.packet.psn >= 1000 ? admitted.second : admitted.first);
  }
  return admitted;
}

TEST(FabricTwinBuffer, AnIngressReserveAdmitsASenderTheFullPoolWouldStarve) {
  // 26 kB with 2 kB reserved for each of the 3 ports: a 20 kB pool. Host 0 gets its reserve and
  // the pool (22 packets); host 1 still gets its own reserve (2 packets).
  EXPECT_EQ(admitted_while_paused(2'000), std::make_pair(size_t{22}, size_t{2}));
  // Without reserves host 0 takes all 26 kB and host 1 gets nothing.
  EXPECT_EQ(admitted_while_paused(0), std::make_pair(size_t{26}, size_t{0}));
}

TEST(FabricTwinBuffer, ReservesThatLeaveNothingToShareAreRefused) {
  config::FabricConfig config = quiet_fabric();
  config.buffer.size_bytes = 30'000;
  config.buffer.ingress_reserve_bytes = 10'000;
  clock::VirtualClock clock;
  const auto ports = uniform_ports(3);
  try {
    FabricTwin twin(config, ports, clock, 1);
    FAIL() << "expected the twin to refuse the reserves";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(),
                 "fabric twin: fabric.buffer.ingress_reserve: 3 ports x 10000 B of reserve leave "
                 "nothing of the 30000 B buffer of switch \"switch\" to share; lower the reserve "
                 "or raise fabric.buffer.size");
  }
}

// Two 100G -> 25G streams through one 4-port switch: hosts 0 -> 2 and 1 -> 3 (the second
// only when `both`).
std::pair<uint64_t, uint64_t> peak_depths(config::BufferMode mode, uint64_t size, double alpha = 1,
                                          bool both = true) {
  config::FabricConfig config = quiet_fabric();
  config.buffer.size_bytes = size;
  config.buffer.ingress_reserve_bytes = 0;
  config.buffer.mode = mode;
  config.buffer.alpha = alpha;
  clock::VirtualClock clock;
  std::vector<TwinPortSpec> ports{{"a", k100G}, {"b", k100G}, {"c", k25G}, {"d", k25G}};
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  for (uint32_t i = 0; i < 100; ++i) {
    driver.send(data_packet(0, 2, 1000, i));
    if (both) driver.send(data_packet(1, 3, 1000, i));
  }
  clock.run_until(clock::kNever);
  EXPECT_GT(twin.switch_port_counters(2).drops_buffer, 0u);
  if (both) {
    EXPECT_GT(twin.switch_port_counters(3).drops_buffer, 0u);
  }
  return {twin.queue(2, 0).max_depth_bytes, twin.queue(3, 0).max_depth_bytes};
}

TEST(FabricTwinBuffer, PerPortModeGivesEachPortAnEvenShare) {
  // 40 kB over 4 ports: 10 kB each, whatever the other port holds.
  EXPECT_EQ(peak_depths(config::BufferMode::kPerPort, 40'000),
            std::make_pair(uint64_t{10'000}, uint64_t{10'000}));
  // Shared, the two congested ports split the whole 40 kB between them.
  const auto shared = peak_depths(config::BufferMode::kShared, 40'000);
  EXPECT_EQ(shared.first + shared.second, 40'000u);
  EXPECT_EQ(shared.first, 20'000u);
}

TEST(FabricTwinBuffer, DynamicThresholdsBoundEachPortByAlphaTimesTheFreePool) {
  // A share may hold alpha x what the pool has free: alone, a port's queue q stops where
  // q + 1000 > alpha (40 kB - q), at 20 kB with alpha 1 (half the pool stays free for others)
  // at 13 kB with alpha 1/2 and at 36 kB with alpha 8.
  EXPECT_EQ(peak_depths(config::BufferMode::kDynamic, 40'000, 1, false).first, 20'000u);
  EXPECT_EQ(peak_depths(config::BufferMode::kDynamic, 40'000, 0.5, false).first, 13'000u);
  EXPECT_EQ(peak_depths(config::BufferMode::kDynamic, 40'000, 8, false).first, 36'000u);
  // Two congested ports with alpha 1 each end near 40 kB / 3, one frame apart at most, where a
  // shared pool gives each 20 kB and per-port shares 10 kB.
  const auto [first, second] = peak_depths(config::BufferMode::kDynamic, 40'000);
  EXPECT_GE(first, 13'000u);
  EXPECT_LE(first, 14'000u);
  EXPECT_GE(second, 13'000u);
  EXPECT_LE(second, 14'000u);
}

}  // namespace
}  // namespace etwire::twin::testing
