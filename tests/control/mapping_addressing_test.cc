// Rank -> port placement and per-rank addressing, on configurations built in code.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "control/plan/addressing.h"
#include "control/plan/qp_numbering.h"
#include "control/plan/rank_mapping.h"

namespace etwire::control {

using namespace etwire::config;
namespace {

using ::testing::HasSubstr;

RunConfig config_with_ports(int count) {
  RunConfig config;
  for (int i = 0; i < count; ++i) {
    PortConfig port;
    port.name = "p" + std::to_string(i);
    port.key_path = "ports[" + std::to_string(i) + "]";
    port.ipv4 = *Ipv4Address::parse("10.0." + std::to_string(i) + ".1");
    port.mac = *MacAddress::parse("02:00:0a:00:0" + std::to_string(i) + ":01");
    config.ports.push_back(port);
  }
  return config;
}

JobMapping mapping(Placement placement) {
  JobMapping m;
  m.job = "job0";
  m.key_path = "mapping.jobs[0]";
  m.placement = placement;
  return m;
}

std::vector<size_t> place(const RunConfig& config, const JobMapping& m, int32_t world,
                          Diagnostics& out) {
  SourceMap where("t.yaml");
  auto placement = place_ranks(config, m, world, where, out);
  return placement ? placement->port_of_rank : std::vector<size_t>{};
}

TEST(Placement, BlockSpreadsEvenlyByDefault) {
  Diagnostics out;
  auto ports = place(config_with_ports(4), mapping(Placement::kBlock), 10, out);
  EXPECT_EQ(ports, (std::vector<size_t>{0, 0, 0, 1, 1, 1, 2, 2, 2, 3}));
  EXPECT_FALSE(out.has_errors());
}

TEST(Placement, BlockWithRanksPerPort) {
  Diagnostics out;
  auto m = mapping(Placement::kBlock);
  m.ranks_per_port = 2;
  EXPECT_EQ(place(config_with_ports(4), m, 6, out), (std::vector<size_t>{0, 0, 1, 1, 2, 2}));
  m.ranks_per_port = 1;
  EXPECT_TRUE(place(config_with_ports(4), m, 6, out).empty());
  ASSERT_EQ(out.error_count(), 1u);
  EXPECT_EQ(out.items()[0].problem, Problem::kTraceMismatch);
  EXPECT_EQ(out.items()[0].key_path, "mapping.jobs[0].ranks_per_port");
}

TEST(Placement, RoundRobinCyclesThroughTheListedPorts) {
  Diagnostics out;
  auto m = mapping(Placement::kRoundRobin);
  m.ports = {"p3", "p1"};
  EXPECT_EQ(place(config_with_ports(4), m, 5, out), (std::vector<size_t>{3, 1, 3, 1, 3}));
  EXPECT_FALSE(out.has_errors());
}

TEST(Placement, ExplicitListMustCoverEveryRank) {
  Diagnostics out;
  auto m = mapping(Placement::kExplicit);
  m.rank_ports = {"p2", "p2", "p0"};
  EXPECT_EQ(place(config_with_ports(4), m, 3, out), (std::vector<size_t>{2, 2, 0}));
  EXPECT_TRUE(place(config_with_ports(4), m, 4, out).empty());
  ASSERT_EQ(out.error_count(), 1u);
  EXPECT_THAT(out.items()[0].message, HasSubstr("maps 3 ranks, but job \"job0\" has 4 ranks"));
  m.ranks_per_port = 1;
  Diagnostics limited;
  EXPECT_TRUE(place(config_with_ports(4), m, 3, limited).empty());
  EXPECT_THAT(limited.to_text(), HasSubstr("port \"p2\" gets 2 ranks, above ranks_per_port (1)"));
}

TEST(Placement, UnknownAndRepeatedPortsAreReportedWithSuggestions) {
  Diagnostics out;
  auto m = mapping(Placement::kBlock);
  m.ports = {"p1", "p9", "p1", "P2"};
  EXPECT_TRUE(place(config_with_ports(4), m, 2, out).empty());
  std::string text = out.to_text();
  EXPECT_THAT(text, HasSubstr("mapping.jobs[0].ports[1]: no port named \"p9\""));
  EXPECT_THAT(text, HasSubstr("mapping.jobs[0].ports[2]: port \"p1\" is listed twice"));
  EXPECT_THAT(text, HasSubstr("no port named \"P2\" in ports (did you mean \"p2\"?)"));
}

TEST(Placement, HostsGroupConsecutiveRanks) {
  Diagnostics out;
  auto m = mapping(Placement::kBlock);
  m.hosts.ranks_per_host = 4;
  SourceMap where("t.yaml");
  auto placement = place_ranks(config_with_ports(8), m, 8, where, out);
  ASSERT_TRUE(placement);
  EXPECT_EQ(placement->host(3), 0);
  EXPECT_EQ(placement->host(4), 1);
  EXPECT_TRUE(placement->same_host(5, 7));
  EXPECT_FALSE(placement->same_host(3, 4));
  auto partial = place_ranks(config_with_ports(8), m, 6, where, out);
  EXPECT_TRUE(partial);
  EXPECT_EQ(out.warning_count(), 1u);  // 6 ranks in hosts of 4
}

// Host-major, rail by local index: host h's ranks on server h's first NICs, rank i of every host
// on NIC i, whatever the NICs per server beyond the ranks per host.
TEST(Placement, RailPutsEachHostOnAServerAndLocalRankIOnNicI) {
  Diagnostics out;
  RunConfig config = config_with_ports(12);
  config.fabric.topology = Topology::kLeafSpine;
  config.fabric.rails.nics_per_host = 4;
  auto m = mapping(Placement::kRail);
  m.hosts.ranks_per_host = 2;
  EXPECT_EQ(place(config, m, 6, out), (std::vector<size_t>{0, 1, 4, 5, 8, 9}));
  EXPECT_FALSE(out.has_errors());
  // Without rails a server has as many NICs as a host has ranks: block placement, one per port.
  config.fabric.rails.nics_per_host = 0;
  EXPECT_EQ(place(config, m, 6, out), (std::vector<size_t>{0, 1, 2, 3, 4, 5}));
  // Four hosts of 2 on servers of 4 need 3 x 4 + 2 ports.
  config.fabric.rails.nics_per_host = 4;
  EXPECT_TRUE(place(config, m, 8, out).empty());
  ASSERT_EQ(out.error_count(), 1u);
  EXPECT_THAT(out.items()[0].message, HasSubstr("needs 4 servers of 4 NICs (14 ports)"));
  // A host with more ranks than a server has NICs.
  m.hosts.ranks_per_host = 8;
  EXPECT_TRUE(place(config, m, 8, out).empty());
  ASSERT_EQ(out.error_count(), 2u);
  EXPECT_EQ(out.items()[1].key_path, "mapping.jobs[0].hosts.ranks_per_host");
}

AddressPlan addresses_for(RunConfig& config, const std::vector<std::vector<size_t>>& jobs,
                          Diagnostics& out) {
  std::vector<JobPlacement> placements;
  for (size_t j = 0; j < jobs.size(); ++j) {
    JobConfig job;
    job.name = "job" + std::to_string(j);
    config.workload.jobs.push_back(job);
    JobPlacement p;
    p.job = job.name;
    p.world_size = static_cast<int32_t>(jobs[j].size());
    p.port_of_rank = jobs[j];
    placements.push_back(p);
  }
  SourceMap where("t.yaml");
  return assign_addresses(config, placements, where, out);
}

TEST(Addressing, SharedAddresses) {
  RunConfig config = config_with_ports(2);
  Diagnostics out;
  AddressPlan plan = addresses_for(config, {{0, 0, 1, 1}}, out);
  EXPECT_FALSE(out.has_errors()) << out.to_text();
  EXPECT_EQ(plan.udp_source_port(283), 49152 + 283);
  EXPECT_EQ(plan.endpoint(0, 1).ipv4.to_string(), "10.0.0.1");  // shared with the port
  EXPECT_EQ(plan.endpoint(0, 1).slot, 1u);
  EXPECT_EQ(plan.endpoint(0, 3).mac.to_string(), "02:00:0a:00:01:01");
}

// A ring over ranks 0-3 (two per port) on QP id 0, and rank 1 to 2 on QP id 3 as well.
TrafficPlan ring_traffic() {
  TrafficPlan traffic;
  traffic.connections = {{{0, 1, 0}, {1, 2, 0}, {1, 2, 3}, {2, 3, 0}, {3, 0, 0}}};
  return traffic;
}

TEST(QpNumbering, NumbersOnlyTheQpsTheTrafficOpensPortByPort) {
  RunConfig config = config_with_ports(2);
  Diagnostics out;
  const AddressPlan addresses = addresses_for(config, {{0, 0, 1, 1}}, out);
  const QpNumbering numbers =
      number_qps(config, addresses, ring_traffic(), SourceMap("t.yaml"), out);
  EXPECT_FALSE(out.has_errors()) << out.to_text();
  // Port 0 (ranks 0 and 1), by (rank, peer, QP id): 0->1/0, 0->3/0, 1->0/0, 1->2/0, 1->2/3.
  EXPECT_EQ(numbers.find(0, 0, 1, 0), 256u);
  EXPECT_EQ(numbers.find(0, 0, 3, 0), 257u);
  EXPECT_EQ(numbers.find(0, 1, 0, 0), 258u);
  EXPECT_EQ(numbers.find(0, 1, 2, 3), 260u);
  // Port 1 right after: 2->1/0, 2->1/3, 2->3/0, 3->0/0, 3->2/0.
  EXPECT_EQ(numbers.find(0, 2, 1, 3), 262u);
  EXPECT_EQ(numbers.find(0, 3, 2, 0), 265u);
  EXPECT_EQ(numbers.find(0, 0, 2, 0), std::nullopt) << "0 and 2 exchange nothing";
  EXPECT_EQ(numbers.find(0, 9, 2, 0), std::nullopt);
  EXPECT_EQ(numbers.port(0).first, 256u);
  EXPECT_EQ(numbers.port(0).count, 5u);
  EXPECT_EQ(numbers.port(1).first, 261u);
  EXPECT_EQ(numbers.rank(0, 1).first, 258u);
  EXPECT_EQ(numbers.rank(0, 1).count, 3u);
  EXPECT_EQ(numbers.rank(0, 3).first, 264u);
  EXPECT_EQ(numbers.count(), 10u);
  EXPECT_EQ(numbers.end(), 266u);
}

TEST(QpNumbering, EachPortNumbersItsQpsOnTheWireFromItsBase) {
  RunConfig config = config_with_ports(3);
  config.ports[2].qpn_base = 0x1000;
  Diagnostics out;
  const AddressPlan addresses = addresses_for(config, {{0, 0, 1, 1, 2}}, out);
  TrafficPlan traffic = ring_traffic();
  traffic.connections[0].push_back({4, 0, 0});
  const QpNumbering numbers = number_qps(config, addresses, traffic, SourceMap("t.yaml"), out);
  EXPECT_FALSE(out.has_errors()) << out.to_text();
  // Run numbers follow each other over the ports; wire numbers start again on each.
  EXPECT_EQ(numbers.port(0).count, 6u) << "rank 0 opens a QP towards 4 too";
  EXPECT_EQ(numbers.port(1).first, 262u);
  EXPECT_EQ(numbers.wire_port(0).first, 256u);
  EXPECT_EQ(numbers.wire_port(1).first, 256u);
  EXPECT_EQ(numbers.wire_port(1).count, 5u);
  EXPECT_EQ(numbers.wire_port(2).first, 0x1000u) << "ports[2].qpn_base";
  // Rank 2's QP towards 1 on QP id 3: run number 263, the second of port 1 on its wire.
  EXPECT_EQ(numbers.find(0, 2, 1, 3), 263u);
  EXPECT_EQ(numbers.wire(1, 263), 257u);
  EXPECT_EQ(numbers.wire(0, 257), 257u) << "the first port's are the same";
  EXPECT_EQ(numbers.wire(2, *numbers.find(0, 4, 0, 0)), 0x1000u);
  EXPECT_EQ(numbers.wire_rank(0, 3).first, 259u);
  EXPECT_EQ(numbers.wire_rank(0, 3).count, 2u);
  // A number the port did not give is its own.
  EXPECT_EQ(numbers.wire(0, 262), 262u);
  EXPECT_EQ(numbers.wire(1, 9999), 9999u);
  // Past every run and wire number.
  EXPECT_EQ(numbers.end(), 0x1001u);
}

TEST(QpNumbering, PortsMayShareWireNumbersButNotPassTwentyFourBits) {
  RunConfig config = config_with_ports(2);
  config.ports[1].qpn_base = 258;
  Diagnostics out;
  const AddressPlan addresses = addresses_for(config, {{0, 0, 1, 1}}, out);
  const QpNumbering numbers =
      number_qps(config, addresses, ring_traffic(), SourceMap("t.yaml"), out);
  EXPECT_FALSE(out.has_errors()) << "each port numbers its own: " << out.to_text();
  EXPECT_EQ(numbers.wire_port(1).first, 258u);
  Diagnostics past;
  config.ports[1].qpn_base = kQpnLimit - 3;
  number_qps(config, addresses, ring_traffic(), SourceMap("t.yaml"), past);
  ASSERT_EQ(past.error_count(), 1u) << past.to_text();
  EXPECT_EQ(past.items()[0].problem, Problem::kOutOfRange);
  EXPECT_THAT(past.to_text(), HasSubstr("run from 16777213 to 16777217, past the 24-bit limit"));
  EXPECT_THAT(past.to_text(), HasSubstr("its ranks open 5 QPs"));
}

TEST(Addressing, PerRankAddressesAddTheSlot) {
  RunConfig config = config_with_ports(2);
  config.mapping.addressing.ip = AddressSharing::kPerRank;
  config.mapping.addressing.mac = AddressSharing::kPerRank;
  Diagnostics out;
  // Two jobs share port 0: slots count every job's ranks, job by job.
  AddressPlan plan = addresses_for(config, {{0, 0, 1}, {0, 1}}, out);
  EXPECT_FALSE(out.has_errors()) << out.to_text();
  EXPECT_EQ(plan.endpoint(0, 1).ipv4.to_string(), "10.0.0.2");
  EXPECT_EQ(plan.endpoint(1, 0).ipv4.to_string(), "10.0.0.3");
  EXPECT_EQ(plan.endpoint(1, 0).slot, 2u);
  EXPECT_EQ(plan.endpoint(1, 1).ipv4.to_string(), "10.0.1.2");
  EXPECT_EQ(plan.endpoint(1, 1).mac.to_string(), "02:00:0a:00:01:02");
}

TEST(Addressing, PerRankAddressesThatReachAnotherPortAreDuplicates) {
  RunConfig config = config_with_ports(2);
  config.ports[1].ipv4 = *Ipv4Address::parse("10.0.0.3");
  config.mapping.addressing.ip = AddressSharing::kPerRank;
  Diagnostics out;
  addresses_for(config, {{0, 0, 0, 1}}, out);
  ASSERT_EQ(out.error_count(), 1u) << out.to_text();
  EXPECT_EQ(out.items()[0].problem, Problem::kDuplicate);
  EXPECT_THAT(out.items()[0].message, HasSubstr("IPv4 address 10.0.0.3 of rank 3 of job \"job0\" "
                                                "on port \"p1\" is also used by rank 2"));
}

TEST(Addressing, UdpSourcePortsCycleThroughThePool) {
  RunConfig config = config_with_ports(1);
  config.mapping.addressing.udp_source_port_base = 60000;
  config.mapping.addressing.udp_source_port_count = 100;
  Diagnostics out;
  AddressPlan plan = addresses_for(config, {{0, 0}}, out);
  EXPECT_EQ(plan.udp_source_port(256), 60056);
  EXPECT_EQ(plan.udp_source_port(299), 60099);
  EXPECT_EQ(plan.udp_source_port(300), 60000);
}

}  // namespace
}  // namespace etwire::control
