// Per-QP statistics (qp_counters.h): every QP counter is counted where its port counter is, so a
// congested, lossy run must give per-QP figures that add up to the port counters exactly, and
// DCQCN's rate figures must follow the rates the reaction point set.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "tests/transport/twin_rig.h"
#include "transport/dcqcn_reaction_point.h"
#include "transport/qp_counters.h"

namespace etwire::transport {
namespace {

using clock::Nanos;
using testing::TwinRig;

constexpr uint64_t k100G = 100'000'000'000;
constexpr double kLine = 100e9;

config::FabricConfig lossy_single_switch() {
  config::FabricConfig fabric;
  fabric.topology = config::Topology::kSingleSwitch;
  fabric.propagation_delay_ns = 1'000;
  fabric.switch_latency_ns = 500;
  // Marks early, and a buffer the senders overflow before the first CNP comes back: CE marks,
  // CNPs, rate cuts, drops, NAKs and retransmissions all happen. Random loss adds losses of the
  // last packets, which only the timer repairs.
  fabric.ecn.kmin_bytes = 5'000;
  fabric.ecn.kmax_bytes = 200'000;
  fabric.ecn.pmax = 0.01;
  fabric.buffer.size_bytes = 512 * 1024;
  fabric.drop_probability = 0.002;
  return fabric;
}

config::TransportConfig paper_dcqcn() {
  config::TransportConfig config;
  config.retransmit_timeout_ns = 200'000;
  config.retry_count = 30;
  config::DcqcnConfig& dcqcn = config.dcqcn;
  dcqcn.alpha_gain = 1.0 / 256;
  dcqcn.alpha_update_period_ns = 55'000;
  dcqcn.initial_alpha = 1.0;
  dcqcn.rate_reduce_period_ns = 50'000;
  dcqcn.min_time_between_cnps_ns = 50'000;
  dcqcn.rate_increase_period_ns = 55'000;
  dcqcn.rate_increase_bytes = 10'000'000;
  dcqcn.fast_recovery_stages = 5;
  dcqcn.additive_increase_bps = 40'000'000;
  dcqcn.clamp_target_rate = true;
  return config;
}

struct Totals {
  QpCounters requesters;
  QpCounters responders;
  uint64_t rate_cuts = 0;
};

TEST(QpCounters, LossyCongestedIncastAddsUpToThePortCounters) {
  // 12 senders into one port, two connections each (24 requesters, 24 responders), 3 messages
  // per connection.
  constexpr uint32_t kSenders = 12;
  constexpr uint64_t kBytes = 256 * 1024;
  TwinRig rig(lossy_single_switch(), paper_dcqcn(), kSenders + 1, 5);
  for (uint32_t sender = 0; sender < kSenders; ++sender) {
    for (uint16_t c = 0; c < 2; ++c) {
      const auto connection =
          rig.transport.connect(sender, kSenders, static_cast<uint16_t>(5000 + sender * 2 + c));
      for (int m = 0; m < 3; ++m) rig.transport.post(connection, kBytes, {});
    }
  }
  rig.run();

  std::vector<QpStats> qps;
  rig.transport.append_qp_stats(qps, rig.clock.now());
  ASSERT_EQ(qps.size(), 2 * 2 * kSenders);

  Totals totals;
  for (const QpStats& qp : qps) {
    if (qp.role == QpRole::kRequester) {
      totals.requesters += qp.counters;
      totals.rate_cuts += qp.rate_cuts;
      EXPECT_LT(qp.port, kSenders);
      EXPECT_EQ(qp.remote_port, kSenders);
      // Nothing outstanding any more: every message was acknowledged.
      EXPECT_EQ(qp.counters.messages, 3u);
      EXPECT_EQ(qp.counters.bytes, 3 * kBytes);
      EXPECT_GT(qp.busy_ns, 0);
      EXPECT_LE(qp.rate_cuts, qp.counters.cnps_received);
      EXPECT_GT(qp.min_rate_bps, 0.0);
      EXPECT_LE(qp.min_rate_bps, qp.mean_rate_bps);
      EXPECT_LE(qp.mean_rate_bps, kLine * (1 + 1e-12));
      if (qp.rate_cuts > 0) {
        EXPECT_LT(qp.min_rate_bps, kLine);
      }
    } else {
      totals.responders += qp.counters;
      EXPECT_EQ(qp.port, kSenders);
      EXPECT_EQ(qp.counters.messages, 3u);
      EXPECT_EQ(qp.counters.bytes, 3 * kBytes);
      EXPECT_EQ(qp.rate_cuts, 0u);
      EXPECT_EQ(qp.busy_ns, 0);
    }
  }

  TransportPortCounters ports;
  for (uint32_t port = 0; port <= kSenders; ++port) {
    const TransportPortCounters& counters = rig.transport.port_counters(port);
    ports.data_packets += counters.data_packets;
    ports.retransmitted_packets += counters.retransmitted_packets;
    ports.naks_sent += counters.naks_sent;
    ports.naks_received += counters.naks_received;
    ports.timeouts += counters.timeouts;
    ports.ecn_marked_received += counters.ecn_marked_received;
    ports.cnps_sent += counters.cnps_sent;
    ports.cnps_received += counters.cnps_received;
  }
  // The scenario did what it is for.
  EXPECT_GT(ports.retransmitted_packets, 0u);
  EXPECT_GT(ports.naks_received, 0u);
  EXPECT_GT(ports.ecn_marked_received, 0u);
  EXPECT_GT(ports.cnps_received, 0u);
  EXPECT_GT(totals.rate_cuts, 0u);

  EXPECT_EQ(totals.requesters.packets, ports.data_packets);
  EXPECT_EQ(totals.requesters.retransmitted_packets, ports.retransmitted_packets);
  EXPECT_EQ(totals.requesters.naks_received, ports.naks_received);
  EXPECT_EQ(totals.requesters.timeouts, ports.timeouts);
  EXPECT_EQ(totals.requesters.cnps_received, ports.cnps_received);
  EXPECT_EQ(totals.responders.naks_sent, ports.naks_sent);
  EXPECT_EQ(totals.responders.ecn_marked_received, ports.ecn_marked_received);
  EXPECT_EQ(totals.responders.cnps_sent, ports.cnps_sent);
  // Roles keep to their side.
  EXPECT_EQ(totals.requesters.naks_sent + totals.requesters.cnps_sent +
                totals.requesters.ecn_marked_received,
            0u);
  EXPECT_EQ(totals.responders.naks_received + totals.responders.cnps_received +
                totals.responders.retransmitted_packets + totals.responders.timeouts,
            0u);
  // Every data packet sent either arrived at a responder or was lost on the way.
  uint64_t drops = 0;
  for (size_t port = 0; port < rig.twin.layout().switch_ports(); ++port) {
    drops += rig.twin.switch_port_counters(port).drops();
  }
  for (uint32_t host = 0; host <= kSenders; ++host) drops += rig.twin.host_counters(host).drops();
  EXPECT_GT(drops, 0u);
  EXPECT_LE(totals.responders.packets, totals.requesters.packets);

  // The flow records agree per QP on what they count too.
  std::map<uint32_t, uint64_t> retransmits_by_qp;
  for (const FlowRecord& record : rig.observer.finished) {
    EXPECT_EQ(record.status, FlowStatus::kCompleted);
    retransmits_by_qp[record.qpn] += record.retransmitted_packets;
  }
  for (const QpStats& qp : qps) {
    if (qp.role == QpRole::kRequester) {
      EXPECT_EQ(qp.counters.retransmitted_packets, retransmits_by_qp[qp.qpn]) << "QP " << qp.qpn;
    }
  }
}

TEST(QpCounters, AnUncongestedQpRunsAtLineRateWhileBusy) {
  config::FabricConfig fabric = lossy_single_switch();
  fabric.drop_probability = 0;
  TwinRig rig(fabric, paper_dcqcn(), 2);
  const auto connection = rig.transport.connect(0, 1, 1);
  rig.transport.post(connection, 1 << 20, {});
  rig.run();
  ASSERT_EQ(rig.observer.finished.size(), 1u);
  const FlowRecord& flow = rig.observer.finished[0];

  std::vector<QpStats> qps;
  rig.transport.append_qp_stats(qps, rig.clock.now());
  ASSERT_EQ(qps.size(), 2u);
  const QpStats& requester = qps[0];
  ASSERT_EQ(requester.role, QpRole::kRequester);
  EXPECT_EQ(requester.qpn, connection.requester);
  EXPECT_EQ(requester.remote_qpn, connection.responder);
  // Busy from the post to the acknowledgement of its last packet.
  EXPECT_EQ(requester.busy_ns, flow.finished_at - flow.posted_at);
  EXPECT_EQ(requester.rate_cuts, 0u);
  EXPECT_DOUBLE_EQ(requester.min_rate_bps, kLine);
  EXPECT_DOUBLE_EQ(requester.mean_rate_bps, kLine);
  EXPECT_EQ(requester.counters.packets, flow.packets);
  const QpStats& responder = qps[1];
  ASSERT_EQ(responder.role, QpRole::kResponder);
  EXPECT_EQ(responder.counters.packets, flow.packets);
  EXPECT_EQ(responder.counters.messages, 1u);
  EXPECT_EQ(responder.counters.bytes, uint64_t{1} << 20);
}

TEST(QpCounters, TheRateIntegralFollowsEveryCutAndIncrease) {
  // NVIDIA's defaults: the first CNP cuts 100 G to 100 G x 1025/2048; the next increase is the
  // timer's, 300 us later, halfway back to the target (line rate).
  config::DcqcnConfig config;
  DcqcnReactionPoint rp;
  rp.reset(&config, k100G, 1'000);
  EXPECT_DOUBLE_EQ(rp.rate_time_integral(11'000), kLine * 10'000);
  rp.on_cnp(11'000);
  const double cut = 50'048'828'125.0;
  EXPECT_DOUBLE_EQ(rp.min_rate_bps(), cut);
  EXPECT_DOUBLE_EQ(rp.rate_time_integral(111'000), kLine * 10'000 + cut * 100'000);
  const double raised = (kLine + cut) / 2;
  EXPECT_DOUBLE_EQ(rp.rate_time_integral(411'000),
                   kLine * 10'000 + cut * 300'000 + raised * 100'000);
  EXPECT_DOUBLE_EQ(rp.min_rate_bps(), cut);  // increases do not move the minimum
}

TEST(QpCounters, SprayedReorderedAndTrimmedAddUpToThePortCounters) {
  // Sprayed entropy, out-of-order receivers and a switch that trims what it has no room for:
  // every packet of the three new counters is counted on its QP and its port alike.
  config::FabricConfig fabric = lossy_single_switch();
  fabric.drop_probability = 0;
  fabric.buffer.size_bytes = 128 * 1024;
  fabric.buffer.ingress_reserve_bytes = 0;
  fabric.trimming.enabled = true;
  config::TransportConfig config = paper_dcqcn();
  config.receiver = config::Receiver::kOutOfOrder;
  config.entropy.mode = config::EntropyMode::kSpray;
  config.entropy.values = 4;
  constexpr uint32_t kSenders = 6;
  TwinRig rig(fabric, config, kSenders + 1, 5);
  for (uint32_t sender = 0; sender < kSenders; ++sender) {
    rig.transport.post(
        rig.transport.connect(sender, kSenders, static_cast<uint16_t>(0xC000 + sender)), 512 * 1024,
        {});
  }
  rig.run();
  std::vector<QpStats> qps;
  rig.transport.append_qp_stats(qps, rig.clock.now());
  Totals totals;
  for (const QpStats& qp : qps) {
    (qp.role == QpRole::kRequester ? totals.requesters : totals.responders) += qp.counters;
  }
  TransportPortCounters ports;
  for (uint32_t port = 0; port <= kSenders; ++port) {
    const TransportPortCounters& counters = rig.transport.port_counters(port);
    ports.sprayed_packets += counters.sprayed_packets;
    ports.reordered_packets += counters.reordered_packets;
    ports.trimmed_packets += counters.trimmed_packets;
  }
  EXPECT_GT(ports.sprayed_packets, 0u);
  EXPECT_GT(ports.reordered_packets, 0u);
  EXPECT_GT(ports.trimmed_packets, 0u);
  EXPECT_EQ(totals.requesters.sprayed_packets, ports.sprayed_packets);
  EXPECT_EQ(totals.responders.reordered_packets, ports.reordered_packets);
  EXPECT_EQ(totals.responders.trimmed_packets, ports.trimmed_packets);
  EXPECT_EQ(totals.responders.sprayed_packets, 0u);
  EXPECT_EQ(totals.requesters.reordered_packets + totals.requesters.trimmed_packets, 0u);
  // Three PSNs in four leave on a source port other than the QP's own; a resend takes its
  // PSN's port, so the share moves with which PSNs were trimmed (the exact count of a run
  // without losses: OutOfOrderReceiver.SprayedPsnsAreCountedOnTheirSender).
  EXPECT_NEAR(
      static_cast<double>(ports.sprayed_packets) / static_cast<double>(totals.requesters.packets),
      0.75, 0.05);
  EXPECT_EQ(ports.trimmed_packets,
            rig.twin.switch_port_counters(rig.twin.layout().host_switch_port(kSenders)).trimmed);
}

}  // namespace
}  // namespace etwire::transport
