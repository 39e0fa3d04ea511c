// Frame taps (what a capture of the twin sees): a tap on a NIC port or a switch port sees every
// frame its counters count, each way, PFC frames included, at the times the ports handle them;
// a frame leaves as it was sent and arrives as the link left it.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "clock/virtual_clock.h"
#include "tests/twin/nic_driver.h"
#include "twin/fabric/fabric_twin.h"
#include "twin/frame_tap.h"

namespace etwire::twin::testing {
namespace {

constexpr uint8_t kLossless = 3;

struct Seen {
  nic::Packet packet;
  clock::Nanos at;
};

class RecordingTap final : public FrameTap {
 public:
  void departs(const nic::Packet& packet, clock::Nanos now) override {
    sent.push_back({packet, now});
  }
  void arrives(const nic::Packet& packet, clock::Nanos now) override {
    received.push_back({packet, now});
  }
  static size_t pfc(const std::vector<Seen>& frames) {
    size_t count = 0;
    for (const Seen& f : frames) count += f.packet.kind == nic::PacketKind::kPfcPause;
    return count;
  }
  std::vector<Seen> sent;
  std::vector<Seen> received;
};

// A fast sender into a slow receiver on one switch, lossless with PFC: the switch port facing
// the sender pauses it and resumes it.
config::FabricConfig pausing_fabric() {
  config::FabricConfig config = quiet_fabric();
  config.buffer.size_bytes = 1 << 20;
  config.buffer.ingress_reserve_bytes = 0;
  config.pfc.enabled = true;
  config.pfc.xoff_bytes = 20'000;
  config.pfc.xon_bytes = 10'000;
  config.pfc.priorities = {kLossless};
  return config;
}

const Endpoint kHost0{Endpoint::Kind::kHost, 0};
const Endpoint kSwitchPort0{Endpoint::Kind::kSwitchPort, 0};  // faces host 0
const Endpoint kSwitchPort1{Endpoint::Kind::kSwitchPort, 1};  // faces host 1

TEST(FrameTap, SeesEveryFrameItsPortCountsEachWayWithPfcFrames) {
  clock::VirtualClock clock;
  std::vector<TwinPortSpec> ports{{"fast", k100G}, {"slow", k25G}};
  FabricTwin twin(pausing_fabric(), ports, clock, 1);
  RecordingTap host, facing_sender, facing_receiver;
  twin.set_frame_tap(kHost0, &host);
  twin.set_frame_tap(kSwitchPort0, &facing_sender);
  twin.set_frame_tap(kSwitchPort1, &facing_receiver);
  NicDriver driver(twin, clock);
  constexpr uint32_t kSent = 200;
  for (uint32_t i = 0; i < kSent; ++i) driver.send(data_packet(0, 1, 1000, i, kLossless));
  clock.run_until(clock::kNever);

  const WireCounters& nic = twin.host_counters(0);
  EXPECT_EQ(host.sent.size(), nic.tx_packets);
  EXPECT_EQ(host.received.size(), nic.rx_packets);
  const WireCounters& sw0 = twin.switch_port_counters(0);
  EXPECT_EQ(facing_sender.sent.size(), sw0.tx_packets);
  EXPECT_EQ(facing_sender.received.size(), sw0.rx_packets);
  const WireCounters& sw1 = twin.switch_port_counters(1);
  EXPECT_EQ(facing_receiver.sent.size(), sw1.tx_packets);
  EXPECT_EQ(facing_receiver.received.size(), sw1.rx_packets);

  // The pauses: sent by the switch port facing the sender, received by the sender's NIC, at the
  // time the driver (the transport) got each.
  const auto pauses = driver.pfc_received_by(0);
  ASSERT_GE(pauses.size(), 2u);
  EXPECT_EQ(RecordingTap::pfc(facing_sender.sent), pauses.size());
  EXPECT_EQ(RecordingTap::pfc(facing_sender.sent), sw0.pfc_pauses_sent + sw0.pfc_resumes_sent);
  ASSERT_EQ(RecordingTap::pfc(host.received), pauses.size());
  for (size_t i = 0; i < pauses.size(); ++i) {
    EXPECT_EQ(host.received[i].at, pauses[i].at) << "pause " << i;
    EXPECT_EQ(host.received[i].packet.pfc_quanta, pauses[i].packet.pfc_quanta) << "pause " << i;
  }
  // Every data packet crossed the switch: in at port 0, out at port 1, in order.
  EXPECT_EQ(facing_sender.received.size(), kSent);
  ASSERT_EQ(facing_receiver.sent.size(), kSent);
  for (uint32_t i = 0; i < kSent; ++i) {
    EXPECT_EQ(facing_receiver.sent[i].packet.psn, i);
    EXPECT_GE(facing_receiver.sent[i].at, facing_sender.received[i].at);
  }
  EXPECT_EQ(host.sent.front().at, 0);
}

TEST(FrameTap, ARemovedTapSeesNothingAndAnUnknownPortIsRefused) {
  clock::VirtualClock clock;
  FabricTwin twin(quiet_fabric(), uniform_ports(2), clock, 1);
  RecordingTap tap;
  twin.set_frame_tap(kSwitchPort1, &tap);
  twin.set_frame_tap(kSwitchPort1, nullptr);
  NicDriver driver(twin, clock);
  driver.send(data_packet(0, 1, 1000, 0, 0));
  clock.run_until(clock::kNever);
  EXPECT_EQ(driver.data_received_by(1).size(), 1u);
  EXPECT_TRUE(tap.sent.empty());
  EXPECT_THROW(twin.set_frame_tap({Endpoint::Kind::kSwitchPort, 2}, &tap), std::out_of_range);
  EXPECT_THROW(twin.set_frame_tap({Endpoint::Kind::kHost, 2}, &tap), std::out_of_range);
}

TEST(FrameTap, AFrameLeavesAsSentAndArrivesAsTheLinkLeftIt) {
  clock::VirtualClock clock;
  config::FabricConfig config = quiet_fabric();
  config::FabricFault lossy;  // the cable to host 1 damages every frame
  lossy.kind = config::FaultKind::kLossy;
  lossy.key_path = "fabric.faults[0]";
  lossy.link = "switch/nic1";
  lossy.corrupt_probability = 1.0;
  config.faults.push_back(lossy);
  FabricTwin twin(config, uniform_ports(2), clock, 1);
  RecordingTap sender, receiver;
  twin.set_frame_tap(kSwitchPort1, &sender);
  twin.set_frame_tap({Endpoint::Kind::kHost, 1}, &receiver);
  NicDriver driver(twin, clock);
  driver.send(data_packet(0, 1, 1000, 0, 0));
  clock.run_until(clock::kNever);
  ASSERT_EQ(sender.sent.size(), 1u);
  EXPECT_FALSE(sender.sent[0].packet.icrc_bad);
  ASSERT_EQ(receiver.received.size(), 1u);
  EXPECT_TRUE(receiver.received[0].packet.icrc_bad);
  EXPECT_TRUE(driver.data_received_by(1).empty());  // the NIC discards it
}

}  // namespace
}  // namespace etwire::twin::testing
