// collectives.graph: the ring channels of an NCCL graph dump, and the errors a broken one gets
// (file, line, what is wrong).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "control/load/nccl_graph.h"
#include "tests/control/test_configs.h"
#include "tests/testing/test_paths.h"

namespace etwire::control {
namespace {

using ::testing::HasSubstr;

std::string fixture() {
  return (etwire::testing::source_dir() / "tests/cli/data/nccl_graph_8gpu_4ch.xml").string();
}

TEST(NcclGraph, ReadsTheRingGraphsChannels) {
  const config::RingGraph graph = read_nccl_ring_graph(fixture());
  ASSERT_EQ(graph.channels.size(), 4u);
  for (uint32_t c = 0; c < 4; ++c) {
    const config::RingGraphChannel& channel = graph.channels[c];
    ASSERT_EQ(channel.gpus.size(), 8u);
    for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(channel.gpus[i], (c + 8 - i) % 8);
    EXPECT_EQ(channel.net_in, c);
    EXPECT_EQ(channel.net_out, c);
  }
}

// Writes `xml` to a scratch file and returns what reading it throws ("" when nothing).
std::string error_of(const std::string& xml) {
  const auto path = (etwire::testing::make_scratch_dir("nccl-graph") / "graph.xml").string();
  std::ofstream(path) << xml;
  try {
    read_nccl_ring_graph(path);
  } catch (const NcclDumpError& e) {
    return e.what();
  }
  return "";
}

TEST(NcclGraph, BrokenDumpsNameTheLineAndTheProblem) {
  const std::string head = "<graphs version=\"1\">\n<graph id=\"0\" pattern=\"4\">\n<channel>\n";
  const std::string tail = "</channel>\n</graph>\n</graphs>\n";
  EXPECT_THAT(error_of(head + "<gpu dev=\"0\"/>\n<gpu dev=\"1\">\n" + tail),
              HasSubstr("graph.xml:6: Start-end tags mismatch"));  // where the parser saw it
  EXPECT_THAT(error_of("<topology/>\n"), HasSubstr("graph.xml:1: no <graphs> element"));
  EXPECT_THAT(error_of("<graphs>\n<graph id=\"1\" pattern=\"1\"/>\n</graphs>\n"),
              HasSubstr("graph.xml:1: no ring graph"));
  EXPECT_THAT(error_of(head + "<gpu dev=\"0\"/>\n<gpu/>\n" + tail),
              HasSubstr("graph.xml:5: <gpu> without a dev attribute"));
  EXPECT_THAT(error_of(head + "<gpu dev=\"0\"/>\n<gpu dev=\"seven\"/>\n" + tail),
              HasSubstr("graph.xml:5: dev=\"seven\" is not a device number"));
  EXPECT_THAT(error_of(head + "<gpu dev=\"0\"/>\n<gpu dev=\"0\"/>\n" + tail),
              HasSubstr("graph.xml:5: GPU 0 appears twice in one channel"));
  EXPECT_THAT(error_of(head + "<gpu dev=\"0\"/>\n<gpu dev=\"2\"/>\n" + tail),
              HasSubstr("graph.xml:3: the channel lists 2 GPUs but not GPU 1"));
  EXPECT_THAT(error_of(head + "<nvswitch/>\n" + tail),
              HasSubstr("graph.xml:4: <nvswitch> in a <channel>"));
  EXPECT_THAT(error_of("<graphs>\n<graph id=\"0\"/>\n</graphs>\n"),
              HasSubstr("graph.xml:2: the ring graph has no <channel>"));
  // NCCL's multi-node NVLink ids: a system id above bit 56, in hexadecimal.
  EXPECT_EQ(error_of(head + "<gpu dev=\"0x100000000000001\"/>\n<gpu dev=\"0\"/>\n" + tail), "");
}

TEST(NcclGraph, TheConfigurationReadsItAndReportsItsErrorsAtTheKey) {
  const std::string yaml = R"(workload:
  jobs:
    - trace: traces/allreduce_8r/allreduce
ports:
  - name: p
    count: 8
collectives:
  graph: )";
  const RunPlan loaded = testing::load_inline(yaml + fixture() + "\n");
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  ASSERT_TRUE(loaded.config.collectives.ring_graph);
  EXPECT_EQ(loaded.config.collectives.ring_channels(), 4u);
  const RunPlan missing = testing::load_inline(yaml + "no/such/graph.xml\n");
  const Diagnostic* error = testing::only_error(missing);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->key_path, "collectives.graph");
  EXPECT_EQ(error->where.line, 8);
  EXPECT_THAT(error->message, HasSubstr("graph.xml"));
  // channels: 0 asks for one ring in group order, which the graph contradicts.
  const RunPlan group_order = testing::load_inline(yaml + fixture() + "\n  channels: 0\n");
  const Diagnostic* contradiction = testing::only_error(group_order);
  ASSERT_NE(contradiction, nullptr) << group_order.diagnostics.to_text();
  EXPECT_EQ(contradiction->key_path, "collectives.channels");
  EXPECT_THAT(contradiction->message, HasSubstr("lays one ring in group order"));
}

// A dump of more channels than a collective runs is refused at the key, unless `channels` says
// how many of them to run.
TEST(NcclGraph, MoreChannelsThanACollectiveRunsNeedAChannelCount) {
  std::string xml = "<graphs version=\"1\">\n<graph id=\"0\" pattern=\"4\">\n";
  for (int c = 0; c < 65; ++c) {
    xml += "<channel><net dev=\"0\"/><gpu dev=\"0\"/><net dev=\"0\"/></channel>\n";
  }
  xml += "</graph>\n</graphs>\n";
  const auto path = (etwire::testing::make_scratch_dir("nccl-graph-65") / "graph.xml").string();
  std::ofstream(path) << xml;
  const std::string yaml = std::string(testing::kMinimalConfig) + "collectives:\n  graph: " + path;
  const RunPlan refused = testing::load_inline(yaml + "\n");
  const Diagnostic* error = testing::only_error(refused);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->key_path, "collectives.graph");
  EXPECT_THAT(error->message, HasSubstr("65 ring channels, more than the 64"));
  const RunPlan counted = testing::load_inline(yaml + "\n  channels: 8\n");
  EXPECT_TRUE(counted.ok()) << counted.diagnostics.to_text();
}

}  // namespace
}  // namespace etwire::control
