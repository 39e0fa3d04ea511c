// hosts.topology: the NIC each GPU of NCCL's topology dump leaves by (the nearest on the PCI
// tree, GPUs spread over equally near NICs), rail placement following it, and the errors a broken
// dump or a topology that does not fit the configuration gets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "control/load/nccl_topology.h"
#include "tests/control/test_configs.h"
#include "tests/testing/test_paths.h"

namespace etwire::control {
namespace {

using config::TopologyPath;
using ::testing::HasSubstr;

std::string fixture() {
  return (etwire::testing::source_dir() / "tests/cli/data/nccl_topo_8gpu_8nic.xml").string();
}

// Two CPUs of four PCIe switches, each holding a GPU and a NIC, the NICs numbered apart from the
// GPUs: every GPU takes the NIC of its switch.
TEST(NcclTopology, EachGpuTakesTheNicOfItsSwitch) {
  const config::ServerTopology topology = read_nccl_topology(fixture());
  EXPECT_EQ(topology.nic_of_gpu, (std::vector<uint32_t>{3, 2, 1, 0, 4, 5, 7, 6}));
  EXPECT_EQ(topology.path_of_gpu, std::vector<TopologyPath>(8, TopologyPath::kPciSwitch));
  ASSERT_EQ(topology.nics(), 8u);
  EXPECT_EQ(topology.nic_names[3], "mlx5_3");
  EXPECT_FALSE(topology.is_identity());
}

std::string pci(const std::string& inside) {
  return "<pci busid=\"0000:01:00.0\">\n" + inside + "</pci>\n";
}
std::string gpu(int dev) {
  return "<pci busid=\"0000:02:00.0\"><gpu dev=\"" + std::to_string(dev) + "\" sm=\"90\"/></pci>\n";
}
std::string nic(int dev) {
  return "<pci busid=\"0000:03:00.0\"><nic><net name=\"mlx5_" + std::to_string(dev) + "\" dev=\"" +
         std::to_string(dev) + "\"/></nic></pci>\n";
}
std::string cpu(const std::string& inside) {
  return "<cpu numaid=\"0\">\n" + inside + "</cpu>\n";
}
std::string system(const std::string& inside) {
  return "<system version=\"1\">\n" + inside + "</system>\n";
}

TEST(NcclTopology, GpusShareTheNicOfTheirSwitchAndSpreadOverEquallyNearOnes) {
  // Two GPUs per switch and one NIC: they share it.
  const config::ServerTopology shared = parse_nccl_topology(
      system(cpu(pci(gpu(0) + gpu(1) + nic(0)) + pci(gpu(2) + gpu(3) + nic(1)))), "t.xml");
  EXPECT_EQ(shared.nic_of_gpu, (std::vector<uint32_t>{0, 0, 1, 1}));
  // Two GPUs and two NICs under one switch: one each, not both on the first.
  const config::ServerTopology spread =
      parse_nccl_topology(system(cpu(pci(gpu(0) + gpu(1) + nic(1) + nic(0)))), "t.xml");
  EXPECT_EQ(spread.nic_of_gpu, (std::vector<uint32_t>{0, 1}));
  EXPECT_TRUE(spread.is_identity());
  // No NIC on the GPU's CPU: it meets the other CPU's NIC at the system.
  const config::ServerTopology far =
      parse_nccl_topology(system(cpu(pci(gpu(0))) + cpu(pci(nic(0)) + gpu(1))), "t.xml");
  EXPECT_EQ(far.path_of_gpu,
            (std::vector<TopologyPath>{TopologyPath::kSystem, TopologyPath::kCpu}));
}

std::string error_of(const std::string& xml) {
  try {
    parse_nccl_topology(xml, "topo.xml");
  } catch (const NcclDumpError& e) {
    return e.what();
  }
  return "";
}

TEST(NcclTopology, BrokenDumpsNameTheLineAndTheProblem) {
  EXPECT_THAT(error_of("<graphs/>\n"), HasSubstr("topo.xml:1: no <system> element"));
  EXPECT_THAT(error_of(system(cpu(pci(gpu(0) + nic(0)) + "<pci>\n"))),
              HasSubstr("topo.xml:8: "));  // the unclosed <pci>, where the parser saw it
  EXPECT_THAT(error_of(system(cpu(gpu(0) + gpu(0) + nic(0)))),
              HasSubstr("topo.xml:4: GPU 0 appears twice"));
  EXPECT_THAT(error_of(system(cpu(gpu(0) + gpu(2) + nic(0)))),
              HasSubstr("topo.xml:4: <gpu> dev 2 without GPU 1"));
  EXPECT_THAT(error_of(system(cpu(gpu(0) + nic(1)))), HasSubstr("<net> dev 1 without NIC 0"));
  EXPECT_THAT(error_of(system(cpu(gpu(0)))), HasSubstr("topo.xml:1: no <net> (a NIC)"));
  EXPECT_THAT(error_of(system(cpu(nic(0)))), HasSubstr("no <gpu>"));
  EXPECT_THAT(error_of(system(cpu("<pci><gpu dev=\"x\"/></pci>\n" + nic(0)))),
              HasSubstr("topo.xml:3: dev=\"x\" is not a device number"));
  std::string deep;
  for (int i = 0; i < 70; ++i) deep += "<pci>";
  for (int i = 0; i < 70; ++i) deep += "</pci>";
  EXPECT_THAT(error_of(system(deep)), HasSubstr("nested more than 64 elements deep"));
  EXPECT_THAT(error_of(system(cpu(gpu(0) + nic(0)))), "");
}

TEST(NcclTopology, AMissingFileIsNamed) {
  try {
    read_nccl_topology("/nonexistent/topo.xml");
    FAIL() << "read a missing file";
  } catch (const NcclDumpError& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/topo.xml"));
  }
}

std::string rail_config(uint32_t ranks_per_host, const std::string& extra_hosts,
                        const std::string& rest = "") {
  return "workload:\n  jobs:\n    - trace: traces/allreduce_8r/allreduce\n"
         "ports:\n  - name: p\n    count: 8\n"
         "mapping:\n  jobs:\n    - placement: rail\n      hosts:\n        ranks_per_host: " +
         std::to_string(ranks_per_host) + "\n        bandwidth: 3600Gbps\n" + extra_hosts + rest;
}

// The bundled trace's eight ranks on one server of the fixture: rank k on GPU k sits on the port
// of NIC nic_of_gpu[k].
TEST(NcclTopology, RailPlacementPutsEachRankOnItsGpusNic) {
  const RunPlan loaded =
      testing::load_inline(rail_config(8, "        topology: " + fixture() + "\n"));
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  const std::vector<size_t> expected{3, 2, 1, 0, 4, 5, 7, 6};
  for (int32_t r = 0; r < 8; ++r) {
    EXPECT_EQ(loaded.placements[0]->port(r), expected[static_cast<size_t>(r)]) << "rank " << r;
  }
}

// Several GPUs on one NIC: two hosts of four ranks over servers of two NICs, ranks sharing ports.
TEST(NcclTopology, GpusSharingANicShareItsPort) {
  const std::string path =
      (etwire::testing::make_scratch_dir("nccl-topology") / "shared.xml").string();
  std::ofstream(path) << system(cpu(pci(gpu(0) + gpu(1) + nic(0)) + pci(gpu(2) + gpu(3) + nic(1))));
  const std::string two_nics =
      "fabric:\n  topology: leaf-spine\n  leaf_spine: {ports_per_leaf: 2, spines: 1}\n"
      "  rails: {nics_per_host: 2}\n";
  const RunPlan loaded =
      testing::load_inline(rail_config(4, "        topology: " + path + "\n", two_nics));
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  const std::vector<size_t> expected{0, 0, 1, 1, 2, 2, 3, 3};
  for (int32_t r = 0; r < 8; ++r) {
    EXPECT_EQ(loaded.placements[0]->port(r), expected[static_cast<size_t>(r)]) << "rank " << r;
  }
}

TEST(NcclTopology, ATopologyThatDoesNotFitIsRefusedAtItsKey) {
  const std::string topology = "        topology: " + fixture() + "\n";
  const RunPlan few = testing::load_inline(rail_config(4, topology));
  const Diagnostic* gpus = testing::only_error(few);
  ASSERT_NE(gpus, nullptr);
  EXPECT_EQ(gpus->key_path, "mapping.jobs[0].hosts.topology");
  EXPECT_THAT(gpus->message, HasSubstr("8 GPUs per server, but ranks_per_host is 4"));

  std::string block = rail_config(8, topology);
  block.replace(block.find("placement: rail"), 15, "placement: block");
  const RunPlan blocked = testing::load_inline(block);
  const Diagnostic* placement = testing::only_error(blocked);
  ASSERT_NE(placement, nullptr);
  EXPECT_THAT(placement->message, HasSubstr("which placement: rail does"));

  const std::string four_nics =
      "fabric:\n  topology: leaf-spine\n  leaf_spine: {ports_per_leaf: 2, spines: 1}\n"
      "  rails: {nics_per_host: 4}\n";
  const RunPlan four = testing::load_inline(rail_config(8, topology, four_nics));
  const Diagnostic* nics = testing::only_error(four);
  ASSERT_NE(nics, nullptr);
  EXPECT_EQ(nics->key_path, "mapping.jobs[0].hosts.topology");
  EXPECT_THAT(nics->message, HasSubstr("8 NICs per server, but fabric.rails.nics_per_host is 4"));

  const std::string graph =
      (etwire::testing::source_dir() / "tests/cli/data/nccl_graph_8gpu_4ch.xml").string();
  const RunPlan with_graph =
      testing::load_inline(rail_config(8, topology, "collectives:\n  graph: " + graph + "\n"));
  const Diagnostic* both = testing::only_error(with_graph);
  ASSERT_NE(both, nullptr);
  EXPECT_EQ(both->key_path, "collectives.graph");
  EXPECT_THAT(both->message, HasSubstr("does not put GPU k on NIC k"));

  const RunPlan absent =
      testing::load_inline(rail_config(8, "        topology: no-such-topo.xml\n"));
  const Diagnostic* missing = testing::only_error(absent);
  ASSERT_NE(missing, nullptr);
  EXPECT_EQ(missing->key_path, "mapping.jobs[0].hosts.topology");
  EXPECT_EQ(missing->where.line, 13);
}

}  // namespace
}  // namespace etwire::control
