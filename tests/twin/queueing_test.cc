// Switch egress queues: strict priority between classes, a queue that builds when two senders
// share one port and drains at exactly the egress rate, and the depth statistics telemetry reads.
#include <gtest/gtest.h>

#include "clock/virtual_clock.h"
#include "tests/twin/nic_driver.h"
#include "twin/fabric/fabric_twin.h"

namespace etwire::twin::testing {
namespace {

TEST(FabricTwinQueueing, HigherClassOvertakesWaitingLowerClass) {
  clock::VirtualClock clock;
  std::vector<TwinPortSpec> ports{{"low", k100G}, {"high", 400'000'000'000}, {"sink", k100G}};
  FabricTwin twin(quiet_fabric(), ports, clock, 1);
  NicDriver driver(twin, clock);
  // 20 class-0 packets from t=0 (they reach the egress at 1580 + 80 k, as fast as it drains),
  // 5 class-5 packets from t=500 at 400 Gb/s (20 ns each: at the switch at 2020 .. 2100).
  for (uint32_t i = 0; i < 20; ++i) driver.send(data_packet(0, 2, 1000, i, 0));
  for (uint32_t i = 0; i < 5; ++i) driver.send(data_packet(1, 2, 1000, 100 + i, 5), 500);
  clock.run_until(clock::kNever);

  const auto received = driver.data_received_by(2);
  ASSERT_EQ(received.size(), 25u);
  // Class-0 packet 5 is on the egress wire (1980 .. 2060) when the first class-5 packet arrives;
  // from 2060 on the class-5 packets go first, then class 0 resumes with packet 6.
  std::vector<uint32_t> order;
  for (const Delivery& d : received) order.push_back(d.packet.psn);
  std::vector<uint32_t> expected{0, 1, 2, 3, 4, 5, 100, 101, 102, 103, 104};
  for (uint32_t i = 6; i < 20; ++i) expected.push_back(i);
  EXPECT_EQ(order, expected);
  // The egress never idles: deliveries are 80 ns apart from the first at 2660.
  for (size_t i = 0; i < received.size(); ++i) {
    EXPECT_EQ(received[i].at, 2660 + 80 * static_cast<clock::Nanos>(i)) << "delivery " << i;
  }
}

TEST(FabricTwinQueueing, TwoSendersIntoOnePortBuildAQueueThatDrainsAtTheEgressRate) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(3);
  FabricTwin twin(quiet_fabric(), ports, clock, 1);
  NicDriver driver(twin, clock);
  constexpr uint32_t kEach = 100;
  for (uint32_t i = 0; i < kEach; ++i) {
    driver.send(data_packet(0, 2, 4178, i));
    driver.send(data_packet(1, 2, 4178, 1000 + i));
  }
  clock.run_until(clock::kNever);

  const auto received = driver.data_received_by(2);
  ASSERT_EQ(received.size(), 2 * kEach);
  // Both first packets reach the switch at 1835; from then the egress wire is never idle, so
  // delivery i is the end of i + 1 back-to-back packets of 334.24 ns after 1835, plus 1000 ns.
  for (uint64_t i = 0; i < received.size(); ++i) {
    const auto exact_end = static_cast<clock::Nanos>((4178 * 8 * (i + 1) + 99) / 100);
    EXPECT_EQ(received[i].at, 1835 + exact_end + 1000) << "delivery " << i;
  }
  // Each sender keeps its own order.
  uint32_t next_a = 0;
  uint32_t next_b = 1000;
  for (const Delivery& d : received) {
    if (d.packet.src_port == 0) {
      EXPECT_EQ(d.packet.psn, next_a++);
    } else {
      EXPECT_EQ(d.packet.psn, next_b++);
    }
  }

  // Arrivals at twice the drain rate: about half of what arrived still waits when the last
  // packet arrives, so the queue peaks near 100 packets and then drains linearly to zero.
  const QueueSample sample = twin.queue(2, 0);
  EXPECT_EQ(sample.depth_bytes, 0u);
  EXPECT_EQ(sample.depth_packets, 0u);
  EXPECT_EQ(sample.enqueued_packets, 2 * kEach);
  EXPECT_GE(sample.max_depth_bytes, 98u * 4178);
  EXPECT_LE(sample.max_depth_bytes, 101u * 4178);
  // A triangle over the busy period (about 96% of the run): the average is near half the peak.
  EXPECT_GT(sample.average_depth_bytes, 0.4 * static_cast<double>(sample.max_depth_bytes));
  EXPECT_LT(sample.average_depth_bytes, 0.5 * static_cast<double>(sample.max_depth_bytes));
  EXPECT_EQ(twin.switch_port_counters(2).tx_packets, 2 * kEach);
  EXPECT_EQ(twin.switch_port_counters(2).drops(), 0u);
}

TEST(FabricTwinQueueing, ForEachQueueVisitsEveryPortAndClass) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(3);
  FabricTwin twin(quiet_fabric(), ports, clock, 1);
  NicDriver driver(twin, clock);
  for (uint32_t i = 0; i < 10; ++i) driver.send(data_packet(0, 2, 1000, i, 4));
  for (uint32_t i = 0; i < 10; ++i) driver.send(data_packet(1, 2, 1000, i, 4));
  clock.run_until(1700);

  size_t visited = 0;
  uint64_t waiting = 0;
  twin.for_each_queue([&](const QueueSample& sample) {
    EXPECT_EQ(sample.switch_port, visited / 8);
    EXPECT_EQ(sample.priority, visited % 8);
    waiting += sample.depth_bytes;
    ++visited;
  });
  EXPECT_EQ(visited, 3u * 8);
  // The first pair reached the egress at 1580, the second at 1660, when the first packet had
  // left and the second had started: two of the four wait.
  EXPECT_EQ(waiting, 2000u);
  EXPECT_EQ(twin.queue(2, 4).depth_packets, 2u);
}

}  // namespace
}  // namespace etwire::twin::testing
