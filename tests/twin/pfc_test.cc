// PFC (IEEE 802.1Qbb, spec 3.6): switch ingress accounting pauses the upstream device above XOFF
// and resumes it at XON; pauses reach the NIC's receiver and the test driver (playing the
// transport) honours them; switch egress ports honour pauses; an incast that drops without PFC
// loses nothing with it; a NIC port can storm pauses.
#include <gtest/gtest.h>

#include <functional>
#include <utility>

#include "clock/virtual_clock.h"
#include "nic/pfc_frame.h"
#include "tests/twin/nic_driver.h"
#include "twin/fabric/fabric_twin.h"

namespace etwire::twin::testing {
namespace {

constexpr uint8_t kLossless = 3;

config::FabricConfig pfc_fabric(bool enabled, uint64_t buffer_bytes) {
  config::FabricConfig config = quiet_fabric();
  config.buffer.size_bytes = buffer_bytes;
  config.buffer.ingress_reserve_bytes = 0;
  config.pfc.enabled = enabled;
  config.pfc.xoff_bytes = 20'000;
  config.pfc.xon_bytes = 10'000;
  config.pfc.priorities = {kLossless};
  return config;
}

TEST(FabricTwinPfc, XoffPausesTheSenderAndXonResumesIt) {
  clock::VirtualClock clock;
  std::vector<TwinPortSpec> ports{{"fast", k100G}, {"slow", k25G}};
  FabricTwin twin(pfc_fabric(true, 1 << 20), ports, clock, 1);
  NicDriver driver(twin, clock);
  constexpr uint32_t kSent = 200;
  for (uint32_t i = 0; i < kSent; ++i) driver.send(data_packet(0, 1, 1000, i, kLossless));
  clock.run_until(clock::kNever);

  // Packet k reaches the switch at 1580 + 80 k; the egress starts one every 320 ns from 1580.
  // After packet k arrives the ingress account holds k + 1 - ceil(k / 4) packets: it first goes
  // above XOFF (20 packets) at k = 27, t = 3740. The pause (84 B, 6.72 ns) leaves at once and
  // reaches the NIC at 3747 + 1000.
  const auto pauses = driver.pfc_received_by(0);
  ASSERT_GE(pauses.size(), 2u);
  EXPECT_EQ(pauses[0].at, 4747);
  EXPECT_EQ(pauses[0].packet.pfc_priority, kLossless);
  EXPECT_EQ(pauses[0].packet.pfc_quanta, 0xFFFF);
  EXPECT_EQ(pauses[0].packet.wire_bytes, 84u);
  // The NIC finishes packet 59 (4720 .. 4800) and starts nothing more. The switch holds packets
  // up to 59; the account falls to XON (10 packets) when packet 49 starts on the egress at
  // 1580 + 320 x 49 = 17260, and the resume reaches the NIC at 17267 + 1000.
  EXPECT_EQ(pauses[1].at, 18267);
  EXPECT_EQ(pauses[1].packet.pfc_quanta, 0);
  const auto& starts = driver.start_times(0);
  EXPECT_EQ(starts[59], 59 * 80);
  EXPECT_EQ(starts[60], 18267);

  // Lossless: everything arrives, in order; pauses alternate with resumes.
  const auto received = driver.data_received_by(1);
  ASSERT_EQ(received.size(), kSent);
  for (uint32_t i = 0; i < kSent; ++i) EXPECT_EQ(received[i].packet.psn, i);
  for (size_t i = 0; i < pauses.size(); ++i) {
    EXPECT_EQ(pauses[i].packet.pfc_quanta, i % 2 == 0 ? 0xFFFF : 0) << "frame " << i;
  }
  const WireCounters& switch_side = twin.switch_port_counters(0);
  const WireCounters& nic_side = twin.host_counters(0);
  EXPECT_EQ(switch_side.pfc_pauses_sent + switch_side.pfc_resumes_sent, pauses.size());
  EXPECT_EQ(nic_side.pfc_pauses_received, switch_side.pfc_pauses_sent);
  EXPECT_EQ(nic_side.pfc_resumes_received, switch_side.pfc_resumes_sent);
  EXPECT_EQ(twin.switch_port_counters(1).drops(), 0u);
}

struct IncastResult {
  size_t delivered = 0;
  uint64_t drops = 0;
  std::vector<size_t> pauses_per_sender;
  std::vector<size_t> resumes_per_sender;
};

// Four 100G senders, 200 x 1000 B each, into one 100G port through a 400 kB buffer: the sink
// drains a quarter of what arrives, so without PFC the queue needs ~600 kB and overflows.
IncastResult run_incast(bool pfc) {
  clock::VirtualClock clock;
  const auto ports = uniform_ports(5);
  FabricTwin twin(pfc_fabric(pfc, 400'000), ports, clock, 1);
  NicDriver driver(twin, clock);
  for (uint32_t i = 0; i < 200; ++i) {
    for (uint32_t sender = 0; sender < 4; ++sender) {
      driver.send(data_packet(sender, 4, 1000, i, kLossless));
    }
  }
  clock.run_until(clock::kNever);
  IncastResult result;
  result.delivered = driver.data_received_by(4).size();
  result.drops = twin.switch_port_counters(4).drops_buffer;
  for (uint32_t sender = 0; sender < 4; ++sender) {
    size_t pauses = 0;
    size_t resumes = 0;
    for (const Delivery& d : driver.pfc_received_by(sender)) {
      ++(d.packet.pfc_quanta != 0 ? pauses : resumes);
    }
    result.pauses_per_sender.push_back(pauses);
    result.resumes_per_sender.push_back(resumes);
  }
  EXPECT_EQ(twin.packets_in_fabric(), 0u);
  return result;
}

TEST(FabricTwinPfc, IncastThatDropsWithoutPfcLosesNothingWithIt) {
  const IncastResult lossy = run_incast(false);
  EXPECT_GT(lossy.drops, 0u);
  EXPECT_EQ(lossy.delivered + lossy.drops, 800u);

  const IncastResult lossless = run_incast(true);
  EXPECT_EQ(lossless.drops, 0u);
  EXPECT_EQ(lossless.delivered, 800u);
  for (uint32_t sender = 0; sender < 4; ++sender) {
    EXPECT_GT(lossless.pauses_per_sender[sender], 0u) << "sender " << sender;
    EXPECT_EQ(lossless.resumes_per_sender[sender], lossless.pauses_per_sender[sender]);
  }
}

TEST(FabricTwinPfc, PausesAreRefreshedWhileTheAccountStaysAboveXon) {
  // A sender that ignores pauses into a slow port: the account stays above XON for as long as
  // the backlog takes to drain, far longer than one pause lifetime (335.54 us at 100G), so the
  // switch re-sends the pause every half lifetime (167.77 us).
  clock::VirtualClock clock;
  std::vector<TwinPortSpec> ports{{"fast", k100G}, {"slow", k25G}};
  FabricTwin twin(pfc_fabric(true, 64 << 20), ports, clock, 1);
  NicDriver driver(twin, clock);
  driver.set_honour_pfc(false);
  for (uint32_t i = 0; i < 4000; ++i) driver.send(data_packet(0, 1, 1000, i, kLossless));
  clock.run_until(clock::kNever);
  const auto pauses = driver.pfc_received_by(0);
  // 4000 packets drain in 1.28 ms at 25G: the first pause at 4747, refreshes 167'770 ns apart.
  ASSERT_GE(pauses.size(), 8u);
  EXPECT_EQ(pauses[0].at, 4747);
  for (size_t i = 1; i + 1 < pauses.size(); ++i) {
    EXPECT_EQ(pauses[i].packet.pfc_quanta, 0xFFFF);
    EXPECT_EQ(pauses[i].at - pauses[i - 1].at, 167'770) << "refresh " << i;
  }
  EXPECT_EQ(pauses.back().packet.pfc_quanta, 0);
  EXPECT_EQ(driver.data_received_by(1).size(), 4000u);
}

TEST(FabricTwinPfc, LosslessTrafficIsDroppedAndCountedWhenTheBufferIsReallyExhausted) {
  // XOFF above the whole buffer: PFC cannot act in time, so the buffer overflows anyway.
  config::FabricConfig config = pfc_fabric(true, 5'000);
  clock::VirtualClock clock;
  std::vector<TwinPortSpec> ports{{"fast", k100G}, {"slow", k25G}};
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  for (uint32_t i = 0; i < 100; ++i) driver.send(data_packet(0, 1, 1000, i, kLossless));
  clock.run_until(clock::kNever);
  const uint64_t drops = twin.switch_port_counters(1).drops_buffer;
  EXPECT_GT(drops, 0u);
  EXPECT_EQ(driver.data_received_by(1).size() + drops, 100u);
  EXPECT_EQ(twin.queue(1, kLossless).drops, drops);
}

TEST(FabricTwinPfc, PerPortBufferChargesLosslessTrafficToItsIngressShare) {
  // Per-port: 3 ports x 60 kB. Lossless traffic of two senders into one port is charged to each
  // sender's ingress share, which PFC bounds, so the egress queue may exceed one share.
  config::FabricConfig config = pfc_fabric(true, 180'000);
  config.buffer.mode = config::BufferMode::kPerPort;
  clock::VirtualClock clock;
  const auto ports = uniform_ports(3);
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  for (uint32_t i = 0; i < 300; ++i) {
    driver.send(data_packet(0, 2, 1000, i, kLossless));
    driver.send(data_packet(1, 2, 1000, i, kLossless));
  }
  clock.run_until(clock::kNever);
  EXPECT_EQ(driver.data_received_by(2).size(), 600u);
  EXPECT_EQ(twin.switch_port_counters(2).drops(), 0u);
  EXPECT_GT(twin.queue(2, kLossless).max_depth_bytes, 60'000u);
}

TEST(FabricTwinPfc, SwitchesPauseEachOtherAcrossALeafSpineFabric) {
  // Host 0 (leaf 0) streams into a 25G host 2 (leaf 1) through the spine: leaf 1 pauses the
  // spine, the spine pauses leaf 0, leaf 0 pauses the host. Nothing is lost.
  config::FabricConfig config = pfc_fabric(true, 1 << 20);
  config.topology = config::Topology::kLeafSpine;
  config.leaf_spine.ports_per_leaf = 2;
  config.leaf_spine.spines = 1;
  config.leaf_spine.uplink_speed_bps = k100G;
  clock::VirtualClock clock;
  std::vector<TwinPortSpec> ports{{"a", k100G}, {"b", k100G}, {"c", k25G}, {"d", k100G}};
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  for (uint32_t i = 0; i < 1000; ++i) driver.send(data_packet(0, 2, 1000, i, kLossless));
  clock.run_until(clock::kNever);

  ASSERT_EQ(driver.data_received_by(2).size(), 1000u);
  const FabricLayout& layout = twin.layout();
  const WireCounters& leaf1_up = twin.switch_port_counters(layout.uplink_port(1, 0));
  const WireCounters& spine_to_leaf1 = twin.switch_port_counters(layout.spine_port(0, 1));
  const WireCounters& spine_to_leaf0 = twin.switch_port_counters(layout.spine_port(0, 0));
  const WireCounters& leaf0_up = twin.switch_port_counters(layout.uplink_port(0, 0));
  EXPECT_GT(leaf1_up.pfc_pauses_sent, 0u);
  EXPECT_EQ(spine_to_leaf1.pfc_pauses_received, leaf1_up.pfc_pauses_sent);
  EXPECT_GT(spine_to_leaf0.pfc_pauses_sent, 0u);
  EXPECT_EQ(leaf0_up.pfc_pauses_received, spine_to_leaf0.pfc_pauses_sent);
  EXPECT_GT(twin.host_counters(0).pfc_pauses_received, 0u);
  uint64_t drops = 0;
  for (size_t port = 0; port < layout.switch_ports(); ++port) {
    drops += twin.switch_port_counters(port).drops();
  }
  EXPECT_EQ(drops, 0u);
}

TEST(FabricTwinPfc, StormFromANicHoldsTheClassAtItsSwitchPort) {
  config::FabricConfig config = pfc_fabric(true, 1 << 20);
  clock::VirtualClock clock;
  const auto ports = uniform_ports(2);
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  twin.start_pfc_storm(1, kLossless, 10'000, 400'000);
  driver.send(data_packet(0, 1, 1000, 1, kLossless), 0);       // before the storm
  driver.send(data_packet(0, 1, 1000, 2, kLossless), 20'000);  // during it
  driver.send(data_packet(0, 1, 1000, 3, 0), 20'080);          // another class
  clock.run_until(100'000);
  const QueueSample held = twin.queue(twin.layout().host_switch_port(1), kLossless);
  EXPECT_TRUE(held.paused);
  EXPECT_EQ(held.depth_packets, 1u);
  clock.run_until(clock::kNever);

  // Storm pauses leave the NIC at 10'000, 177'770 and 345'540 (half a lifetime apart, the next
  // would be past 400'000); each takes 7 ns on the wire and 1000 ns to the switch, and holds the
  // class for 335'540 ns. The last one runs out at 346'547 + 335'540 = 682'087.
  const auto received = driver.data_received_by(1);
  ASSERT_EQ(received.size(), 3u);
  EXPECT_EQ(received[0].packet.psn, 1u);
  EXPECT_EQ(received[0].at, 2660);
  EXPECT_EQ(received[1].packet.psn, 3u);  // class 0 is not paused
  EXPECT_EQ(received[1].at, 20'080 + 2660);
  EXPECT_EQ(received[2].packet.psn, 2u);
  EXPECT_EQ(received[2].at, 682'087 + 80 + 1000);
  EXPECT_EQ(twin.host_counters(1).pfc_pauses_sent, 3u);
  EXPECT_EQ(twin.switch_port_counters(1).pfc_pauses_received, 3u);
}

// Runs a callback at a given virtual time (a test's way to act in the middle of a run).
class Timed final : public clock::EventHandler {
 public:
  explicit Timed(std::function<void(clock::Nanos)> action) : action_(std::move(action)) {}
  void on_event(uint64_t, clock::Nanos now) override { action_(now); }

 private:
  std::function<void(clock::Nanos)> action_;
};

TEST(FabricTwinPfc, ResumeFromTheNicReleasesThePausedClassAtOnce) {
  config::FabricConfig config = pfc_fabric(true, 1 << 20);
  clock::VirtualClock clock;
  const auto ports = uniform_ports(2);
  FabricTwin twin(config, ports, clock, 1);
  NicDriver driver(twin, clock);
  twin.port(1).transmit(nic::pfc_frame(1, 1, kLossless, 0xFFFF),
                        0);  // reaches the switch at 7 + 1000
  driver.send(data_packet(0, 1, 1000, 1, kLossless), 0);
  Timed resume([&](clock::Nanos now) {
    EXPECT_TRUE(driver.data_received_by(1).empty());
    twin.port(1).transmit(nic::pfc_frame(1, 1, kLossless, 0), now);
  });
  clock.run_at(50'000, &resume, 0);
  clock.run_until(clock::kNever);
  const auto received = driver.data_received_by(1);
  ASSERT_EQ(received.size(), 1u);
  // The resume reaches the switch 1007 ns after it was sent; the packet leaves at once.
  EXPECT_EQ(received[0].at, 50'000 + 1007 + 80 + 1000);
  EXPECT_EQ(twin.switch_port_counters(1).pfc_pauses_received, 1u);
  EXPECT_EQ(twin.switch_port_counters(1).pfc_resumes_received, 1u);
  EXPECT_EQ(twin.host_counters(1).pfc_resumes_sent, 1u);
}

}  // namespace
}  // namespace etwire::twin::testing
