// Parallel virtual time: the transport over a fabric twin cut into partitions, each on a clock
// and a transport of its own, run window by window on one thread and on several. The bytes of a
// run (every flow record, delivery, counter and event count) must not depend on the threads; one
// flow must keep its exact timing through a cut; the cut follows the fabric.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "dataplane/loopback/twin_queue_sampler.h"
#include "dataplane/queue_row.h"

#include "tests/transport/twin_rig.h"
#include "twin/layout/fabric_layout.h"
#include "twin/layout/twin_partition.h"
#include "twin/partition/partitioned_twin.h"

namespace etwire::transport {
namespace {

using testing::port_specs;
using testing::RecordingObserver;
using twin::PartitionedTwin;

constexpr uint64_t k100G = 100'000'000'000;

// The transport on every partition of a PartitionedTwin: partition p's hosts are ports of
// transports[p], named by their host index as packets name them.
struct PartitionedRig {
  PartitionedRig(const config::FabricConfig& fabric_config,
                 const config::TransportConfig& transport_config, size_t ports, uint32_t partitions,
                 uint64_t seed = 1)
      : fabric(fabric_config),
        config(transport_config),
        specs(port_specs(ports, k100G)),
        twin(fabric, specs, seed, partitions),
        local(ports) {
    for (uint32_t p = 0; p < partitions; ++p) {
      observers.push_back(std::make_unique<RecordingObserver>());
      transports.push_back(std::make_unique<Transport>(config, twin.clock(p), *observers.back()));
    }
    for (uint32_t host = 0; host < ports; ++host) {
      local[host] = transport_of(host).add_port(twin.port(host), {}, {}, host);
    }
  }

  Transport& transport_of(uint32_t host) { return *transports[twin.partition_of_host(host)]; }

  // Opens both halves, each on its host's transport; returns the requester's QP number.
  uint32_t connect(uint32_t src, uint32_t dst, uint16_t udp_source_port) {
    const uint32_t qpn = next_qpn++;
    transport_of(src).open_requester(local[src], qpn, dst, qpn, udp_source_port);
    transport_of(dst).open_responder(local[dst], qpn, src, qpn, udp_source_port);
    return qpn;
  }

  // Everything the run reported and counted, as text, partition by partition.
  std::string outcome() {
    std::string text = "events " + std::to_string(twin.events_run()) + " windows " +
                       std::to_string(twin.windows_run()) + "\n";
    for (size_t p = 0; p < transports.size(); ++p) {
      const RecordingObserver& observer = *observers[p];
      text += "partition " + std::to_string(p) + "\n" + std::string(flow_csv_header());
      for (const auto& record : observer.delivered) append_flow_csv(record, text);
      for (const auto& record : observer.finished) append_flow_csv(record, text);
      for (const auto& remote : observer.remote_deliveries) {
        text += "remote " + std::to_string(remote.requester_qpn) + " " + std::to_string(remote.at) +
                " " + std::to_string(remote.ecn_marks) + "\n";
      }
    }
    for (uint32_t host = 0; host < specs.size(); ++host) {
      const TransportPortCounters& c = transport_of(host).port_counters(local[host]);
      const twin::WireCounters n = twin.host_counters(host);
      text += "host " + std::to_string(host) + " " + std::to_string(c.data_packets) + " " +
              std::to_string(c.retransmitted_packets) + " " + std::to_string(c.acks_received) +
              " " + std::to_string(c.cnps_received) + " " + std::to_string(c.naks_received) + " " +
              std::to_string(c.timeouts) + " " + std::to_string(c.pauses_received) + " " +
              std::to_string(n.tx_packets) + " " + std::to_string(n.rx_packets) + " " +
              std::to_string(n.drops()) + "\n";
    }
    for (size_t port = 0; port < twin.layout().switch_ports(); ++port) {
      const twin::WireCounters n = twin.switch_port_counters(port);
      text += "switch port " + std::to_string(port) + " " + std::to_string(n.tx_bytes) + " " +
              std::to_string(n.rx_bytes) + " " + std::to_string(n.ecn_marked) + " " +
              std::to_string(n.drops()) + " " + std::to_string(n.pfc_pauses_sent) + " " +
              std::to_string(n.pfc_resumes_received) + "\n";
    }
    return text;
  }

  size_t finished() const {
    size_t count = 0;
    for (const auto& observer : observers) count += observer->finished.size();
    return count;
  }
  uint64_t total(uint64_t TransportPortCounters::*counter) {
    uint64_t sum = 0;
    for (uint32_t host = 0; host < specs.size(); ++host) {
      sum += transport_of(host).port_counters(local[host]).*counter;
    }
    return sum;
  }

  config::FabricConfig fabric;
  config::TransportConfig config;
  std::vector<twin::TwinPortSpec> specs;
  PartitionedTwin twin;
  std::vector<std::unique_ptr<RecordingObserver>> observers;
  std::vector<std::unique_ptr<Transport>> transports;
  std::vector<uint32_t> local;  // by host: its port index in its transport
  uint32_t next_qpn = 1;
};

config::FabricConfig leaf_spine(uint32_t ports_per_leaf, uint32_t spines) {
  config::FabricConfig fabric;
  fabric.topology = config::Topology::kLeafSpine;
  fabric.leaf_spine.ports_per_leaf = ports_per_leaf;
  fabric.leaf_spine.spines = spines;
  fabric.propagation_delay_ns = 1'000;
  fabric.switch_latency_ns = 500;
  return fabric;
}

// DCQCN, RED/ECN and PFC, as the lossless RoCE fabrics the twin models, with 4:1 uplinks that
// the all-to-all's traffic between leaves congests.
config::FabricConfig lossless_leaf_spine() {
  config::FabricConfig fabric = leaf_spine(4, 2);
  fabric.leaf_spine.oversubscription = 4.0;
  fabric.ecn.enabled = true;
  fabric.ecn.kmin_bytes = 20'000;
  fabric.ecn.kmax_bytes = 200'000;
  fabric.ecn.pmax = 0.2;
  fabric.pfc.enabled = true;
  fabric.pfc.priorities = {3};
  return fabric;
}

config::TransportConfig dcqcn_on() {
  config::TransportConfig config;
  config.dcqcn.enabled = true;
  return config;
}

// Every host sends `bytes` to every other, in the order dst = src + 1, src + 2...
void all_to_all(PartitionedRig& rig, uint32_t hosts, uint64_t bytes) {
  for (uint32_t src = 0; src < hosts; ++src) {
    for (uint32_t step = 1; step < hosts; ++step) {
      const uint32_t dst = (src + step) % hosts;
      const uint32_t qpn =
          rig.connect(src, dst, static_cast<uint16_t>(49152 + (src * 131 + dst) % 16384));
      rig.transport_of(src).post(qpn, bytes, {});
    }
  }
}

std::string lossless_all_to_all(uint32_t partitions, uint32_t threads) {
  PartitionedRig rig(lossless_leaf_spine(), dcqcn_on(), 16, partitions);
  all_to_all(rig, 16, 256 << 10);
  rig.twin.run(threads);
  EXPECT_EQ(rig.finished(), 16u * 15u);
  EXPECT_GT(rig.total(&TransportPortCounters::cnps_received), 0u);
  uint64_t pauses = 0;
  for (size_t port = 0; port < rig.twin.layout().switch_ports(); ++port) {
    pauses += rig.twin.switch_port_counters(port).pfc_pauses_sent;
  }
  EXPECT_GT(pauses, 0u);
  EXPECT_EQ(rig.total(&TransportPortCounters::retransmitted_packets), 0u);
  return rig.outcome();
}

TEST(PartitionedTwin, LosslessAllToAllIsTheSameOnOneAndTwoThreads) {
  const std::string one = lossless_all_to_all(2, 1);
  const std::string two = lossless_all_to_all(2, 2);
  EXPECT_GT(one.size(), 10'000u);
  EXPECT_EQ(one, two);
  // Four partitions (one leaf each) on one, two and three threads.
  const std::string four = lossless_all_to_all(4, 1);
  EXPECT_EQ(four, lossless_all_to_all(4, 2));
  EXPECT_EQ(four, lossless_all_to_all(4, 3));
}

// PFC off, a small shared buffer and random loss on every link: drops, NAKs, timeouts and
// retransmissions, each decided by what arrived when.
std::string lossy_all_to_all(uint32_t threads) {
  config::FabricConfig fabric = leaf_spine(4, 2);
  fabric.buffer.size_bytes = 400'000;
  fabric.drop_probability = 0.001;
  config::TransportConfig config = dcqcn_on();
  config.retransmit_timeout_ns = 200'000;
  PartitionedRig rig(fabric, config, 16, 4);
  all_to_all(rig, 16, 128 << 10);
  rig.twin.run(threads);
  EXPECT_EQ(rig.finished(), 16u * 15u);
  EXPECT_GT(rig.total(&TransportPortCounters::retransmitted_packets), 0u);
  EXPECT_GT(rig.total(&TransportPortCounters::timeouts), 0u);
  return rig.outcome();
}

TEST(PartitionedTwin, LossyAllToAllIsTheSameOnOneAndTwoThreads) {
  EXPECT_EQ(lossy_all_to_all(1), lossy_all_to_all(2));
}

TEST(PartitionedTwin, ThreeTierByPodsIsTheSameOnOneAndTwoThreads) {
  const auto run = [](uint32_t threads) {
    config::FabricConfig fabric;
    fabric.topology = config::Topology::kThreeTier;
    fabric.leaf_spine.ports_per_leaf = 2;
    fabric.leaf_spine.spines = 2;
    fabric.three_tier.leaves_per_pod = 2;
    fabric.three_tier.super_spines = 2;
    PartitionedRig rig(fabric, dcqcn_on(), 16, 4);
    all_to_all(rig, 16, 64 << 10);
    rig.twin.run(threads);
    EXPECT_EQ(rig.finished(), 16u * 15u);
    return rig.outcome();
  };
  EXPECT_EQ(run(1), run(2));
}

// Switches that spread packets decide by what they hold (their queues, flowsets, random
// streams), so the threads change nothing either; the spraying reorders packets, which the
// go-back-N receivers answer with NAKs.
TEST(PartitionedTwin, SpreadingSwitchesAreTheSameOnOneAndTwoThreads) {
  const auto run = [](uint32_t threads) {
    config::FabricConfig fabric = lossless_leaf_spine();
    fabric.leaf_spine.links = 2;  // so that a spine has links to choose from too
    fabric.load_balancing.leaf = config::LoadBalancing::kSpray;
    fabric.load_balancing.spine = config::LoadBalancing::kAdaptive;
    PartitionedRig rig(fabric, dcqcn_on(), 16, 4);
    all_to_all(rig, 16, 64 << 10);
    rig.twin.run(threads);
    EXPECT_EQ(rig.finished(), 16u * 15u);
    EXPECT_GT(rig.total(&TransportPortCounters::naks_sent), 0u);
    return rig.outcome();
  };
  EXPECT_EQ(run(1), run(2));
}

// A single flow meets nothing in the fabric, so cutting it changes nothing: the same delivery
// and finish, to the nanosecond, as on the whole twin.
TEST(PartitionedTwin, OneFlowThroughACutKeepsItsExactTiming) {
  const config::FabricConfig fabric = lossless_leaf_spine();
  testing::TwinRig whole(fabric, dcqcn_on(), 16);
  const auto connection = whole.transport.connect(1, 14, 50000);
  whole.transport.post(connection, 8 << 20, {});
  whole.run();
  ASSERT_EQ(whole.observer.finished.size(), 1u);

  PartitionedRig cut(fabric, dcqcn_on(), 16, 4);
  ASSERT_NE(cut.twin.partition_of_host(1), cut.twin.partition_of_host(14));
  const uint32_t qpn = cut.connect(1, 14, 50000);
  cut.transport_of(1).post(qpn, 8 << 20, {});
  cut.twin.run(2);
  const auto& finished = cut.observers[cut.twin.partition_of_host(1)]->finished;
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].finished_at, whole.observer.finished[0].finished_at);
  const auto& remote = cut.observers[cut.twin.partition_of_host(14)]->remote_deliveries;
  ASSERT_EQ(remote.size(), 1u);
  EXPECT_EQ(remote[0].at, whole.observer.finished[0].delivered_at);
  EXPECT_GT(cut.twin.windows_run(), 100u);
}

// Queue samples through a cut: each partition samples the switch ports it owns between its
// events (PartitionedTwin::Watch), and together they see what one sampler sees on the whole twin.
// One flow keeps its exact timing through the cut, so every row must match. The partitions also
// sample up to the end of their last window, after the whole twin's last event: those rows are
// left out.
class RowsKept final : public dataplane::QueueSink {
 public:
  void append(const dataplane::QueueRow& row, std::string_view switch_port) override {
    text.emplace(row.at, row.queue.switch_port, row.queue.priority,
                 fmt::format("{} {} {} {} {} {} {:.6f}", switch_port, row.queue.depth_bytes,
                             row.queue.max_depth_bytes, row.queue.enqueued_packets,
                             row.queue.ecn_marked, row.queue.paused, row.utilization));
  }
  std::set<std::tuple<clock::Nanos, uint32_t, uint8_t, std::string>> text;
};

struct SampleBeforeEvents final : PartitionedTwin::Watch {
  explicit SampleBeforeEvents(dataplane::TwinQueueSampler& sampler) : sampler(sampler) {}
  void before(clock::Nanos time) override { sampler.take_until(time); }
  dataplane::TwinQueueSampler& sampler;
};

TEST(PartitionedTwin, QueueSamplesThroughACutAreTheWholeTwins) {
  constexpr clock::Nanos kInterval = 5'000;
  const config::FabricConfig fabric = lossless_leaf_spine();
  testing::TwinRig whole(fabric, dcqcn_on(), 16);
  RowsKept whole_rows;
  dataplane::TwinQueueSampler whole_sampler(whole.twin, whole_rows, kInterval);
  const auto connection = whole.transport.connect(1, 14, 50000);
  whole.transport.post(connection, 8 << 20, {});
  while (!whole.clock.idle()) {
    whole_sampler.take_until(whole.clock.next_event_time());
    whole.clock.poll();
  }
  const clock::Nanos last_event = whole.clock.now();

  PartitionedRig cut(fabric, dcqcn_on(), 16, 4);
  // A sink each: the partitions sample on their own threads.
  std::vector<RowsKept> partition_rows(4);
  std::vector<std::unique_ptr<dataplane::TwinQueueSampler>> samplers;
  std::vector<std::unique_ptr<SampleBeforeEvents>> watches;
  for (uint32_t p = 0; p < 4; ++p) {
    std::vector<bool> owned(cut.twin.layout().switch_ports());
    for (size_t port = 0; port < owned.size(); ++port) {
      owned[port] = cut.twin.partition_of_switch_port(port) == p;
    }
    samplers.push_back(std::make_unique<dataplane::TwinQueueSampler>(
        cut.twin.twin(p), partition_rows[p], kInterval, owned));
    watches.push_back(std::make_unique<SampleBeforeEvents>(*samplers.back()));
    cut.twin.set_watch(p, watches.back().get());
  }
  const uint32_t qpn = cut.connect(1, 14, 50000);
  cut.transport_of(1).post(qpn, 8 << 20, {});
  cut.twin.run(2);
  RowsKept cut_rows;
  for (const RowsKept& rows : partition_rows) {
    for (const auto& row : rows.text) {
      if (std::get<0>(row) < last_event) cut_rows.text.insert(row);
    }
  }

  EXPECT_GT(whole_rows.text.size(), 100u);
  EXPECT_EQ(cut_rows.text, whole_rows.text);
  // Rows of switch ports in three partitions: host 1's leaf, host 14's and a spine.
  std::set<uint32_t> partitions;
  for (const auto& row : cut_rows.text) {
    partitions.insert(cut.twin.partition_of_switch_port(std::get<1>(row)));
  }
  EXPECT_GE(partitions.size(), 3u);
}

TEST(PartitionedTwin, PartitionsFollowTheLeaves) {
  const auto specs = port_specs(16, k100G);
  PartitionedTwin twin(leaf_spine(4, 2), specs, 1, 2);
  for (uint32_t host = 0; host < 16; ++host) {
    EXPECT_EQ(twin.partition_of_host(host), host / 8) << "host " << host;
  }
  EXPECT_EQ(twin.lookahead(), 1'000);
  PartitionedTwin whole(leaf_spine(4, 2), specs, 1, 1);
  EXPECT_EQ(whole.lookahead(), 0);
}

// Leaves are grouped by the traffic of their hosts: a leaf that moves as much as the three others
// is a partition of its own; no partition is left empty, however the traffic lies; equal traffic
// (or none given) cuts as the leaf count does.
TEST(PartitionedTwin, PartitionsCarryAboutEqualTraffic) {
  const auto specs = port_specs(16, k100G);
  const twin::FabricLayout layout(leaf_spine(4, 2), specs);
  const auto leaves_of = [&](std::vector<uint64_t> per_leaf, uint32_t count) {
    std::vector<uint64_t> hosts;
    for (uint64_t weight : per_leaf) hosts.insert(hosts.end(), 4, weight);
    const twin::TwinPartitioning cut = twin::partition_fabric(layout, count, hosts);
    std::vector<uint32_t> leaves;
    for (uint32_t host = 0; host < 16; host += 4) leaves.push_back(cut.of_host[host]);
    for (uint32_t host = 0; host < 16; ++host) EXPECT_EQ(cut.of_host[host], leaves[host / 4]);
    return leaves;
  };
  using Leaves = std::vector<uint32_t>;
  EXPECT_EQ(leaves_of({300, 100, 100, 100}, 2), (Leaves{0, 1, 1, 1}));
  EXPECT_EQ(leaves_of({100, 100, 100, 300}, 2), (Leaves{0, 0, 0, 1}));
  EXPECT_EQ(leaves_of({0, 0, 0, 400}, 3), (Leaves{0, 0, 1, 2}));
  EXPECT_EQ(leaves_of({400, 0, 0, 0}, 4), (Leaves{0, 1, 2, 3}));
  EXPECT_EQ(leaves_of({7, 7, 7, 7}, 2), (Leaves{0, 0, 1, 1}));
  EXPECT_EQ(leaves_of({0, 0, 0, 0}, 3), (Leaves{0, 0, 1, 2}));
  EXPECT_EQ(twin::partition_fabric(layout, 3).of_host,
            twin::partition_fabric(layout, 3, std::vector<uint64_t>(16, 5)).of_host);
}

// A partition holds its own hosts and switch ports and the links with an end at one of them,
// nothing else: what the partitions hold adds up to the fabric, with each cut cable held twice.
// Another partition's queue or NIC is refused by name.
TEST(PartitionedTwin, APartitionHoldsOnlyItsOwnShare) {
  const auto specs = port_specs(16, k100G);
  PartitionedTwin twin(leaf_spine(4, 2), specs, 1, 4);
  const twin::FabricLayout& layout = twin.layout();
  const auto owner = [&](const twin::Endpoint& end) {
    return end.is_host() ? twin.partition_of_host(end.index)
                         : twin.partition_of_switch_port(end.index);
  };
  size_t hosts = 0;
  size_t switch_ports = 0;
  for (uint32_t p = 0; p < 4; ++p) {
    size_t links = 0;
    for (uint32_t cable = 0; cable < layout.cables(); ++cable) {
      const twin::CableInfo& info = layout.cable(cable);
      if (owner(info.lower) == p || owner(info.upper) == p) links += 2;
    }
    const twin::FabricTwin::Held held = twin.twin(p).held();
    EXPECT_EQ(held.links, links) << "partition " << p;
    EXPECT_LT(held.links, 2 * size_t{layout.cables()}) << "partition " << p;
    hosts += held.hosts;
    switch_ports += held.switch_ports;
  }
  EXPECT_EQ(hosts, 16u);
  EXPECT_EQ(switch_ports, layout.switch_ports());
  // One layout for all until a partition reroutes.
  EXPECT_EQ(&twin.twin(0).layout(), &twin.twin(3).layout());
  PartitionedTwin whole(leaf_spine(4, 2), specs, 1, 1);
  EXPECT_EQ(whole.twin(0).held().links, 2 * size_t{layout.cables()});

  const uint32_t leaf3_port = layout.host_switch_port(12);
  try {
    (void)twin.twin(0).queue(leaf3_port, 0);
    ADD_FAILURE() << "partition 0 sampled partition 3's queue";
  } catch (const std::out_of_range& error) {
    EXPECT_NE(std::string(error.what()).find("another partition's"), std::string::npos);
  }
  EXPECT_THROW((void)twin.twin(0).port(12), std::out_of_range);
  EXPECT_EQ(twin.twin(0).switch_port_counters(leaf3_port).tx_packets, 0u);
}

// A cut cable that goes down under frames on their way: they are lost on arrival, in the
// receiving end's partition, and counted at their sender, which is another partition's.
TEST(PartitionedTwin, FramesLostOnACutCableCountAtTheirSender) {
  config::FabricConfig fabric = leaf_spine(4, 2);
  const auto specs = port_specs(16, k100G);
  const twin::FabricLayout layout(fabric, specs);
  const uint32_t cable = layout.uplink_cable(0, 1);
  config::FabricFault down;
  down.kind = config::FaultKind::kLinkDown;
  down.key_path = "fabric.faults[0]";
  down.link = "leaf0/spine1";
  down.at_ns = 30'000;
  down.detection_ns = 1'000'000;
  fabric.faults = {down};
  PartitionedRig rig(fabric, dcqcn_on(), 16, 2);
  all_to_all(rig, 16, 256 << 10);
  rig.twin.run(2);
  const twin::CableInfo& info = layout.cable(cable);
  uint64_t lost_in_flight = 0;
  for (const twin::Endpoint& sender : {info.lower, info.upper}) {
    const uint32_t other = 1 - rig.twin.partition_of_switch_port(sender.index);
    lost_in_flight += rig.twin.twin(other).switch_port_counters(sender.index).drops_link_down;
  }
  EXPECT_GT(lost_in_flight, 0u);
  uint64_t summed = 0;
  for (const twin::Endpoint& sender : {info.lower, info.upper}) {
    summed += rig.twin.switch_port_counters(sender.index).drops_link_down;
  }
  EXPECT_GT(summed, lost_in_flight);
  // Routing learned of the dead cable in every partition, each on a layout of its own.
  EXPECT_TRUE(rig.twin.twin(0).layout().rerouted());
  EXPECT_TRUE(rig.twin.twin(1).layout().rerouted());
  EXPECT_FALSE(rig.twin.layout().rerouted());
  EXPECT_NE(&rig.twin.twin(0).layout(), &rig.twin.twin(1).layout());
  EXPECT_NE(rig.twin.fault_report().at(0).find(std::to_string(summed) + " frames lost"),
            std::string::npos)
      << rig.twin.fault_report().at(0);
}

TEST(PartitionedTwin, RefusesWhatItCannotCut) {
  const auto specs = port_specs(16, k100G);
  const auto message = [&](const config::FabricConfig& fabric, uint32_t partitions) {
    try {
      PartitionedTwin twin(fabric, specs, 1, partitions);
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message(leaf_spine(4, 2), 5).find("5 partitions need as many leaves; the fabric has 4"),
            std::string::npos);
  EXPECT_NE(message(config::FabricConfig{}, 2).find("the fabric has 0"), std::string::npos);
  EXPECT_NE(message(leaf_spine(4, 2), 0).find("0 partitions"), std::string::npos);
  config::FabricConfig instant = leaf_spine(4, 2);
  instant.propagation_delay_ns = 0;
  EXPECT_NE(message(instant, 2).find("no propagation delay"), std::string::npos);
  EXPECT_EQ(message(instant, 1), "accepted");
}

// A PFC storm acts once, at its host's partition, and its pauses cross the cut like any frame.
TEST(PartitionedTwin, AStormActsOnceAtItsHostsPartition) {
  config::FabricConfig fabric = lossless_leaf_spine();
  config::FabricFault storm;
  storm.kind = config::FaultKind::kPfcStorm;
  storm.key_path = "fabric.faults[0]";
  storm.port = "p13";
  storm.priority = 3;
  storm.at_ns = 10'000;
  storm.until_ns = 2'000'000;
  fabric.faults = {storm};
  testing::TwinRig whole(fabric, dcqcn_on(), 16);
  whole.run();
  const uint64_t sent = whole.twin.host_counters(13).pfc_pauses_sent;
  ASSERT_GT(sent, 10u);
  PartitionedRig cut(fabric, dcqcn_on(), 16, 4);
  cut.twin.run(2);
  EXPECT_EQ(cut.twin.host_counters(13).pfc_pauses_sent, sent);
  const uint32_t facing = cut.twin.layout().host_switch_port(13);
  EXPECT_EQ(cut.twin.switch_port_counters(facing).pfc_pauses_received, sent);
}

// A window's tail: its work runs on every thread of the window once the partitions ran the
// window's events, so what the events reported in the window is all there; gather is only for
// partitions spread over processes.
struct CountingTail final : PartitionedTwin::WindowTail {
  explicit CountingTail(PartitionedRig& rig) : rig(rig) {}
  void gather() override { ++gathers; }
  void work(uint32_t thread, uint32_t threads) override {
    std::lock_guard<std::mutex> lock(mutex);
    calls.emplace_back(thread, threads);
    finished_seen.push_back(rig.finished());
  }
  PartitionedRig& rig;
  std::mutex mutex;
  uint32_t gathers = 0;
  std::vector<std::pair<uint32_t, uint32_t>> calls;
  std::vector<size_t> finished_seen;
};

TEST(PartitionedTwin, TheWindowsTailWorksOnEveryThreadAfterTheWindow) {
  for (uint32_t threads : {1u, 2u}) {
    PartitionedRig rig(lossless_leaf_spine(), dcqcn_on(), 16, 4);
    all_to_all(rig, 16, 16 << 10);
    CountingTail tail(rig);
    rig.twin.set_window_tail(&tail);
    rig.twin.run(threads);
    EXPECT_EQ(tail.gathers, 0u);
    ASSERT_EQ(tail.calls.size(), rig.twin.windows_run() * threads) << threads << " thread(s)";
    std::vector<uint32_t> per_thread(threads, 0);
    for (const auto& [thread, told_threads] : tail.calls) {
      EXPECT_EQ(told_threads, threads);
      ASSERT_LT(thread, threads);
      ++per_thread[thread];
    }
    for (const uint32_t count : per_thread) EXPECT_EQ(count, rig.twin.windows_run());
    // The last window's tail saw every flow finished: it ran after the window's events.
    EXPECT_EQ(tail.finished_seen.back(), rig.finished());
    EXPECT_EQ(rig.finished(), 16u * 15u);
  }
}

// An event that throws in one partition ends the run at its window, and the error reaches the
// caller, whichever thread it ran on.
struct BadTransmit final : clock::EventHandler {
  explicit BadTransmit(nic::Port& port) : port(&port) {}
  void on_event(uint64_t, clock::Nanos now) override {
    nic::Packet packet;
    packet.priority = 9;
    packet.wire_bytes = 100;
    port->transmit(packet, now);
  }
  nic::Port* port;
};

TEST(PartitionedTwin, AnErrorInAPartitionReachesTheCaller) {
  for (uint32_t threads : {1u, 2u}) {
    PartitionedRig rig(lossless_leaf_spine(), dcqcn_on(), 16, 2);
    all_to_all(rig, 16, 64 << 10);
    BadTransmit bad(rig.twin.port(12));
    rig.twin.clock(1).run_at(20'000, &bad, 0);
    try {
      rig.twin.run(threads);
      ADD_FAILURE() << "the run did not throw on " << threads << " thread(s)";
    } catch (const std::invalid_argument& error) {
      EXPECT_NE(std::string(error.what()).find("priority 9"), std::string::npos) << error.what();
    }
  }
}

}  // namespace
}  // namespace etwire::transport
