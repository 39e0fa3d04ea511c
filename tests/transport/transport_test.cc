// The transport over an ideal wire (no switch): exact timing, packet contents, acknowledgement,
// go-back-N, retry exhaustion, CNPs and PFC pauses.
#include "transport/transport.h"

#include <gtest/gtest.h>

#include <iostream>
#include <set>
#include <string>

#include "tests/transport/packet_sizes.h"

#include "clock/line_rate.h"
#include "clock/virtual_clock.h"
#include "nic/frame_size.h"
#include "nic/pfc_frame.h"
#include "tests/transport/ideal_wire.h"
#include "tests/transport/recording_observer.h"
#include "transport/psn.h"
#include "transport/retransmit_timing.h"

namespace etwire::transport {
namespace {

using clock::Nanos;
using testing::IdealWire;
using testing::RecordingObserver;
using testing::Verdict;
using testing::wire_bytes_of;

constexpr uint64_t k100G = 100'000'000'000;
constexpr Nanos kDelay = 1'000;

struct Rig {
  explicit Rig(config::TransportConfig transport_config = {}, size_t port_count = 2)
      : config(transport_config),
        wire(clock, port_count, k100G, kDelay),
        transport(config, clock, observer) {
    for (size_t i = 0; i < port_count; ++i) transport.add_port(wire.port(i), {}, {});
  }
  void run() {
    while (!clock.idle()) clock.poll();
  }
  // The wire sets CE on every data packet, as a congested queue would.
  void mark_every_data_packet() {
    wire.set_hook([](nic::Packet& packet, Nanos) {
      if (packet.is_data()) packet.ecn = nic::ecn::kCe;
      return Verdict::kDeliver;
    });
  }
  std::vector<nic::Packet> data_sent() const {
    std::vector<nic::Packet> data;
    for (const auto& sent : wire.sent()) {
      if (sent.packet.is_data()) data.push_back(sent.packet);
    }
    return data;
  }
  // When the first data packet started on the wire, -1 if none did.
  Nanos first_data_sent_at() const {
    for (const auto& sent : wire.sent()) {
      if (sent.packet.is_data()) return sent.at;
    }
    return -1;
  }

  config::TransportConfig config;
  clock::VirtualClock clock;
  IdealWire wire;
  RecordingObserver observer;
  Transport transport;
};

// A 1024-rank all-to-all holds a million connections and flows at once: the state of one
// connection (both halves) and one flow in progress stays within 512 bytes.
TEST(Transport, ConnectionAndFlowStateFitTheBudget) {
  std::cout << "connection " << Transport::connection_state_bytes() << " bytes, flow "
            << Transport::flow_state_bytes() << " bytes\n";
  EXPECT_LE(Transport::connection_state_bytes() + Transport::flow_state_bytes(), 512u);
}

TEST(Transport, OneFlowTimingIsExact) {
  Rig rig;
  const auto connection = rig.transport.connect(0, 1, 49152);
  rig.transport.post(connection, 3 * 4096 + 100, {});
  rig.run();

  ASSERT_EQ(rig.observer.finished.size(), 1u);
  const FlowRecord& record = rig.observer.finished[0];
  EXPECT_EQ(record.status, FlowStatus::kCompleted);
  EXPECT_EQ(record.packets, 4u);
  EXPECT_EQ(record.posted_at, 0);
  EXPECT_EQ(record.first_byte_out, 0);
  // Four packets back to back at 100 Gb/s, then one propagation delay.
  const uint64_t bytes = wire_bytes_of(nic::opcode::kWriteFirst, 4096) +
                         2 * wire_bytes_of(nic::opcode::kWriteMiddle, 4096) +
                         wire_bytes_of(nic::opcode::kWriteLastWithImmediate, 100);
  EXPECT_EQ(bytes, (4096u + 98) + 2 * (4096u + 82) + (100u + 86));
  const Nanos delivered = clock::LineRateTimer::duration(bytes, k100G) + kDelay;
  EXPECT_EQ(record.delivered_at, delivered);
  EXPECT_EQ(record.fct(), delivered);
  // The ACK leaves at delivery (the wire back is idle) and takes its own serialization + delay.
  const Nanos ack =
      clock::LineRateTimer::duration(wire_bytes_of(nic::opcode::kAcknowledge, 0), k100G);
  EXPECT_EQ(record.finished_at, delivered + ack + kDelay);
  EXPECT_EQ(record.retransmitted_packets, 0u);
  EXPECT_EQ(rig.observer.delivered.size(), 1u);
  EXPECT_EQ(rig.transport.flows_in_progress(), 0u);
}

// transport.entropy spray: the source port moves on every `every` PSNs through `values` ports
// and wraps; a retransmitted packet carries its first copy's port.
TEST(Transport, SprayedEntropyFollowsThePsn) {
  config::TransportConfig config;
  config.pmtu = 1024;
  config.entropy = {config::EntropyMode::kSpray, 2, 3};
  Rig rig(config);
  bool dropped = false;
  rig.wire.set_hook([&dropped](nic::Packet& packet, clock::Nanos) {
    // Lose PSN 5 once: go-back-N resends 5 onwards.
    if (packet.kind == nic::PacketKind::kRoce && packet.psn == 5 && !dropped) {
      dropped = true;
      return Verdict::kDrop;
    }
    return Verdict::kDeliver;
  });
  const auto connection = rig.transport.connect(0, 1, 0xFFFE);
  rig.transport.post(connection, 8 * 1024, {});
  rig.run();
  const auto data = rig.data_sent();
  ASSERT_GT(data.size(), 8u);
  for (const nic::Packet& packet : data) {
    // Ports 0xFFFE, 0xFFFF, then 0xC000 (the low 14 bits wrap), two PSNs each, then again.
    const uint16_t expected[] = {0xFFFE, 0xFFFF, 0xC000};
    EXPECT_EQ(packet.udp_source_port, expected[(packet.psn / 2) % 3]) << "PSN " << packet.psn;
  }
  EXPECT_TRUE(dropped);
}

TEST(Transport, PacketsCarryOpcodesPsnsAndAckRequests) {
  config::TransportConfig config;
  config.pmtu = 1024;
  config.ack_interval = 4;
  Rig rig(config);
  const auto connection = rig.transport.connect(0, 1, 777);
  rig.transport.post(connection, 10 * 1024, {});
  rig.transport.post(connection, 1, {});
  rig.run();
  const auto data = rig.data_sent();
  ASSERT_EQ(data.size(), 11u);
  for (uint32_t i = 0; i < data.size(); ++i) {
    EXPECT_EQ(data[i].psn, i);
    EXPECT_EQ(data[i].udp_source_port, 777);
    EXPECT_EQ(data[i].dest_qpn, connection.responder);
    EXPECT_EQ(data[i].ecn, nic::ecn::kEct0);
    EXPECT_EQ(data[i].priority, 3);
    const bool ack_request = (data[i].bth_flags & nic::bth_flag::kAckRequest) != 0;
    // Every 4th PSN (3, 7) and the last packet of each message (9, 10).
    EXPECT_EQ(ack_request, i == 3 || i == 7 || i == 9 || i == 10) << "psn " << i;
  }
  EXPECT_EQ(data[0].opcode, nic::opcode::kWriteFirst);
  EXPECT_EQ(data[0].reth_length, 10u * 1024);
  EXPECT_EQ(data[5].opcode, nic::opcode::kWriteMiddle);
  EXPECT_EQ(data[9].opcode, nic::opcode::kWriteLastWithImmediate);
  EXPECT_EQ(data[10].opcode, nic::opcode::kWriteOnlyWithImmediate);
  EXPECT_EQ(data[10].payload_bytes, 1u);
  // Acknowledgements: one per AckReq, coalescing the packets before it.
  EXPECT_EQ(rig.transport.port_counters(1).acks_sent, 4u);
  ASSERT_EQ(rig.observer.finished.size(), 2u);
  EXPECT_EQ(rig.observer.finished[0].packets, 10u);
  EXPECT_EQ(rig.observer.finished[1].packets, 1u);
}

TEST(Transport, SendAndPlainWriteOpcodes) {
  for (const auto op : {config::RdmaOp::kSend, config::RdmaOp::kWrite}) {
    config::TransportConfig config;
    config.op = op;
    Rig rig(config);
    const auto connection = rig.transport.connect(0, 1, 1);
    rig.transport.post(connection, 3 * 4096, {});
    rig.transport.post(connection, 0, {});
    rig.run();
    const auto data = rig.data_sent();
    ASSERT_EQ(data.size(), 4u);
    const bool send = op == config::RdmaOp::kSend;
    EXPECT_EQ(data[0].opcode, send ? nic::opcode::kSendFirst : nic::opcode::kWriteFirst);
    EXPECT_EQ(data[1].opcode, send ? nic::opcode::kSendMiddle : nic::opcode::kWriteMiddle);
    EXPECT_EQ(data[2].opcode, send ? nic::opcode::kSendLast : nic::opcode::kWriteLast);
    // An empty message is one packet without payload.
    EXPECT_EQ(data[3].opcode, send ? nic::opcode::kSendOnly : nic::opcode::kWriteOnly);
    EXPECT_EQ(data[3].payload_bytes, 0u);
    ASSERT_EQ(rig.observer.finished.size(), 2u);
    EXPECT_EQ(rig.observer.finished[1].bytes, 0u);
    EXPECT_EQ(rig.observer.finished[1].status, FlowStatus::kCompleted);
  }
}

TEST(Transport, QueuePairsOfAPortShareTheLineRoundRobin) {
  Rig rig;
  const auto a = rig.transport.connect(0, 1, 1);
  const auto b = rig.transport.connect(0, 1, 2);
  rig.transport.post(a, 8 * 4096, {});
  rig.transport.post(b, 8 * 4096, {});
  rig.run();
  const auto data = rig.data_sent();
  ASSERT_EQ(data.size(), 16u);
  // QP a was alone for its first packet; from then on the two alternate.
  EXPECT_EQ(data[0].dest_qpn, a.responder);
  for (size_t i = 1; i < data.size() - 1; ++i) {
    EXPECT_EQ(data[i].dest_qpn, i % 2 == 1 ? a.responder : b.responder) << i;
  }
  EXPECT_EQ(data.back().dest_qpn, b.responder);
  // Back to back on the sender's wire: the last packet starts when 15 packets have been sent.
  const auto& sent = rig.wire.sent();
  Nanos last_data_start = 0;
  for (const auto& s : sent) {
    if (s.packet.is_data()) last_data_start = s.at;
  }
  const uint64_t before_last = 2 * wire_bytes_of(nic::opcode::kWriteFirst, 4096) +
                               12 * wire_bytes_of(nic::opcode::kWriteMiddle, 4096) +
                               wire_bytes_of(nic::opcode::kWriteLastWithImmediate, 4096);
  EXPECT_EQ(last_data_start, clock::LineRateTimer::duration(before_last, k100G));
}

TEST(Transport, NakTriggersGoBackN) {
  config::TransportConfig config;
  config.pmtu = 1024;
  Rig rig(config);
  rig.wire.set_hook(testing::drop_once(5));
  const auto connection = rig.transport.connect(0, 1, 1);
  rig.transport.post(connection, 64 * 1024, {});
  rig.run();
  ASSERT_EQ(rig.observer.finished.size(), 1u);
  const FlowRecord& record = rig.observer.finished[0];
  EXPECT_EQ(record.status, FlowStatus::kCompleted);
  EXPECT_EQ(rig.transport.port_counters(1).naks_sent, 1u);
  EXPECT_EQ(rig.transport.port_counters(0).naks_received, 1u);
  EXPECT_EQ(rig.transport.port_counters(0).timeouts, 0u);
  // The receiver saw the one packet missing when PSN 6 came in its place.
  EXPECT_EQ(rig.transport.port_counters(1).missing_packets, 1u);
  EXPECT_EQ(rig.transport.port_counters(0).missing_packets, 0u);
  // Everything from PSN 5 up to what was sent when the NAK arrived went again.
  const auto data = rig.data_sent();
  uint32_t highest_before_nak = 0;
  size_t resend_at = 0;
  for (size_t i = 1; i < data.size(); ++i) {
    if (data[i].psn < data[i - 1].psn) {
      highest_before_nak = data[i - 1].psn;
      resend_at = i;
      break;
    }
  }
  ASSERT_GT(resend_at, 0u);
  EXPECT_EQ(data[resend_at].psn, 5u);
  EXPECT_EQ(record.retransmitted_packets, highest_before_nak - 5 + 1);
  EXPECT_EQ(data.size(), 64u + record.retransmitted_packets);
  EXPECT_EQ(data.back().psn, 63u);
}

TEST(Transport, TailLossRecoversByTimeout) {
  config::TransportConfig config;
  config.retransmission = config::Retransmission::kFixed;
  config.retransmit_timeout_ns = 100'000;
  Rig rig(config);
  rig.wire.set_hook(testing::drop_once(3));
  const auto connection = rig.transport.connect(0, 1, 1);
  rig.transport.post(connection, 4 * 4096, {});
  rig.run();
  ASSERT_EQ(rig.observer.finished.size(), 1u);
  const FlowRecord& record = rig.observer.finished[0];
  EXPECT_EQ(record.status, FlowStatus::kCompleted);
  EXPECT_EQ(rig.transport.port_counters(0).timeouts, 1u);
  // Go-back-N from the oldest unacknowledged PSN: nothing before PSN 3 asked for an ACK.
  EXPECT_EQ(record.retransmitted_packets, 4u);
  // Only PSN 3 asks for an ACK, so nothing moved the deadline the first packet armed at time 0.
  EXPECT_GE(record.delivered_at, 100'000);
  // The last packet was lost: no later one showed the receiver a gap.
  EXPECT_EQ(rig.transport.port_counters(1).missing_packets, 0u);
}

// Packets lost where no counter looks (a kernel, a cable) show at the receiver as the PSNs
// missing when the next packet arrives; a lost resend shows again.
TEST(Transport, TheReceiverCountsPacketsMissingFromItsSequence) {
  config::TransportConfig config;
  config.pmtu = 1024;
  Rig rig(config);
  int data = 0;
  int resends = 0;
  rig.wire.set_hook([&](nic::Packet& packet, Nanos) {
    if (!packet.is_data()) return Verdict::kDeliver;
    ++data;
    // PSNs 10, 11 and 12 on the first pass, and the first resend of PSN 10.
    const bool first_pass_gap = data >= 11 && data <= 13;
    const bool first_resend = packet.psn == 10 && data > 13 && ++resends == 1;
    return first_pass_gap || first_resend ? Verdict::kDrop : Verdict::kDeliver;
  });
  const auto connection = rig.transport.connect(0, 1, 1);
  rig.transport.post(connection, 64 * 1024, {});
  rig.run();
  ASSERT_EQ(rig.observer.finished.size(), 1u);
  EXPECT_EQ(rig.observer.finished[0].status, FlowStatus::kCompleted);
  // Three on the first pass (seen when PSN 13 arrived); on the second, PSN 10's resend was lost
  // and PSN 11 showed a gap of one.
  EXPECT_EQ(rig.transport.port_counters(1).missing_packets, 4u);
  EXPECT_EQ(rig.transport.port_counters(1).naks_sent, 2u);
}

// A receiver that keeps answering with NAKs (the same packet lost on every pass, as in a full
// tail-drop queue): by default each NAK without progress uses up a retry, and the flow fails
// after retry_count + 1 of them; with naks_count_as_retries off the connection stays alive.
TEST(Transport, NaksWithoutProgressUseUpRetriesOnlyWhenConfigured) {
  for (const bool counted : {false, true}) {
    SCOPED_TRACE(counted ? "naks count" : "naks free");
    config::TransportConfig config;
    config.retransmission = config::Retransmission::kFixed;
    config.pmtu = 1024;
    config.retry_count = 3;
    config.naks_count_as_retries = counted;
    Rig rig(config);
    int losses = 0;
    rig.wire.set_hook([&](nic::Packet& packet, Nanos) {
      // PSN 5 is lost on its first ten passes; everything else arrives.
      return packet.is_data() && packet.psn == 5 && ++losses <= 10 ? Verdict::kDrop
                                                                   : Verdict::kDeliver;
    });
    const auto connection = rig.transport.connect(0, 1, 1);
    rig.transport.post(connection, 16 * 1024, {});
    rig.run();
    ASSERT_EQ(rig.observer.finished.size(), 1u);
    const FlowRecord& record = rig.observer.finished[0];
    EXPECT_EQ(rig.transport.port_counters(0).timeouts, 0u);
    if (counted) {
      EXPECT_EQ(record.status, FlowStatus::kRetryExceeded);
      EXPECT_EQ(rig.transport.port_counters(0).naks_received, 4u);
    } else {
      EXPECT_EQ(record.status, FlowStatus::kCompleted);
      EXPECT_EQ(rig.transport.port_counters(0).naks_received, 10u);
      EXPECT_EQ(losses, 11);  // the eleventh pass got through
    }
  }
}

TEST(Transport, RetryExhaustionFailsTheFlowLoudly) {
  config::TransportConfig config;
  config.retransmission = config::Retransmission::kFixed;
  config.retransmit_timeout_ns = 10'000;
  config.retry_count = 3;
  Rig rig(config);
  rig.wire.set_hook([](nic::Packet& packet, Nanos) {
    return packet.is_data() ? Verdict::kDrop : Verdict::kDeliver;
  });
  const auto connection = rig.transport.connect(0, 1, 1);
  rig.transport.post(connection, 4096, {});
  rig.transport.post(connection, 4096, {});
  rig.run();
  ASSERT_EQ(rig.observer.finished.size(), 2u);
  EXPECT_EQ(rig.observer.finished[0].status, FlowStatus::kRetryExceeded);
  EXPECT_EQ(rig.observer.finished[1].status, FlowStatus::kFlushed);
  EXPECT_TRUE(rig.observer.delivered.empty());
  // The first transmission and three retries, each followed by a full timeout.
  EXPECT_EQ(rig.transport.port_counters(0).timeouts, 4u);
  EXPECT_EQ(rig.observer.finished[0].finished_at, 4 * 10'000);
  EXPECT_EQ(rig.transport.totals().flows_failed, 2u);
  // The connection is in error: new work fails at once instead of hanging.
  rig.transport.post(connection, 10, {});
  ASSERT_EQ(rig.observer.finished.size(), 3u);
  EXPECT_EQ(rig.observer.finished[2].status, FlowStatus::kFlushed);
  EXPECT_TRUE(rig.transport.requester(connection.requester).failed);
}

// Adaptive retransmission: a first timeout drawn from [first, 2 x first), each timeout without
// progress doubling the next up to retransmit_timeout, and the connection failing on time
// without progress (retransmit_timeout x retry_count), not on a count.
TEST(Transport, AdaptiveTimeoutsDoubleUpToTheCapAndFailOnTime) {
  config::TransportConfig config;
  config.retransmission = config::Retransmission::kAdaptive;
  config.adaptive_first_timeout_ns = 10'000;
  config.retransmit_timeout_ns = 80'000;
  config.retry_count = 3;
  Rig rig(config);
  std::vector<Nanos> passes;  // when each pass of PSN 0 started
  rig.wire.set_hook([&](nic::Packet& packet, Nanos at) {
    if (!packet.is_data()) return Verdict::kDeliver;
    if (packet.psn == 0) passes.push_back(at);
    return Verdict::kDrop;
  });
  const auto connection = rig.transport.connect(0, 1, 1);
  rig.transport.post(connection, 4096, {});
  rig.run();
  ASSERT_EQ(rig.observer.finished.size(), 1u);
  const FlowRecord& record = rig.observer.finished[0];
  EXPECT_EQ(record.status, FlowStatus::kRetryExceeded);
  ASSERT_GE(passes.size(), 5u);
  EXPECT_EQ(passes[0], 0);
  EXPECT_GE(passes[1], 10'000);
  EXPECT_LT(passes[1], 20'000);
  EXPECT_EQ(passes[2] - passes[1], 20'000);
  EXPECT_EQ(passes[3] - passes[2], 40'000);
  EXPECT_EQ(passes[4] - passes[3], 80'000);  // the cap
  for (size_t i = 5; i < passes.size(); ++i) EXPECT_EQ(passes[i] - passes[i - 1], 80'000);
  // It fails at the first timeout that finds 240 us without progress (within 1 %), not after
  // retry_count + 1 timeouts, as the fixed model would (at 4 x 80 us).
  const Nanos limit = 3 * 80'000;
  EXPECT_GE(record.finished_at, limit - limit / 100);
  EXPECT_LT(record.finished_at, limit + 80'000);
  EXPECT_EQ(record.finished_at - passes.back(), 80'000);
  EXPECT_EQ(rig.transport.port_counters(0).timeouts, passes.size());
}

// Progress starts the timeouts over: after a stall that doubled them, the next loss waits the
// QP's first timeout again, not the last one.
TEST(Transport, AdaptiveProgressStartsTheTimeoutsOver) {
  config::TransportConfig config;
  config.retransmission = config::Retransmission::kAdaptive;
  config.adaptive_first_timeout_ns = 10'000;
  config.retransmit_timeout_ns = 1'000'000;
  Rig rig(config);
  std::vector<Nanos> passes;  // when each data packet started
  size_t drops_left = 3;
  rig.wire.set_hook([&](nic::Packet& packet, Nanos at) {
    if (!packet.is_data()) return Verdict::kDeliver;
    passes.push_back(at);
    return drops_left > 0 && drops_left-- > 0 ? Verdict::kDrop : Verdict::kDeliver;
  });
  const auto connection = rig.transport.connect(0, 1, 1);
  rig.transport.post(connection, 4096, {});  // one packet, lost on its first three passes
  rig.run();
  ASSERT_EQ(passes.size(), 4u);
  const Nanos first = passes[1] - passes[0];
  EXPECT_GE(first, 10'000);
  EXPECT_LT(first, 20'000);
  EXPECT_EQ(passes[2] - passes[1], 20'000);
  EXPECT_EQ(passes[3] - passes[2], 40'000);

  drops_left = 1;  // the next message loses its first pass only
  rig.transport.post(connection, 4096, {});
  rig.run();
  ASSERT_EQ(passes.size(), 6u);
  EXPECT_EQ(passes[5] - passes[4], first);
  ASSERT_EQ(rig.observer.finished.size(), 2u);
  for (const FlowRecord& record : rig.observer.finished) {
    EXPECT_EQ(record.status, FlowStatus::kCompleted);
  }
  EXPECT_EQ(rig.transport.port_counters(0).timeouts, 4u);
}

// NAKs do not count against an adaptive connection, but the time they go on for does: a
// receiver that keeps answering with NAKs cannot keep a connection that makes no progress alive.
TEST(Transport, AdaptiveRetransmissionFailsOnTimeWhateverTheNaks) {
  config::TransportConfig config;
  config.retransmission = config::Retransmission::kAdaptive;
  config.pmtu = 1024;
  config.adaptive_first_timeout_ns = 5'000;
  config.retransmit_timeout_ns = 20'000;
  config.retry_count = 2;
  Rig rig(config);
  rig.wire.set_hook([&](nic::Packet& packet, Nanos) {
    // PSN 5 never arrives; everything else does, so every pass ends in a NAK.
    return packet.is_data() && packet.psn == 5 ? Verdict::kDrop : Verdict::kDeliver;
  });
  const auto connection = rig.transport.connect(0, 1, 1);
  rig.transport.post(connection, 64 * 1024, {});
  rig.run();
  ASSERT_EQ(rig.observer.finished.size(), 1u);
  const FlowRecord& record = rig.observer.finished[0];
  EXPECT_EQ(record.status, FlowStatus::kRetryExceeded);
  // Far more NAKs than the fixed model's retry_count + 1, and the end within 1 % of 40 us
  // after the last progress (the first NAK acknowledged PSNs 0 to 4) or one timeout later.
  EXPECT_GT(rig.transport.port_counters(0).naks_received, 3u);
  EXPECT_GE(record.finished_at, 40'000 - 400);
  EXPECT_LT(record.finished_at, 40'000 + 20'000 + 10'000);
}

// The stall clock: the limit is seen within 1 %, and its 16-bit stamp does not wrap within the
// limit wherever on the clock the stall begins.
TEST(RetransmitTiming, StallClockSeesTheLimitWithinOnePercent) {
  for (const uint64_t timeout : {1'000ull, 67'108'864ull, 60'000'000'000ull}) {
    for (const uint32_t retries : {1u, 3u, 7u}) {
      config::TransportConfig config;
      config.retransmit_timeout_ns = timeout;
      config.retry_count = retries;
      const retransmit_timing::StallClock stall(config);
      const auto limit = static_cast<Nanos>(timeout * retries);
      for (const Nanos start : {Nanos{0}, Nanos{123'456'789}, Nanos{1} << 50}) {
        SCOPED_TRACE(std::to_string(timeout) + " ns x " + std::to_string(retries) + " from " +
                     std::to_string(start));
        const uint16_t since = stall.stamp(start);
        EXPECT_FALSE(stall.exhausted(since, start));
        EXPECT_FALSE(stall.exhausted(since, start + limit - limit / 64));
        EXPECT_TRUE(stall.exhausted(since, start + limit + limit / 64));
        EXPECT_TRUE(stall.exhausted(since, start + 2 * limit));
      }
    }
  }
  config::TransportConfig none;
  none.retry_count = 0;  // no time at all without progress
  EXPECT_TRUE(retransmit_timing::StallClock(none).exhausted(0, 0));
}

TEST(RetransmitTiming, FirstTimeoutsSpreadOverQpsWithinTheirRange) {
  config::TransportConfig config;
  config.retransmission = config::Retransmission::kAdaptive;
  config.adaptive_first_timeout_ns = 100'000;
  std::set<Nanos> distinct;
  for (uint32_t qpn = 0; qpn < 1000; ++qpn) {
    const Nanos first = retransmit_timing::timeout(config, 0, qpn);
    EXPECT_GE(first, 100'000);
    EXPECT_LT(first, 200'000);
    distinct.insert(first);
    EXPECT_EQ(retransmit_timing::timeout(config, 1, qpn), 200'000);
    EXPECT_EQ(retransmit_timing::timeout(config, 200, qpn),
              static_cast<Nanos>(config.retransmit_timeout_ns));
  }
  EXPECT_GT(distinct.size(), 900u);
  config.retransmission = config::Retransmission::kFixed;
  EXPECT_EQ(retransmit_timing::timeout(config, 0, 7),
            static_cast<Nanos>(config.retransmit_timeout_ns));
}

TEST(Transport, CongestionMarksBecomePacedCnpsAndSlowTheSender) {
  config::TransportConfig config;
  config.pmtu = 1024;
  Rig rig(config);
  rig.mark_every_data_packet();
  const auto connection = rig.transport.connect(0, 1, 1);
  rig.transport.post(connection, 1024 * 1024, {});
  rig.run();
  ASSERT_EQ(rig.observer.finished.size(), 1u);
  const FlowRecord& record = rig.observer.finished[0];
  EXPECT_EQ(record.ecn_marks, 1024u);
  const auto& receiver = rig.transport.port_counters(1);
  EXPECT_EQ(receiver.ecn_marked_received, 1024u);
  // At most one CNP per QP per 4 us (the default min_time_between_cnps).
  EXPECT_GT(receiver.cnps_sent, 0u);
  Nanos previous = -1;
  for (const auto& sent : rig.wire.sent()) {
    if (sent.packet.opcode != nic::opcode::kCnp || sent.packet.is_data()) continue;
    EXPECT_EQ(sent.packet.priority, 6);
    EXPECT_EQ(sent.packet.dscp, 48);
    if (previous >= 0) {
      EXPECT_GE(sent.at - previous, 4'000);
    }
    previous = sent.at;
  }
  EXPECT_EQ(rig.transport.port_counters(0).cnps_received, receiver.cnps_sent);
  EXPECT_EQ(record.cnps, receiver.cnps_sent);
  // The reaction point cut the rate: slower than line rate would have been.
  const uint64_t line_bytes = 1024ull * (1024 + 82) + 16 + 4;
  EXPECT_GT(record.fct(), clock::LineRateTimer::duration(line_bytes, k100G) + kDelay);
  EXPECT_LT(rig.transport.requester(connection.requester).reaction_point.current_rate_bps(),
            static_cast<double>(k100G));
}

TEST(Transport, AWaitingQpTakesARateIncreaseAtOnce) {
  // One CE mark sets the sender to 1 Mb/s (rate_on_first_cnp): its next 1106-byte packet would
  // wait 8.8 ms there. The increase timer (300 us) raises the rate long before that, and the
  // waiting QP sends at the new rate then, not after the old gap.
  config::TransportConfig config;
  config.pmtu = 1024;
  config.dcqcn.rate_on_first_cnp_bps = 1'000'000;
  Rig rig(config);
  rig.wire.set_hook([](nic::Packet& packet, Nanos) {
    if (packet.is_data() && packet.psn == 0) packet.ecn = nic::ecn::kCe;
    return Verdict::kDeliver;
  });
  const auto connection = rig.transport.connect(0, 1, 1);
  rig.transport.post(connection, 1024 * 1024, {});
  rig.run();
  ASSERT_EQ(rig.observer.finished.size(), 1u);
  EXPECT_EQ(rig.observer.finished[0].status, FlowStatus::kCompleted);
  EXPECT_EQ(rig.transport.port_counters(0).cnps_received, 1u);
  Nanos previous = -1;
  Nanos longest_gap = 0;
  for (const auto& sent : rig.wire.sent()) {
    if (!sent.packet.is_data() || sent.packet.dest_qpn != connection.responder) continue;
    if (previous >= 0) longest_gap = std::max(longest_gap, sent.at - previous);
    previous = sent.at;
  }
  // Each increase re-times the wait: the rate climbs from 1 Mb/s in 300 us steps, so no gap
  // comes near the 8.8 ms one packet would have left at the floor.
  const Nanos gap_at_floor =
      clock::LineRateTimer::duration(wire_bytes_of(nic::opcode::kWriteMiddle, 1024), 1'000'000);
  EXPECT_LT(longest_gap, gap_at_floor / 4);
}

// A sender held at 5 Mb/s by DCQCN (every packet marked, the rate floored at min_rate) sends a
// 1106-byte frame every 1.77 ms: sixteen of them, an ack interval, take 28 ms, longer than the
// 16.8 ms first retransmission timeout. The requester then asks for an acknowledgement on every
// packet, so the slow flow completes with no timeout and nothing sent twice.
TEST(Transport, ASenderPacedDownToMinRateIsNotTakenForLost) {
  config::TransportConfig config;
  config.pmtu = 1024;
  config.dcqcn.min_rate_bps = 5'000'000;
  config.dcqcn.rate_on_first_cnp_bps = 5'000'000;
  config.dcqcn.rate_increase_period_ns = 1'000'000'000;  // no timer raises it during the flow
  Rig rig(config);
  rig.mark_every_data_packet();
  const auto connection = rig.transport.connect(0, 1, 1);
  rig.transport.post(connection, 64 * 1024, {});
  rig.run();
  ASSERT_EQ(rig.observer.finished.size(), 1u);
  const FlowRecord& record = rig.observer.finished[0];
  EXPECT_EQ(record.status, FlowStatus::kCompleted);
  EXPECT_EQ(rig.transport.port_counters(0).timeouts, 0u);
  EXPECT_EQ(record.retransmitted_packets, 0u);
  // Slow: most of the 64 packets went at the floor.
  const Nanos gap_at_floor =
      clock::LineRateTimer::duration(wire_bytes_of(nic::opcode::kWriteMiddle, 1024), 5'000'000);
  EXPECT_GT(record.fct(), 32 * gap_at_floor);
  size_t requested = 0;
  const std::vector<nic::Packet> data = rig.data_sent();
  for (const nic::Packet& packet : data) {
    if (packet.bth_flags & nic::bth_flag::kAckRequest) ++requested;
  }
  EXPECT_GT(requested, data.size() / 2);
}

TEST(Transport, PauseFramesHoldDataUntilResume) {
  Rig rig;
  const auto connection = rig.transport.connect(0, 1, 1);
  // Port 1 pauses class 3 for 1000 quanta (1000 x 512 bit times = 5120 ns at 100 Gb/s).
  rig.wire.port(1).transmit(nic::pfc_frame(1, 0, 3, 1000), 0);  // arrives at 7 + 1000 = 1007 ns
  rig.clock.run_until(1007);
  rig.transport.post(connection, 4096, {});
  rig.clock.run_until(3000);
  EXPECT_TRUE(rig.data_sent().empty());
  EXPECT_EQ(rig.transport.port_counters(0).pauses_received, 1u);
  rig.run();
  // 1000 quanta x 512 bits at 100 Gb/s = 5120 ns after the pause arrived.
  EXPECT_EQ(rig.first_data_sent_at(), 1007 + 5120);
  ASSERT_EQ(rig.observer.finished.size(), 1u);
}

TEST(Transport, ResumeFrameEndsAPauseEarly) {
  Rig rig;
  const auto connection = rig.transport.connect(0, 1, 1);
  rig.wire.port(1).transmit(nic::pfc_frame(1, 0, 3, 0xFFFF), 0);  // arrives at 1007
  rig.clock.run_until(1007);
  rig.transport.post(connection, 4096, {});
  rig.clock.run_until(1500);
  rig.wire.port(1).transmit(nic::pfc_frame(1, 0, 3, 0), 1500);  // resume arrives at 2507
  rig.run();
  EXPECT_EQ(rig.first_data_sent_at(), 2507);
  EXPECT_EQ(rig.transport.port_counters(0).resumes_received, 1u);
}

// A receiver's control packets wait per class: with its CNP class (6) paused, its ACKs (class 3)
// still go, and the CNPs held go out first, ahead of ACKs, the moment the pause ends.
TEST(Transport, APausedControlClassWaitsWhileTheOthersSend) {
  Rig rig;
  rig.mark_every_data_packet();
  const auto connection = rig.transport.connect(0, 1, 1);
  const config::PortQos qos;
  rig.wire.port(0).transmit(nic::pfc_frame(0, 1, qos.cnp.priority, 0xFFFF), 0);  // at 1007
  rig.clock.run_until(1007);
  rig.transport.post(connection, 64 * 1024, {});
  rig.clock.run_until(20'000);
  const Nanos resumed_at = 20'000 + 1007;
  rig.wire.port(0).transmit(nic::pfc_frame(0, 1, qos.cnp.priority, 0), 20'000);
  rig.run();
  Nanos first_cnp = -1;
  Nanos last_ack = -1;
  size_t cnps = 0;
  for (const auto& sent : rig.wire.sent()) {
    if (sent.packet.src_port != 1) continue;
    if (sent.packet.opcode == nic::opcode::kCnp) {
      if (first_cnp < 0) first_cnp = sent.at;
      EXPECT_GE(sent.at, resumed_at);
      EXPECT_EQ(sent.packet.priority, qos.cnp.priority);
      ++cnps;
    } else if (sent.packet.opcode == nic::opcode::kAcknowledge && first_cnp < 0) {
      last_ack = sent.at;
    }
  }
  EXPECT_EQ(first_cnp, resumed_at);
  EXPECT_GT(cnps, 0u);
  EXPECT_EQ(cnps, rig.transport.port_counters(1).cnps_sent);
  EXPECT_GT(last_ack, 0);
  EXPECT_LT(last_ack, resumed_at);
  ASSERT_EQ(rig.observer.finished.size(), 1u);
}

TEST(Transport, SameInputsGiveIdenticalRecords) {
  auto run_once = [] {
    config::TransportConfig config;
    config.pmtu = 1024;
    Rig rig(config, 4);
    uint32_t count = 0;
    rig.wire.set_hook([&](nic::Packet& packet, Nanos) {
      if (!packet.is_data()) return Verdict::kDeliver;
      ++count;
      if (count % 97 == 0) return Verdict::kDrop;
      if (count % 5 == 0) packet.ecn = nic::ecn::kCe;
      return Verdict::kDeliver;
    });
    for (uint32_t src = 0; src < 4; ++src) {
      for (uint32_t dst = 0; dst < 4; ++dst) {
        if (src == dst) continue;
        const auto c = rig.transport.connect(src, dst, static_cast<uint16_t>(src * 4 + dst));
        rig.transport.post(c, 200'000 + src * 1000 + dst, {});
      }
    }
    rig.run();
    return rig.observer.finished;
  };
  const auto first = run_once();
  const auto second = run_once();
  ASSERT_EQ(first.size(), 12u);
  ASSERT_EQ(second.size(), first.size());
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].flow_id, second[i].flow_id);
    EXPECT_EQ(first[i].delivered_at, second[i].delivered_at);
    EXPECT_EQ(first[i].finished_at, second[i].finished_at);
    EXPECT_EQ(first[i].retransmitted_packets, second[i].retransmitted_packets);
    EXPECT_EQ(first[i].cnps, second[i].cnps);
    EXPECT_EQ(first[i].ecn_marks, second[i].ecn_marks);
    EXPECT_EQ(first[i].status, FlowStatus::kCompleted);
  }
}

TEST(Transport, ConnectRejectsUnknownPorts) {
  Rig rig;
  EXPECT_THROW(rig.transport.connect(0, 2, 1), std::invalid_argument);
}

// Releases the next step from inside the callbacks, as the run engine does: every finished flow
// posts another until 200 have gone, which grows the flow pool while records are being reported.
TEST(Transport, ObserverMayPostFromCallbacks) {
  struct Chain final : FlowObserver {
    Transport* transport = nullptr;
    ConnectionId connection;
    std::vector<uint64_t> finished_ids;
    void on_flow_delivered(const FlowRecord&) override {}
    void on_flow_finished(const FlowRecord& record) override {
      finished_ids.push_back(record.flow_id);
      if (finished_ids.size() < 200) {
        transport->post(connection, 1000, {});
        transport->post(connection, 1000, {});
      }
    }
  };
  config::TransportConfig config;
  clock::VirtualClock clock;
  IdealWire wire(clock, 2, k100G, kDelay);
  Chain chain;
  Transport transport(config, clock, chain);
  transport.add_port(wire.port(0), {}, {});
  transport.add_port(wire.port(1), {}, {});
  chain.transport = &transport;
  chain.connection = transport.connect(0, 1, 1);
  transport.post(chain.connection, 1000, {});
  while (!clock.idle()) clock.poll();
  ASSERT_GE(chain.finished_ids.size(), 200u);
  for (size_t i = 0; i < chain.finished_ids.size(); ++i) EXPECT_EQ(chain.finished_ids[i], i);
}

TEST(Psn, WidensAcrossTheWrap) {
  EXPECT_EQ(widen_psn(5, 3), 5u);
  EXPECT_EQ(widen_psn(1, (1ull << 24) - 2), (1ull << 24) + 1);
  EXPECT_EQ(widen_psn(0xFFFFFE, (1ull << 24) + 1), (1ull << 24) - 2);
  EXPECT_EQ(wire_psn((1ull << 24) + 7), 7u);
}

}  // namespace
}  // namespace etwire::transport
