// The out-of-order receiver (transport.receiver: out-of-order): packets are placed by PSN, a
// lost one is reported on its own once later ones ran loss_after past it and is the only one
// sent again, reordering costs nothing, a tail loss falls back to the timer's go-back, and a
// window too small for what is in flight costs resends but completes.
#include <gtest/gtest.h>

#include <algorithm>

#include "clock/virtual_clock.h"
#include "tests/transport/ideal_wire.h"
#include "tests/transport/one_message.h"
#include "tests/transport/recording_observer.h"
#include "tests/transport/twin_rig.h"
#include "transport/transport.h"

namespace etwire::transport {
namespace {

using testing::OneMessage;
using testing::send_one_message;

config::TransportConfig out_of_order(uint32_t window, uint32_t loss_after) {
  config::TransportConfig config;
  config.pmtu = 1024;
  config.receiver = config::Receiver::kOutOfOrder;
  config.out_of_order = {window, loss_after};
  return config;
}

TEST(OutOfOrderReceiver, ALostPacketIsReportedOnItsOwnAndSentAloneAgain) {
  const OneMessage got = send_one_message(out_of_order(1024, 8), 64, {5});
  EXPECT_EQ(got.record.status, FlowStatus::kCompleted);
  EXPECT_EQ(got.record.retransmitted_packets, 1u);
  // PSN 5 is sent again right after the NAK that PSN 13's arrival drew, then the rest goes on.
  ASSERT_EQ(got.psns.size(), 65u);
  EXPECT_EQ(std::count(got.psns.begin(), got.psns.end(), 5u), 2);
  EXPECT_EQ(got.receiver.naks_sent, 1u);
  EXPECT_EQ(got.receiver.missing_packets, 1u);
  EXPECT_EQ(got.sender.timeouts, 0u);
  // Go-back-N resends everything after the loss that had left by the time the NAK came.
  config::TransportConfig go_back_n = out_of_order(1024, 8);
  go_back_n.receiver = config::Receiver::kGoBackN;
  const OneMessage classic = send_one_message(go_back_n, 64, {5});
  EXPECT_GT(classic.record.retransmitted_packets, 10u);
  EXPECT_LT(got.record.finished_at, classic.record.finished_at);
}

TEST(OutOfOrderReceiver, SprayedPsnsAreCountedOnTheirSender) {
  // With the QP's own port 0xC000, PSNs whose step is 0 (one in four) leave on it.
  config::TransportConfig config = out_of_order(1024, 8);
  config.entropy.mode = config::EntropyMode::kSpray;
  config.entropy.values = 4;
  const OneMessage got = send_one_message(config, 64, {});
  EXPECT_EQ(got.sender.sprayed_packets, 48u);
  EXPECT_EQ(got.receiver.reordered_packets, 0u);
  const OneMessage plain = send_one_message(out_of_order(1024, 8), 64, {});
  EXPECT_EQ(plain.sender.sprayed_packets, 0u);
}

TEST(OutOfOrderReceiver, EachOfSeveralLossesIsSentOnceAgain) {
  const OneMessage got = send_one_message(out_of_order(1024, 8), 64, {3, 4, 20, 40});
  EXPECT_EQ(got.record.status, FlowStatus::kCompleted);
  EXPECT_EQ(got.record.retransmitted_packets, 4u);
  EXPECT_EQ(got.receiver.naks_sent, 4u);
  EXPECT_EQ(got.sender.timeouts, 0u);
}

TEST(OutOfOrderReceiver, ALostResendOrTailWaitsForTheTimerAndGoesBack) {
  // The last packet has nothing after it to report it: the timer finds it.
  const OneMessage tail = send_one_message(out_of_order(1024, 8), 64, {63});
  EXPECT_EQ(tail.record.status, FlowStatus::kCompleted);
  EXPECT_EQ(tail.sender.timeouts, 1u);
  // PSN 5 lost twice: its resend too, which no later PSN reports.
  const OneMessage twice = send_one_message(out_of_order(1024, 8), 64, {5, 5});
  EXPECT_EQ(twice.record.status, FlowStatus::kCompleted);
  EXPECT_EQ(twice.sender.timeouts, 1u);
}

TEST(OutOfOrderReceiver, AWindowTooSmallCostsResendsButCompletes) {
  // With PSN 0 lost, PSNs 16 and on are past a 16-PSN window until it is resent: they are not
  // placed, and each is reported lost in turn.
  const OneMessage got = send_one_message(out_of_order(16, 8), 64, {0});
  EXPECT_EQ(got.record.status, FlowStatus::kCompleted);
  EXPECT_GT(got.record.retransmitted_packets, 1u);
  EXPECT_LT(got.record.retransmitted_packets, 64u);
}

// Port 0 sends one message to port 1, whose own receiver places out-of-order data, and one to
// port 2, which takes the transport's go-back-N; the wire loses PSN 5 of each once. The sender
// resends as each responder asks: the one PSN to port 1, everything after it to port 2.
TEST(OutOfOrderReceiver, EachPortReceivesAsItsOwnSettingSays) {
  config::TransportConfig config = out_of_order(1024, 8);
  config.receiver = config::Receiver::kGoBackN;
  config.port_receivers = {config::Receiver::kGoBackN, config::Receiver::kOutOfOrder,
                           config::Receiver::kGoBackN};
  clock::VirtualClock clock;
  testing::IdealWire wire(clock, 3, 100'000'000'000, 1'000);
  testing::RecordingObserver observer;
  Transport transport(config, clock, observer);
  for (size_t p = 0; p < 3; ++p) transport.add_port(wire.port(p), {}, {});
  std::vector<uint32_t> to_lose = {1, 2};  // the ports whose PSN 5 is still to be lost
  wire.set_hook([&to_lose](nic::Packet& packet, clock::Nanos) {
    const auto it = std::find(to_lose.begin(), to_lose.end(), packet.dst_port);
    if (!packet.is_data() || packet.psn != 5 || it == to_lose.end()) {
      return testing::Verdict::kDeliver;
    }
    to_lose.erase(it);
    return testing::Verdict::kDrop;
  });
  for (const uint32_t to : {1u, 2u}) {
    transport.post(transport.connect(0, to, static_cast<uint16_t>(49152 + to)), 64 * config.pmtu,
                   {});
  }
  while (!clock.idle()) clock.poll();
  ASSERT_EQ(observer.finished.size(), 2u);
  for (const FlowRecord& record : observer.finished) {
    SCOPED_TRACE(record.dst_port);
    EXPECT_EQ(record.status, FlowStatus::kCompleted);
    if (record.dst_port == 1) {
      EXPECT_EQ(record.retransmitted_packets, 1u);
    } else {
      EXPECT_GT(record.retransmitted_packets, 10u);
    }
  }
  EXPECT_EQ(transport.port_counters(1).naks_sent, 1u);
  EXPECT_EQ(transport.port_counters(1).missing_packets, 1u);
  EXPECT_EQ(transport.port_counters(2).naks_sent, 1u);
  EXPECT_EQ(transport.port_counters(0).timeouts, 0u);
}

// Two senders into one port of a single switch whose link to it swaps a frame with the one
// ahead of it now and then (a lossy fault's reordering): what the receiver made of it.
TransportPortCounters reordered_incast(config::Receiver receiver) {
  config::FabricConfig fabric;
  fabric.ecn.enabled = false;
  config::FabricFault reorder;
  reorder.kind = config::FaultKind::kLossy;
  reorder.link = "p1";
  reorder.reorder_probability = 0.05;
  fabric.faults.push_back(reorder);
  config::TransportConfig config = out_of_order(1024, 64);
  config.receiver = receiver;
  testing::TwinRig rig(fabric, config, 3);
  for (const uint32_t src : {0u, 2u}) {
    rig.transport.post(rig.transport.connect(src, 1, static_cast<uint16_t>(49152 + src)), 1 << 20,
                       {});
  }
  rig.run();
  EXPECT_EQ(rig.observer.finished.size(), 2u);
  for (const FlowRecord& record : rig.observer.finished) {
    EXPECT_EQ(record.status, FlowStatus::kCompleted);
  }
  EXPECT_GT(rig.twin.switch_port_counters(rig.twin.layout().host_switch_port(1)).reordered, 0u);
  TransportPortCounters total = rig.transport.port_counters(0);
  total.retransmitted_packets += rig.transport.port_counters(2).retransmitted_packets;
  total.naks_sent = rig.transport.port_counters(1).naks_sent;
  total.reordered_packets = rig.transport.port_counters(1).reordered_packets;
  return total;
}

TEST(OutOfOrderReceiver, ReorderedPacketsArePlacedWhereGoBackNResends) {
  const TransportPortCounters placed = reordered_incast(config::Receiver::kOutOfOrder);
  EXPECT_EQ(placed.retransmitted_packets, 0u);
  EXPECT_EQ(placed.naks_sent, 0u);
  EXPECT_GT(placed.reordered_packets, 0u);
  const TransportPortCounters classic = reordered_incast(config::Receiver::kGoBackN);
  EXPECT_GT(classic.retransmitted_packets, 0u);
  EXPECT_GT(classic.naks_sent, 0u);
  // Each overtaken packet arrives ahead of the one it overtook, whatever the receiver does next.
  EXPECT_GT(classic.reordered_packets, 0u);
}

}  // namespace
}  // namespace etwire::transport
