// The binary reader over the real upstream traces: a differential check against libprotobuf on
// every file, and the quirks the format notes list, each on a file that shows it.
#include <gtest/gtest.h>

#include "tests/testing/test_paths.h"
#include "tests/trace/trace_test_support.h"
#include "trace/node_source.h"
#include "trace/trace_error.h"

namespace etwire::trace {
namespace {

using testing::expect_attr_matches;
using testing::expect_node_matches;
using testing::read_all;

std::string upstream(const std::string& relative) {
  return (etwire::testing::upstream_traces() / relative).string();
}

const TraceNode* find_node(const std::vector<TraceNode>& nodes, uint64_t id) {
  for (const auto& node : nodes) {
    if (node.id == id) return &node;
  }
  return nullptr;
}

TEST(EtReaderUpstream, EveryFileMatchesLibprotobufFieldByField) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  auto files = testing::upstream_et_files();
  // The collection's manifest lists the sets; each holds at least one rank file.
  ASSERT_GE(files.size(), 300u);
  size_t total_nodes = 0;
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    std::string bytes = testing::read_file(file);
    auto records = testing::split_records(bytes);
    ASSERT_TRUE(records.ok);
    ASSERT_FALSE(records.bodies.empty());

    auto source = open_node_source(file.string());
    EXPECT_FALSE(source->metadata().version.empty() && source->metadata().attrs.empty() &&
                 !records.bodies[0].empty());
    ChakraProtoMsg::GlobalMetadata metadata;
    ASSERT_TRUE(metadata.ParseFromString(records.bodies[0]));
    EXPECT_EQ(source->metadata().version, metadata.version());
    ASSERT_EQ(source->metadata().attrs.size(), static_cast<size_t>(metadata.attr_size()));
    for (int i = 0; i < metadata.attr_size(); ++i) {
      expect_attr_matches(metadata.attr(i), source->metadata().attrs[static_cast<size_t>(i)],
                          "metadata");
    }

    // One reused message, as a libprotobuf-based reader would do.
    ChakraProtoMsg::Node expected;
    TraceNode node;
    for (size_t r = 1; r < records.bodies.size(); ++r) {
      ASSERT_TRUE(expected.ParseFromString(records.bodies[r])) << "record " << r;
      ASSERT_TRUE(source->next(node)) << "record " << r;
      EXPECT_EQ(node.record_index, r);
      expect_node_matches(expected, node, "record " + std::to_string(r));
      if (::testing::Test::HasFailure()) return;  // one broken file is enough to read
    }
    EXPECT_FALSE(source->next(node));
    total_nodes += records.bodies.size() - 1;
  }
  RecordProperty("files", static_cast<int>(files.size()));
  RecordProperty("nodes", static_cast<int>(total_nodes));
  EXPECT_GT(total_nodes, 8000u);
}

TEST(EtReaderUpstream, IsCpuOpStoredAsInt32InStg) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  auto nodes = read_all(upstream("astra-sim-artifacts/stg_denseA_4npus/denseA.0.et"));
  ASSERT_FALSE(nodes.empty());
  size_t int32_flags = 0;
  for (const auto& node : nodes) {
    const Attribute* attr = node.attrs.find("is_cpu_op");
    if (attr == nullptr) continue;  // STG writes it on comm nodes only
    EXPECT_EQ(attr->kind, AttrKind::kInt32) << node.id;
    EXPECT_EQ(node.is_cpu_op, attr->bits != 0);
    ++int32_flags;
  }
  EXPECT_GT(int32_flags, 0u);
  // Comm nodes in STG traces are device-side and carry traffic.
  for (const auto& node : nodes) {
    if (node.type == NodeType::kCommColl) {
      EXPECT_FALSE(node.is_cpu_op);
      EXPECT_TRUE(node.carries_traffic()) << node.id;
      EXPECT_TRUE(node.comm.pg_name.has_value());
    }
  }
}

TEST(EtReaderUpstream, CommTypeOnPointToPointIsIgnored) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  auto nodes =
      read_all(upstream("astra-sim/custom_ring_allreduce_8npus_1MB/custom_allreduce.0.et"));
  size_t p2p = 0;
  for (const auto& node : nodes) {
    if (node.type != NodeType::kCommSend && node.type != NodeType::kCommRecv) continue;
    ++p2p;
    const Attribute* attr = node.attrs.find("comm_type");
    ASSERT_NE(attr, nullptr) << node.id;
    // The converter writes the node type number there (5 or 6).
    EXPECT_EQ(attr->as_int64(), static_cast<int64_t>(node.type));
    EXPECT_FALSE(node.comm.coll_type.has_value());
    ASSERT_TRUE(node.comm.size.has_value());
    EXPECT_EQ(*node.comm.size, 1048576u / 8);
    EXPECT_TRUE(node.carries_traffic());
    if (node.type == NodeType::kCommSend) {
      EXPECT_EQ(node.comm.dst, 1);
      EXPECT_FALSE(node.comm.src.has_value());
    } else {
      EXPECT_EQ(node.comm.src, 7);
      EXPECT_FALSE(node.comm.dst.has_value());
    }
  }
  EXPECT_GT(p2p, 0u);
}

TEST(EtReaderUpstream, FloatFormattedPgNameInT2D) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  auto nodes = read_all(upstream("astra-sim-artifacts/T2D-analytical/trace.5.et"));
  std::vector<std::string> pg_names;
  for (const auto& node : nodes) {
    if (node.type != NodeType::kCommColl) continue;
    ASSERT_TRUE(node.comm.pg_name.has_value());
    pg_names.push_back(*node.comm.pg_name);
    EXPECT_EQ(node.comm.coll_type, CollectiveType::kAllReduce);
    EXPECT_EQ(node.comm.size, 1048576u);
  }
  ASSERT_EQ(pg_names.size(), 2u);
  // Rank 5 sits in row 1 ("1.0", float-formatted) and column 1 (plain "5").
  EXPECT_EQ(pg_names[0], "1.0");
  EXPECT_EQ(pg_names[1], "5");
}

TEST(EtReaderUpstream, AttributeWithoutValueInStg) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  size_t without_value = 0;
  for (const char* set : {"denseA", "denseB"}) {
    for (int rank = 0; rank < 4; ++rank) {
      auto nodes = read_all(upstream(std::string("astra-sim-artifacts/stg_") + set + "_4npus/" +
                                     set + "." + std::to_string(rank) + ".et"));
      for (const auto& node : nodes) {
        for (const auto& attr : node.attrs) {
          if (attr.kind != AttrKind::kNone) continue;
          ++without_value;
          EXPECT_EQ(attr.value_to_string(), "(no value)");
        }
      }
    }
  }
  EXPECT_GT(without_value, 0u);
}

TEST(EtReaderUpstream, PyTorchCommNodesWithoutCommAttrsCarryNoTraffic) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  auto nodes = read_all(upstream("chakra/feeder_tests_trace_pytorch_1rank/chakra.0.et"));
  EXPECT_EQ(nodes.size(), 3664u);
  size_t bookkeeping = 0;
  size_t traffic = 0;
  for (const auto& node : nodes) {
    if (node.type != NodeType::kCommColl) continue;
    if (node.attrs.find("comm_type") == nullptr && node.attrs.find("comm_size") == nullptr) {
      ++bookkeeping;
      EXPECT_FALSE(node.carries_traffic()) << node.id;
      EXPECT_FALSE(node.comm.size.has_value());
      EXPECT_FALSE(node.comm.coll_type.has_value());
      EXPECT_TRUE(node.is_cpu_op) << node.id;
    } else {
      ++traffic;
      EXPECT_TRUE(node.carries_traffic()) << node.id;
    }
  }
  EXPECT_GT(bookkeeping, 0u);
  EXPECT_GT(traffic, 0u);
  // The c10d::broadcast_ call seen in the JSON twin of this trace.
  const TraceNode* broadcast = find_node(nodes, 432);
  ASSERT_NE(broadcast, nullptr);
  EXPECT_EQ(broadcast->name, "c10d::broadcast_(0)");
  EXPECT_FALSE(broadcast->carries_traffic());
}

TEST(EtReaderUpstream, FiveHundredMebibyteCollectiveInMultitenant) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  for (const char* job : {"J0", "J1"}) {
    auto nodes = read_all(
        upstream(std::string("astra-sim-artifacts/multitenant-T1D-") + job + "/trace.0.et"));
    size_t colls = 0;
    for (const auto& node : nodes) {
      if (node.type != NodeType::kCommColl) continue;
      ++colls;
      EXPECT_EQ(node.comm.size, 524288000u);
      EXPECT_EQ(node.comm.pg_name, "0");
      EXPECT_TRUE(node.carries_traffic());
    }
    EXPECT_EQ(colls, 1u) << job;
  }
}

TEST(EtReaderUpstream, InvolvedDimAsBoolList) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  auto nodes =
      read_all(upstream("astra-sim-tutorials/micro2024_demo1_allreduce_8npus/allreduce.0.et"));
  ASSERT_FALSE(nodes.empty());
  bool seen = false;
  for (const auto& node : nodes) {
    if (node.type != NodeType::kCommColl) continue;
    EXPECT_EQ(node.comm.involved_dim, (std::vector<bool>{true, true}));
    seen = true;
  }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace etwire::trace
