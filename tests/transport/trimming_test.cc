// What receivers make of trimmed packets (fabric.trimming): the PSN is reported lost the moment
// its headers arrive, by a selective NAK (out-of-order receivers) or a go-back NAK (go-back-N),
// so a lost message tail costs a round trip instead of a retransmission timeout; and, end to end
// on the twin, an incast that overflows a switch completes with every trimmed packet counted
// alike at the switch, the receiver and in what was sent again.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/transport/one_message.h"
#include "tests/transport/twin_rig.h"
#include "transport/transport.h"

namespace etwire::transport {
namespace {

using testing::OneMessage;
using testing::send_one_message;

config::TransportConfig receiving(config::Receiver receiver) {
  config::TransportConfig config;
  config.pmtu = 1024;
  config.receiver = receiver;
  config.out_of_order = {1024, 8};
  return config;
}

constexpr config::Receiver kReceivers[] = {config::Receiver::kOutOfOrder,
                                           config::Receiver::kGoBackN};

TEST(TrimmedPackets, ATrimmedTailIsSentAgainWithoutATimeout) {
  for (const config::Receiver receiver : kReceivers) {
    SCOPED_TRACE(config::receiver_name(receiver));
    // Dropped, the last packet has nothing after it to show it missing: the timer finds it.
    const OneMessage dropped = send_one_message(receiving(receiver), 64, {63});
    EXPECT_EQ(dropped.sender.timeouts, 1u);
    const OneMessage trimmed = send_one_message(receiving(receiver), 64, {63}, true);
    EXPECT_EQ(trimmed.record.status, FlowStatus::kCompleted);
    EXPECT_EQ(trimmed.sender.timeouts, 0u);
    EXPECT_EQ(trimmed.record.retransmitted_packets, 1u);
    EXPECT_EQ(trimmed.receiver.naks_sent, 1u);
    EXPECT_EQ(trimmed.receiver.trimmed_packets, 1u);
    EXPECT_EQ(trimmed.receiver.missing_packets, 1u);
    EXPECT_LT(trimmed.record.finished_at, dropped.record.finished_at);
  }
}

TEST(TrimmedPackets, OutOfOrderReceiversAskForEachTrimmedPsnAtOnce) {
  // PSN 5 trimmed, and its resend too: both are reported as they arrive, no later PSN needs to
  // run loss_after past them, and no timer fires (a resend dropped twice waits for it).
  const OneMessage got =
      send_one_message(receiving(config::Receiver::kOutOfOrder), 64, {5, 5, 20}, true);
  EXPECT_EQ(got.record.status, FlowStatus::kCompleted);
  EXPECT_EQ(got.sender.timeouts, 0u);
  EXPECT_EQ(got.receiver.trimmed_packets, 3u);
  EXPECT_EQ(got.receiver.naks_sent, 3u);
  EXPECT_EQ(got.record.retransmitted_packets, 3u);
  EXPECT_EQ(std::count(got.psns.begin(), got.psns.end(), 5u), 3);
  EXPECT_EQ(std::count(got.psns.begin(), got.psns.end(), 20u), 2);
}

TEST(TrimmedPackets, GoBackNGoesBackToTheTrimmedPsn) {
  const OneMessage got = send_one_message(receiving(config::Receiver::kGoBackN), 64, {5}, true);
  EXPECT_EQ(got.record.status, FlowStatus::kCompleted);
  EXPECT_EQ(got.receiver.naks_sent, 1u);
  EXPECT_EQ(got.sender.timeouts, 0u);
  // The go-back starts at 5: PSN 5 is sent twice, and nothing before it.
  EXPECT_EQ(std::count(got.psns.begin(), got.psns.end(), 5u), 2);
  EXPECT_EQ(std::count(got.psns.begin(), got.psns.end(), 4u), 1);
}

// Three senders into one port of a single switch with a small lossy buffer and trimming on.
struct Incast {
  uint64_t switch_trimmed = 0;
  uint64_t switch_drops = 0;
  TransportPortCounters receiver;
  uint64_t retransmitted = 0;
  uint64_t timeouts = 0;
};

Incast trimmed_incast(config::Receiver receiver, bool trimming) {
  config::FabricConfig fabric;
  fabric.ecn.enabled = false;
  fabric.pfc.enabled = false;
  fabric.buffer.size_bytes = 64 * 1024;
  fabric.buffer.ingress_reserve_bytes = 0;
  fabric.trimming.enabled = trimming;
  testing::TwinRig rig(fabric, receiving(receiver), 4);
  for (const uint32_t src : {0u, 2u, 3u}) {
    rig.transport.post(rig.transport.connect(src, 1, static_cast<uint16_t>(49152 + src)), 1 << 20,
                       {});
  }
  rig.run();
  EXPECT_EQ(rig.observer.finished.size(), 3u);
  for (const FlowRecord& record : rig.observer.finished) {
    EXPECT_EQ(record.status, FlowStatus::kCompleted);
  }
  Incast out;
  const twin::WireCounters& egress =
      rig.twin.switch_port_counters(rig.twin.layout().host_switch_port(1));
  out.switch_trimmed = egress.trimmed;
  out.switch_drops = egress.drops_buffer;
  out.receiver = rig.transport.port_counters(1);
  for (const uint32_t src : {0u, 2u, 3u}) {
    out.retransmitted += rig.transport.port_counters(src).retransmitted_packets;
    out.timeouts += rig.transport.port_counters(src).timeouts;
  }
  return out;
}

TEST(TrimmedPackets, AnIncastThatOverflowsCompletesWithEveryTrimCounted) {
  const Incast dropped = trimmed_incast(config::Receiver::kOutOfOrder, false);
  EXPECT_GT(dropped.switch_drops, 0u);
  EXPECT_EQ(dropped.receiver.trimmed_packets, 0u);
  for (const config::Receiver receiver : kReceivers) {
    SCOPED_TRACE(config::receiver_name(receiver));
    const Incast got = trimmed_incast(receiver, true);
    EXPECT_GT(got.switch_trimmed, 0u);
    EXPECT_EQ(got.switch_drops, 0u);
    EXPECT_EQ(got.receiver.trimmed_packets, got.switch_trimmed);
    EXPECT_EQ(got.timeouts, 0u);
    if (receiver == config::Receiver::kOutOfOrder) {
      // Each trimmed packet is sent again, and only those.
      EXPECT_EQ(got.retransmitted, got.switch_trimmed);
      EXPECT_EQ(got.receiver.naks_sent, got.switch_trimmed);
    } else {
      EXPECT_GE(got.retransmitted, got.switch_trimmed);
    }
  }
}

}  // namespace
}  // namespace etwire::transport
