#include "trace/synth/synth.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "chakra_et.pb.h"
#include "tests/testing/test_paths.h"
#include "trace/feeder/feeder.h"
#include "trace/node_source.h"

namespace etwire::synth {
namespace {

using trace::CollectiveType;
using trace::NodeType;
using trace::TraceNode;

std::vector<TraceNode> read_all(const std::string& path) {
  auto source = trace::open_node_source(path);
  std::vector<TraceNode> nodes;
  TraceNode node;
  while (source->next(node)) nodes.push_back(node);
  return nodes;
}

// Decodes with libprotobuf, independently of the project's reader.
std::vector<ChakraProtoMsg::Node> read_with_protobuf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<ChakraProtoMsg::Node> nodes;
  size_t pos = 0;
  bool first = true;
  while (pos < data.size()) {
    uint64_t len = 0;
    for (int shift = 0;; shift += 7) {
      auto b = static_cast<uint8_t>(data.at(pos++));
      len |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (b < 0x80) break;
    }
    if (!first) {
      ChakraProtoMsg::Node node;
      EXPECT_TRUE(node.ParseFromArray(data.data() + pos, static_cast<int>(len)));
      nodes.push_back(node);
    }
    first = false;
    pos += len;
  }
  EXPECT_EQ(pos, data.size());
  return nodes;
}

TEST(SynthMicrobench, ChainOfCollectivesWithCompute) {
  auto dir = etwire::testing::make_scratch_dir("synth");
  MicrobenchSpec spec;
  spec.collective = CollectiveType::kAllGather;
  spec.bytes = 65536;
  spec.ranks = 4;
  spec.iterations = 3;
  spec.compute_us = 50;
  spec.pg_name = "1";
  auto paths = write_microbench(spec, (dir / "ag").string());
  ASSERT_EQ(paths.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(paths[r], (dir / ("ag." + std::to_string(r) + ".et")).string());
    auto nodes = read_all(paths[r]);
    ASSERT_EQ(nodes.size(), 6u);
    uint64_t previous = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const auto& n = nodes[i];
      EXPECT_EQ(n.type, i % 2 == 0 ? NodeType::kComp : NodeType::kCommColl);
      if (i == 0) {
        EXPECT_TRUE(n.data_deps.empty());
      } else {
        EXPECT_EQ(n.data_deps, std::vector<uint64_t>{previous});
      }
      previous = n.id;
      if (n.type == NodeType::kComp) {
        EXPECT_EQ(n.duration_us, 50u);
      } else {
        EXPECT_EQ(n.comm.coll_type, CollectiveType::kAllGather);
        EXPECT_EQ(n.comm.size, 65536u);
        EXPECT_EQ(n.comm.pg_name, "1");
        EXPECT_FALSE(n.is_cpu_op);
        EXPECT_TRUE(n.carries_traffic());
      }
    }
    // The same file through libprotobuf: attribute kinds as upstream producers write them.
    auto pb = read_with_protobuf(paths[r]);
    ASSERT_EQ(pb.size(), 6u);
    const auto& coll = pb[1];
    EXPECT_EQ(coll.type(), ChakraProtoMsg::COMM_COLL_NODE);
    std::map<std::string, ChakraProtoMsg::AttributeProto> attrs;
    for (const auto& a : coll.attr()) attrs[a.name()] = a;
    EXPECT_TRUE(attrs.at("is_cpu_op").has_bool_val());
    EXPECT_EQ(attrs.at("comm_type").int64_val(), ChakraProtoMsg::ALL_GATHER);
    EXPECT_EQ(attrs.at("comm_size").int64_val(), 65536);
    EXPECT_EQ(attrs.at("pg_name").string_val(), "1");
  }
}

TEST(SynthMicrobench, SendRecvRingPairsByPeerAndTag) {
  auto dir = etwire::testing::make_scratch_dir("synth");
  MicrobenchSpec spec;
  spec.collective.reset();
  spec.ranks = 3;
  spec.iterations = 2;
  spec.bytes = 1000;
  auto paths = write_microbench(spec, (dir / "p2p").string());
  // (src, dst, tag) of every send must appear as a receive.
  std::multiset<std::tuple<int, int, int>> sends, recvs;
  for (int r = 0; r < 3; ++r) {
    for (const auto& n : read_all(paths[r])) {
      ASSERT_TRUE(n.comm.src && n.comm.dst && n.comm.tag);
      EXPECT_EQ(n.comm.size, 1000u);
      if (n.type == NodeType::kCommSend) {
        EXPECT_EQ(*n.comm.src, r);
        EXPECT_EQ(*n.comm.dst, (r + 1) % 3);
        sends.emplace(*n.comm.src, *n.comm.dst, *n.comm.tag);
      } else {
        ASSERT_EQ(n.type, NodeType::kCommRecv);
        EXPECT_EQ(*n.comm.dst, r);
        recvs.emplace(*n.comm.src, *n.comm.dst, *n.comm.tag);
      }
    }
  }
  EXPECT_EQ(sends.size(), 6u);
  EXPECT_EQ(sends, recvs);
}

TEST(SynthMicrobench, GzipAndJsonHoldTheSameNodes) {
  auto dir = etwire::testing::make_scratch_dir("synth");
  MicrobenchSpec spec;
  spec.ranks = 2;
  spec.iterations = 4;
  spec.compute_us = 7;
  auto plain = write_microbench(spec, (dir / "a").string(), WriteFormat::kBinary);
  auto gz = write_microbench(spec, (dir / "b").string(), WriteFormat::kBinaryGzip);
  auto json = write_microbench(spec, (dir / "c").string(), WriteFormat::kFeederJson);
  EXPECT_THAT(gz[0], ::testing::EndsWith(".0.et.gz"));
  EXPECT_THAT(json[1], ::testing::EndsWith(".1.json"));
  for (int r = 0; r < 2; ++r) {
    auto a = read_all(plain[r]);
    auto b = read_all(gz[r]);
    auto c = read_all(json[r]);
    ASSERT_EQ(a.size(), 8u);
    ASSERT_EQ(b.size(), a.size());
    ASSERT_EQ(c.size(), a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      for (const auto* other : {&b[i], &c[i]}) {
        EXPECT_EQ(other->id, a[i].id);
        EXPECT_EQ(other->type, a[i].type);
        EXPECT_EQ(other->data_deps, a[i].data_deps);
        EXPECT_EQ(other->duration_us, a[i].duration_us);
        EXPECT_EQ(other->comm.coll_type, a[i].comm.coll_type);
        EXPECT_EQ(other->comm.size, a[i].comm.size);
      }
    }
  }
}

TEST(SynthMicrobench, RejectsNonsenseSpecs) {
  auto dir = etwire::testing::make_scratch_dir("synth");
  MicrobenchSpec spec;
  spec.ranks = 0;
  EXPECT_THROW(write_microbench(spec, (dir / "x").string()), std::invalid_argument);
  spec.ranks = 1;
  spec.collective.reset();
  EXPECT_THROW(write_microbench(spec, (dir / "x").string()), std::invalid_argument);
  spec.collective = CollectiveType::kAllReduce;
  try {
    write_microbench(spec, (dir / "no-such-dir/x").string());
    FAIL() << "expected an error for an unwritable path";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("no-such-dir/x.0.et"));
  }
}

TEST(SynthGraph, ExactNodeCountAndValidDag) {
  auto dir = etwire::testing::make_scratch_dir("synth");
  GraphSpec spec;
  spec.nodes_per_rank = 1003;  // not a whole number of blocks
  spec.ranks = 2;
  auto paths = write_graph(spec, (dir / "g").string());
  for (const auto& path : paths) {
    auto nodes = read_all(path);
    ASSERT_EQ(nodes.size(), 1003u);
    std::set<uint64_t> seen;
    uint64_t sends = 0, colls = 0;
    for (const auto& n : nodes) {
      for (uint64_t d : n.data_deps) EXPECT_TRUE(seen.count(d)) << "node " << n.id;
      EXPECT_TRUE(seen.insert(n.id).second);
      sends += n.type == NodeType::kCommSend;
      colls += n.type == NodeType::kCommColl;
    }
    EXPECT_GT(sends, 0u);
    EXPECT_GT(colls, sends);
  }
}

TEST(SynthGraph, ShuffleWindowCreatesForwardReferencesTheFeederResolves) {
  auto dir = etwire::testing::make_scratch_dir("synth");
  GraphSpec spec;
  spec.nodes_per_rank = 5000;
  spec.shuffle_window = 100;
  spec.seed = 7;
  auto paths = write_graph(spec, (dir / "s").string());
  auto nodes = read_all(paths[0]);
  ASSERT_EQ(nodes.size(), 5000u);
  std::set<uint64_t> seen;
  uint64_t forward = 0;
  for (const auto& n : nodes) {
    for (uint64_t d : n.data_deps) forward += seen.count(d) == 0;
    seen.insert(n.id);
  }
  EXPECT_GT(forward, 100u);

  feeder::FeederOptions options;
  options.window = 64;
  feeder::Feeder feeder(trace::open_node_source(paths[0]), options);
  std::set<uint64_t> done;
  while (auto issued = feeder.next()) {
    for (uint64_t d : issued->node->data_deps) EXPECT_TRUE(done.count(d));
    done.insert(issued->node->id);
    feeder.complete(*issued);
  }
  EXPECT_TRUE(feeder.done());
  EXPECT_EQ(done.size(), 5000u);
}

TEST(SynthGraph, OneRankUsesCollectiveHubsOnly) {
  auto dir = etwire::testing::make_scratch_dir("synth");
  GraphSpec spec;
  spec.nodes_per_rank = 200;
  auto nodes = read_all(write_graph(spec, (dir / "one").string())[0]);
  for (const auto& n : nodes) {
    EXPECT_NE(n.type, NodeType::kCommSend);
    EXPECT_NE(n.type, NodeType::kCommRecv);
  }
}

}  // namespace
}  // namespace etwire::synth
