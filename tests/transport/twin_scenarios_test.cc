// The data plane end to end in virtual time: transport + loopback NICs + fabric twin. Each test
// is one of the scenarios a congestion engineer runs first, with exact or bounded outcomes.
#include <gtest/gtest.h>

#include "tests/transport/packet_sizes.h"

#include <algorithm>
#include <iostream>
#include <string>

#include "clock/line_rate.h"
#include "tests/transport/twin_rig.h"

namespace etwire::transport {
namespace {

using clock::Nanos;
using testing::TwinRig;
using testing::wire_bytes_of;

constexpr uint64_t k100G = 100'000'000'000;

config::FabricConfig single_switch() {
  config::FabricConfig fabric;
  fabric.topology = config::Topology::kSingleSwitch;
  fabric.propagation_delay_ns = 1'000;
  fabric.switch_latency_ns = 500;
  return fabric;
}

TEST(TwinScenario, OneFlowOverOneSwitchIsExact) {
  TwinRig rig(single_switch(), {}, 2);
  const auto connection = rig.transport.connect(0, 1, 1000);
  rig.transport.post(connection, 10 * 4096, {});
  rig.run();
  ASSERT_EQ(rig.observer.finished.size(), 1u);
  const FlowRecord& record = rig.observer.finished[0];

  // The model, packet by packet: the NIC serializes back to back; each packet reaches the switch
  // after its last byte plus the propagation delay, is forwarded after the switch latency, and
  // is serialized again on the egress link (at the same rate, so it never queues), then
  // propagates to the receiver.
  std::vector<uint32_t> sizes;
  sizes.push_back(wire_bytes_of(nic::opcode::kWriteFirst, 4096));
  for (int i = 0; i < 8; ++i) sizes.push_back(wire_bytes_of(nic::opcode::kWriteMiddle, 4096));
  sizes.push_back(wire_bytes_of(nic::opcode::kWriteLastWithImmediate, 4096));
  clock::LineRateTimer nic_link(k100G);
  clock::LineRateTimer egress_link(k100G);
  Nanos delivered = 0;
  for (const uint32_t bytes : sizes) {
    const Nanos at_switch = nic_link.transmit(0, bytes) + 1'000;
    delivered = egress_link.transmit(at_switch + 500, bytes) + 1'000;
  }
  EXPECT_EQ(record.delivered_at, delivered);
  // Closed form for the same thing: all bytes at line rate, then the last packet's second
  // serialization, two propagation delays and the switch latency (rounding aside).
  uint64_t total = 0;
  for (const uint32_t bytes : sizes) total += bytes;
  const Nanos closed_form = clock::LineRateTimer::duration(total, k100G) + 1'000 + 500 +
                            clock::LineRateTimer::duration(sizes.back(), k100G) + 1'000;
  EXPECT_LE(std::abs(record.delivered_at - closed_form), 1);
  EXPECT_EQ(record.status, FlowStatus::kCompleted);
  EXPECT_EQ(record.retransmitted_packets, 0u);
}

// Bytes each connection got delivered within [from, to), counting whole messages by delivery.
std::vector<uint64_t> delivered_bytes(const std::vector<FlowRecord>& records, size_t connections,
                                      Nanos from, Nanos to) {
  std::vector<uint64_t> bytes(connections, 0);
  for (const auto& record : records) {
    if (record.delivered_at >= from && record.delivered_at < to) {
      bytes[record.tags.qp_index] += record.bytes;
    }
  }
  return bytes;
}

// The first sender's share of the bytes delivered from 21 ms on (DCQCN has settled by then) in
// two windows: up to 301 ms, and up to 2021 ms.
struct LateJoinerShares {
  double until_301ms = 0;
  double until_2021ms = 0;
};

// Two senders into one port, the second joining 1 ms late, each keeping 64 KiB messages queued.
LateJoinerShares late_joiner_shares(uint64_t seed) {
  // NVIDIA's DCQCN defaults with RED thresholds for a 100G port.
  config::FabricConfig fabric = single_switch();
  fabric.ecn.kmin_bytes = 100'000;
  fabric.ecn.kmax_bytes = 400'000;
  fabric.ecn.pmax = 0.2;
  TwinRig rig(fabric, {}, 3, seed);
  const ConnectionId connections[2] = {rig.transport.connect(0, 2, 11),
                                       rig.transport.connect(1, 2, 22)};
  constexpr uint64_t kMessage = 64 * 1024;
  constexpr Nanos kJoin = 1'000'000;
  constexpr Nanos kSettled = 21'000'000;
  constexpr Nanos kShortEnd = 301'000'000;
  constexpr Nanos kLongEnd = 2'021'000'000;
  // Messages are topped up every millisecond rather than posted up front: 2 s is ~190k messages
  // per sender, whose flow state and records would otherwise all be held at once. 512 queued is
  // more than a sender can send in a millisecond even at line rate (191), so neither ever runs
  // dry, and posting behind queued messages changes nothing on the wire.
  constexpr uint64_t kQueued = 512;
  constexpr Nanos kTopUpPeriod = 1'000'000;
  uint64_t posted[2] = {0, 0};
  uint64_t finished[2] = {0, 0};
  uint64_t short_bytes[2] = {0, 0};
  uint64_t long_bytes[2] = {0, 0};
  for (Nanos now = 0; now < kLongEnd; now += kTopUpPeriod) {
    for (uint16_t sender = 0; sender < 2; ++sender) {
      if (sender == 1 && now < kJoin) continue;
      for (; posted[sender] - finished[sender] < kQueued; ++posted[sender]) {
        rig.transport.post(connections[sender], kMessage, {.qp_index = sender});
      }
    }
    rig.clock.run_until(now + kTopUpPeriod);
    // Whole messages, counted when delivered.
    for (const FlowRecord& record : rig.observer.delivered) {
      if (record.delivered_at < kSettled || record.delivered_at >= kLongEnd) continue;
      long_bytes[record.tags.qp_index] += record.bytes;
      if (record.delivered_at < kShortEnd) short_bytes[record.tags.qp_index] += record.bytes;
    }
    for (const FlowRecord& record : rig.observer.finished) {
      EXPECT_EQ(record.status, FlowStatus::kCompleted);
      ++finished[record.tags.qp_index];
    }
    rig.observer.delivered.clear();
    rig.observer.finished.clear();
  }
  EXPECT_GT(rig.transport.port_counters(0).cnps_received, 0u);
  EXPECT_GT(rig.transport.port_counters(1).cnps_received, 0u);
  // Together they keep the bottleneck busy.
  const auto goodput = [](const uint64_t bytes[2], Nanos window) {
    return static_cast<double>(bytes[0] + bytes[1]) * 8 / (static_cast<double>(window) * 1e-9);
  };
  EXPECT_GT(goodput(short_bytes, kShortEnd - kSettled), 0.9 * k100G);
  EXPECT_GT(goodput(long_bytes, kLongEnd - kSettled), 0.9 * k100G);
  const auto share = [](const uint64_t bytes[2]) {
    return static_cast<double>(bytes[0]) / static_cast<double>(bytes[0] + bytes[1]);
  };
  return {share(short_bytes), share(long_bytes)};
}

class TwoFlowsIntoOnePort : public ::testing::TestWithParam<uint64_t> {};

TEST_P(TwoFlowsIntoOnePort, ConvergeToAFairShare) {
  const uint64_t seed = GetParam();
  const LateJoinerShares shares = late_joiner_shares(seed);
  std::cout << "seed " << seed << ": first sender's share " << shares.until_301ms
            << " over 21-301 ms, " << shares.until_2021ms << " over 21-2021 ms\n";
  RecordProperty("share_21_301ms", std::to_string(shares.until_301ms));
  RecordProperty("share_21_2021ms", std::to_string(shares.until_2021ms));
  // With NVIDIA's defaults the two rates keep swinging around the share by several percent for
  // tens of milliseconds, and neither sender keeps an edge: a window's share scatters around half
  // by less the longer the window (docs/transport.md; seeds 1-20: rms 0.0066 and at most 0.012
  // over 280 ms, rms 0.0024 and at most 0.0053 over 2 s). So the acceptance bound, within 2 % of
  // the fair share, is checked on the 2 s window; the 280 ms window keeps its 3 %.
  EXPECT_NEAR(shares.until_301ms, 0.5, 0.015);
  EXPECT_NEAR(shares.until_2021ms, 0.5, 0.01);
}

INSTANTIATE_TEST_SUITE_P(Seeds, TwoFlowsIntoOnePort, ::testing::Values(1, 2, 3, 4, 5),
                         [](const ::testing::TestParamInfo<uint64_t>& info) {
                           std::string name = "seed";
                           name += std::to_string(info.param);
                           return name;
                         });

// The DCQCN paper's parameters (Zhu et al., SIGCOMM 2015; spec 3.8) and its RED thresholds:
// the target rate follows every cut, recovery is timed by a 55 us timer and a 10 MB byte
// counter, one CNP per 50 us per QP.
config::TransportConfig dcqcn_paper_transport() {
  config::TransportConfig config;
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

config::FabricConfig dcqcn_paper_fabric() {
  config::FabricConfig fabric = single_switch();
  fabric.ecn.kmin_bytes = 5'000;
  fabric.ecn.kmax_bytes = 200'000;
  fabric.ecn.pmax = 0.01;
  return fabric;
}

TEST(TwinScenario, IncastWithDcqcnKeepsTheQueueNearTheMarkingThresholds) {
  // 16 senders into one port, each keeping 64 KiB messages queued, no PFC. Once DCQCN has
  // settled (from 5 ms on) the bottleneck queue is sampled every 5 us for 20 ms.
  constexpr uint32_t kSenders = 16;
  TwinRig rig(dcqcn_paper_fabric(), dcqcn_paper_transport(), kSenders + 1);
  for (uint32_t sender = 0; sender < kSenders; ++sender) {
    const auto connection =
        rig.transport.connect(sender, kSenders, static_cast<uint16_t>(5000 + sender));
    for (int i = 0; i < 2000; ++i) rig.transport.post(connection, 64 * 1024, {});
  }
  const uint32_t bottleneck = rig.twin.layout().host_switch_port(kSenders);
  constexpr Nanos kFrom = 5'000'000;
  constexpr Nanos kTo = 25'000'000;
  rig.clock.run_until(kFrom);
  std::vector<uint64_t> depths;
  for (Nanos t = kFrom; t < kTo; t += 5'000) {
    rig.clock.run_until(t);
    depths.push_back(rig.twin.queue(bottleneck, config::PortQos{}.data.priority).depth_bytes);
  }
  rig.clock.run_until(kTo);
  std::sort(depths.begin(), depths.end());
  double mean = 0;
  for (const uint64_t depth : depths) mean += static_cast<double>(depth);
  mean /= static_cast<double>(depths.size());
  // Bounded near the thresholds: on average between Kmin and Kmax, never far above Kmax.
  EXPECT_GT(mean, 5'000.0);
  EXPECT_LT(mean, 200'000.0);
  EXPECT_LE(depths.back(), 250'000u);
  EXPECT_EQ(rig.twin.switch_port_counters(bottleneck).drops(), 0u);
  // Goodput: payload delivered in the window against the most a 100G port can carry of
  // 4096-byte payloads in 4096 + headers.
  const auto delivered = delivered_bytes(rig.observer.delivered, 1, kFrom, kTo);
  const double payload_share = 4096.0 / wire_bytes_of(nic::opcode::kWriteMiddle, 4096);
  const double goodput = static_cast<double>(delivered[0]) * 8 / ((kTo - kFrom) * 1e-9);
  EXPECT_GE(goodput, 0.9 * payload_share * k100G);
  uint64_t cnps = 0;
  for (uint32_t sender = 0; sender < kSenders; ++sender) {
    cnps += rig.transport.port_counters(sender).cnps_received;
  }
  EXPECT_GT(cnps, 0u);
}

struct IncastResult {
  uint64_t max_queue_bytes = 0;
  uint64_t drops = 0;
  uint64_t pauses_sent = 0;
  uint64_t pauses_received_by_nics = 0;
  uint64_t cnps = 0;
  uint64_t retransmits = 0;                   // summed over the flow records
  uint64_t retransmits_counted_by_ports = 0;  // summed over the senders' port counters
  double goodput_fraction = 0;
  size_t completed = 0;
  size_t flows = 0;
};

IncastResult run_incast(const config::FabricConfig& fabric, const config::TransportConfig& config,
                        uint64_t bytes_per_flow, uint64_t seed = 1) {
  constexpr size_t kSenders = 16;
  TwinRig rig(fabric, config, kSenders + 1, seed);
  for (uint32_t sender = 0; sender < kSenders; ++sender) {
    const auto connection =
        rig.transport.connect(sender, kSenders, static_cast<uint16_t>(5000 + sender));
    rig.transport.post(connection, bytes_per_flow, {.src_rank = static_cast<int32_t>(sender)});
  }
  rig.run();
  IncastResult result;
  result.flows = kSenders;
  Nanos last_delivery = 0;
  for (const auto& record : rig.observer.finished) {
    if (record.status == FlowStatus::kCompleted) ++result.completed;
    last_delivery = std::max(last_delivery, record.delivered_at);
    result.retransmits += record.retransmitted_packets;
  }
  const uint32_t bottleneck = rig.twin.layout().host_switch_port(kSenders);
  for (uint8_t priority = 0; priority < 8; ++priority) {
    result.max_queue_bytes =
        std::max(result.max_queue_bytes, rig.twin.queue(bottleneck, priority).max_depth_bytes);
  }
  for (size_t port = 0; port < rig.twin.layout().switch_ports(); ++port) {
    const auto& counters = rig.twin.switch_port_counters(port);
    result.drops += counters.drops();
    result.pauses_sent += counters.pfc_pauses_sent;
  }
  for (uint32_t host = 0; host < kSenders; ++host) {
    result.pauses_received_by_nics += rig.transport.port_counters(host).pauses_received;
    result.cnps += rig.transport.port_counters(host).cnps_received;
    result.retransmits_counted_by_ports += rig.transport.port_counters(host).retransmitted_packets;
  }
  // Payload delivered over the time from start to the last delivery, against the line rate.
  result.goodput_fraction = static_cast<double>(bytes_per_flow * kSenders) * 8 /
                            (static_cast<double>(last_delivery) * 1e-9) / k100G;
  return result;
}

TEST(TwinScenario, PfcWithoutDcqcnIsLosslessAndPauses) {
  config::FabricConfig fabric = single_switch();
  fabric.pfc.enabled = true;
  fabric.ecn.enabled = false;
  config::TransportConfig config;
  config.dcqcn.enabled = false;
  const auto result = run_incast(fabric, config, 2 << 20);
  EXPECT_EQ(result.completed, result.flows);
  EXPECT_EQ(result.drops, 0u);
  EXPECT_EQ(result.retransmits, 0u);
  EXPECT_GT(result.pauses_sent, 0u);
  EXPECT_GT(result.pauses_received_by_nics, 0u);
  EXPECT_GE(result.goodput_fraction, 0.9);
}

TEST(TwinScenario, LossyIncastDropsRetransmitsAndStillCompletes) {
  // No PFC and a 512 KiB buffer: 16 senders starting at line rate overflow it before the first
  // CNP can arrive. Go-back-N repairs the losses while DCQCN (the paper's parameters) slows the
  // senders; every flow completes, and its record counts its retransmissions.
  config::FabricConfig fabric = dcqcn_paper_fabric();
  fabric.buffer.size_bytes = 512 * 1024;
  const auto result = run_incast(fabric, dcqcn_paper_transport(), 1 << 20);
  EXPECT_EQ(result.completed, result.flows);
  EXPECT_GT(result.drops, 0u);
  EXPECT_GT(result.retransmits, 0u);
  EXPECT_EQ(result.retransmits, result.retransmits_counted_by_ports);
}

TEST(TwinScenario, SameSeedGivesByteIdenticalRecords) {
  auto run = [](uint64_t seed) {
    config::FabricConfig fabric = single_switch();
    fabric.drop_probability = 0.001;
    fabric.ecn.kmin_bytes = 20'000;
    fabric.ecn.kmax_bytes = 200'000;
    fabric.ecn.pmax = 0.1;
    config::TransportConfig config;
    config.retransmit_timeout_ns = 100'000;
    TwinRig rig(fabric, config, 6, seed);
    for (uint32_t src = 0; src < 6; ++src) {
      for (uint32_t dst = 0; dst < 6; ++dst) {
        if (src == dst) continue;
        const auto c = rig.transport.connect(src, dst, static_cast<uint16_t>(src * 8 + dst));
        rig.transport.post(
            c, 300'000,
            {.src_rank = static_cast<int32_t>(src), .dst_rank = static_cast<int32_t>(dst)});
      }
    }
    rig.run();
    EXPECT_EQ(rig.observer.finished.size(), 30u);
    return rig.records_csv();
  };
  const std::string first = run(7);
  EXPECT_EQ(first, run(7));
  EXPECT_NE(first, run(8));  // the random drops and marks fall elsewhere
}

TEST(TwinScenario, RandomLossIsRepairedByGoBackN) {
  config::FabricConfig fabric = single_switch();
  fabric.drop_probability = 0.005;
  config::TransportConfig config;
  config.retransmit_timeout_ns = 100'000;
  TwinRig rig(fabric, config, 2, 3);
  const auto connection = rig.transport.connect(0, 1, 1);
  for (int i = 0; i < 20; ++i) rig.transport.post(connection, 1 << 20, {});
  rig.run();
  ASSERT_EQ(rig.observer.finished.size(), 20u);
  uint64_t retransmits = 0;
  for (const auto& record : rig.observer.finished) {
    EXPECT_EQ(record.status, FlowStatus::kCompleted);
    retransmits += record.retransmitted_packets;
  }
  EXPECT_GT(retransmits, 0u);
  EXPECT_GT(rig.transport.port_counters(0).naks_received, 0u);
  EXPECT_GT(rig.twin.host_counters(0).drops_fault + rig.twin.switch_port_counters(1).drops_fault,
            0u);
}

TEST(TwinScenario, DeadLinkExhaustsRetriesAndFailsTheFlow) {
  config::TransportConfig config;
  config.retransmission = config::Retransmission::kFixed;  // three timeouts of exactly 50 us
  config.retransmit_timeout_ns = 50'000;
  config.retry_count = 2;
  TwinRig rig(single_switch(), config, 2);
  rig.twin.set_cable_up(1, false);  // the receiver's cable
  const auto connection = rig.transport.connect(0, 1, 1);
  rig.transport.post(connection, 8192, {});
  rig.run();
  ASSERT_EQ(rig.observer.finished.size(), 1u);
  EXPECT_EQ(rig.observer.finished[0].status, FlowStatus::kRetryExceeded);
  EXPECT_EQ(rig.observer.finished[0].finished_at, 3 * 50'000);
  EXPECT_EQ(rig.transport.totals().flows_failed, 1u);
  EXPECT_GT(rig.twin.switch_port_counters(rig.twin.layout().host_switch_port(1)).drops_link_down,
            0u);
}

}  // namespace
}  // namespace etwire::transport

namespace etwire::transport::testing {
namespace {

// One QP from leaf0 to leaf1 over four spines that hash only the UDP source port (ECMP, as a
// real DUT): the uplinks of leaf0 its packets took.
std::vector<uint64_t> one_qp_over_ecmp(config::EntropyMode entropy) {
  config::FabricConfig fabric;
  fabric.topology = config::Topology::kLeafSpine;
  fabric.leaf_spine.ports_per_leaf = 4;
  fabric.leaf_spine.spines = 4;
  fabric.ecn.enabled = false;
  config::TransportConfig config;
  config.entropy.mode = entropy;
  TwinRig rig(fabric, config, 8);
  const auto connection = rig.transport.connect(0, 4, 49152);
  rig.transport.post(connection, 256 << 10, {});
  rig.run();
  EXPECT_EQ(rig.observer.finished.size(), 1u);
  std::vector<uint64_t> uplinks;
  for (size_t spine = 0; spine < 4; ++spine) {
    uplinks.push_back(
        rig.twin.switch_port_counters(rig.twin.layout().uplink_port(0, spine)).tx_packets);
  }
  return uplinks;
}

TEST(TwinScenario, SprayedEntropySpreadsOneQpOverEveryEcmpPath) {
  const std::vector<uint64_t> pinned = one_qp_over_ecmp(config::EntropyMode::kPerQp);
  EXPECT_EQ(std::count(pinned.begin(), pinned.end(), 0u), 3) << ::testing::PrintToString(pinned);
  for (const uint64_t packets : one_qp_over_ecmp(config::EntropyMode::kSpray)) {
    EXPECT_GT(packets, 4u);  // 64 data packets over four uplinks
  }
}

}  // namespace
}  // namespace etwire::transport::testing
