// The binary reader on synthetic traces written with libprotobuf: the quirks of the format notes
// that no upstream file shows, the well-known attribute policies, gzip and zero-length records.
#include <gtest/gtest.h>

#include "tests/testing/test_paths.h"
#include "tests/trace/trace_test_support.h"
#include "trace/node_semantics.h"
#include "trace/node_source.h"

namespace etwire::trace {
namespace {

using ChakraProtoMsg::AttributeProto;
using ChakraProtoMsg::Node;
using testing::attr_bool;
using testing::attr_int32;
using testing::attr_int64;
using testing::attr_string;
using testing::attr_uint64;
using testing::make_node;

class EtReaderSynthetic : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = etwire::testing::make_scratch_dir("synthetic"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::vector<Node>& nodes, const std::string& name = "t.et") {
    auto path = dir_ / name;
    testing::write_file(path, testing::trace_bytes(ChakraProtoMsg::GlobalMetadata(), nodes));
    return path.string();
  }

  TraceNode one(const Node& node) {
    auto nodes = testing::read_all(write({node}));
    EXPECT_EQ(nodes.size(), 1u);
    if (!nodes.empty()) testing::expect_node_matches(node, nodes[0], "node");
    return nodes.empty() ? TraceNode{} : nodes[0];
  }

  std::filesystem::path dir_;
};

TEST_F(EtReaderSynthetic, Uint64CommSizeFromOldGenerators) {
  TraceNode node = one(make_node(1, ChakraProtoMsg::COMM_COLL_NODE,
                                 {attr_int64("comm_type", 2), attr_uint64("comm_size", 4096)}));
  EXPECT_EQ(node.comm.coll_type, CollectiveType::kAllGather);
  EXPECT_EQ(node.comm.size, 4096u);
  EXPECT_EQ(node.attrs[1].kind, AttrKind::kUint64);
}

TEST_F(EtReaderSynthetic, EveryIntegerKindIsAcceptedForIntegerAttributes) {
  using Setter = void (*)(AttributeProto*);
  const Setter setters[] = {
      [](AttributeProto* a) { a->set_int32_val(64); },
      [](AttributeProto* a) { a->set_int64_val(64); },
      [](AttributeProto* a) { a->set_uint32_val(64); },
      [](AttributeProto* a) { a->set_uint64_val(64); },
      [](AttributeProto* a) { a->set_sint32_val(64); },
      [](AttributeProto* a) { a->set_sint64_val(64); },
      [](AttributeProto* a) { a->set_fixed32_val(64); },
      [](AttributeProto* a) { a->set_fixed64_val(64); },
      [](AttributeProto* a) { a->set_sfixed32_val(64); },
      [](AttributeProto* a) { a->set_sfixed64_val(64); },
  };
  std::vector<Node> nodes;
  for (Setter set : setters) {
    Node node = make_node(nodes.size() + 1, ChakraProtoMsg::COMM_COLL_NODE);
    AttributeProto* size = node.add_attr();
    size->set_name("comm_size");
    set(size);
    nodes.push_back(node);
  }
  auto got = testing::read_all(write(nodes));
  ASSERT_EQ(got.size(), nodes.size());
  for (size_t i = 0; i < got.size(); ++i) {
    testing::expect_node_matches(nodes[i], got[i], std::to_string(i));
    EXPECT_EQ(got[i].comm.size, 64u) << attr_kind_name(got[i].attrs[0].kind);
  }
}

TEST_F(EtReaderSynthetic, IsCpuOpAsBoolOrAnyInteger) {
  EXPECT_TRUE(
      one(make_node(1, ChakraProtoMsg::COMP_NODE, {attr_bool("is_cpu_op", true)})).is_cpu_op);
  EXPECT_TRUE(one(make_node(1, ChakraProtoMsg::COMP_NODE, {attr_int32("is_cpu_op", 1)})).is_cpu_op);
  EXPECT_FALSE(
      one(make_node(1, ChakraProtoMsg::COMP_NODE, {attr_int32("is_cpu_op", 0)})).is_cpu_op);
  EXPECT_TRUE(
      one(make_node(1, ChakraProtoMsg::COMP_NODE, {attr_uint64("is_cpu_op", 7)})).is_cpu_op);
  EXPECT_FALSE(one(make_node(1, ChakraProtoMsg::COMP_NODE)).is_cpu_op);
}

TEST_F(EtReaderSynthetic, DuplicateAttributeNamesFirstWins) {
  TraceNode node = one(make_node(
      1, ChakraProtoMsg::COMM_COLL_NODE,
      {attr_int64("comm_type", 7), attr_int64("comm_size", 100), attr_string("pg_name", "3"),
       attr_int64("comm_type", 0), attr_int64("comm_size", 200), attr_string("pg_name", "4"),
       attr_bool("is_cpu_op", false), attr_bool("is_cpu_op", true)}));
  EXPECT_EQ(node.comm.coll_type, CollectiveType::kReduceScatter);
  EXPECT_EQ(node.comm.size, 100u);
  EXPECT_EQ(node.comm.pg_name, "3");
  EXPECT_FALSE(node.is_cpu_op);
  // Both copies stay in attrs; find() returns the first.
  EXPECT_EQ(node.attrs.size(), 8u);
  EXPECT_EQ(node.attrs.find("comm_size")->bits, 100u);
}

TEST_F(EtReaderSynthetic, DuplicateNameWithBadSecondValueIsIgnored) {
  // Only the first occurrence is interpreted, so a wrong kind after it does not matter.
  TraceNode node = one(make_node(1, ChakraProtoMsg::COMM_COLL_NODE,
                                 {attr_int64("comm_type", 0), attr_string("comm_type", "x")}));
  EXPECT_EQ(node.comm.coll_type, CollectiveType::kAllReduce);
}

TEST_F(EtReaderSynthetic, TensorSizeStandsInForCommSizeOnPointToPointOnly) {
  TraceNode send = one(make_node(1, ChakraProtoMsg::COMM_SEND_NODE,
                                 {attr_uint64("tensor_size", 512), attr_int32("comm_dst", 3)}));
  EXPECT_EQ(send.comm.size, 512u);
  EXPECT_EQ(send.tensor_size, 512u);
  EXPECT_TRUE(send.carries_traffic());

  TraceNode recv = one(make_node(2, ChakraProtoMsg::COMM_RECV_NODE,
                                 {attr_uint64("tensor_size", 512), attr_int64("comm_size", 8)}));
  EXPECT_EQ(recv.comm.size, 8u);  // comm_size present: it wins
  EXPECT_EQ(recv.tensor_size, 512u);

  TraceNode coll = one(make_node(3, ChakraProtoMsg::COMM_COLL_NODE,
                                 {attr_int64("comm_type", 0), attr_uint64("tensor_size", 512)}));
  EXPECT_FALSE(coll.comm.size.has_value());
  EXPECT_FALSE(coll.carries_traffic());

  TraceNode bare = one(make_node(4, ChakraProtoMsg::COMM_SEND_NODE));
  EXPECT_FALSE(bare.comm.size.has_value());
  EXPECT_FALSE(bare.carries_traffic());
}

TEST_F(EtReaderSynthetic, CommTypeOnlyOnCollectives) {
  // An out-of-range comm_type on a SEND is not even looked at.
  TraceNode send = one(make_node(1, ChakraProtoMsg::COMM_SEND_NODE,
                                 {attr_int64("comm_type", 42), attr_int64("comm_size", 1)}));
  EXPECT_FALSE(send.comm.coll_type.has_value());
  TraceNode comp = one(make_node(2, ChakraProtoMsg::COMP_NODE, {attr_int64("comm_type", 3)}));
  EXPECT_FALSE(comp.comm.coll_type.has_value());
  // A barrier carries traffic without a size.
  TraceNode barrier =
      one(make_node(3, ChakraProtoMsg::COMM_COLL_NODE, {attr_int64("comm_type", 9)}));
  EXPECT_EQ(barrier.comm.coll_type, CollectiveType::kBarrier);
  EXPECT_TRUE(barrier.carries_traffic());
}

TEST_F(EtReaderSynthetic, LegacyCommGroupBecomesPgName) {
  TraceNode node =
      one(make_node(1, ChakraProtoMsg::COMM_COLL_NODE, {attr_int32("comm_group", 12)}));
  EXPECT_EQ(node.comm.pg_name, "12");
  node = one(make_node(1, ChakraProtoMsg::COMM_COLL_NODE,
                       {attr_int32("comm_group", 12), attr_string("pg_name", "2")}));
  EXPECT_EQ(node.comm.pg_name, "2");
  node = one(make_node(1, ChakraProtoMsg::COMM_COLL_NODE, {attr_int32("comm_group", -4)}));
  EXPECT_EQ(node.comm.pg_name, "-4");
}

TEST_F(EtReaderSynthetic, PeersPriorityNumOpsAndLimits) {
  TraceNode node = one(
      make_node(1, ChakraProtoMsg::COMM_COLL_NODE,
                {attr_int64("comm_type", 6), attr_int64("comm_size", int64_t{1} << 40),
                 attr_int32("comm_src", 2), attr_int32("comm_dst", 5), attr_int32("comm_tag", 77),
                 attr_int32("comm_priority", -1), attr_int64("num_ops", -9)}));
  EXPECT_EQ(node.comm.size, kMaxCommBytes);  // exactly 1 TiB is still accepted
  EXPECT_EQ(node.comm.src, 2);
  EXPECT_EQ(node.comm.dst, 5);
  EXPECT_EQ(node.comm.tag, 77);
  EXPECT_EQ(node.comm.priority, -1);
  EXPECT_EQ(node.num_ops, -9);
}

TEST_F(EtReaderSynthetic, ZeroLengthRecords) {
  // A zero-length metadata record, then an empty node between two real ones.
  auto path = dir_ / "zero.et";
  testing::write_file(
      path, std::string(1, '\0') + testing::frame(make_node(5, ChakraProtoMsg::COMP_NODE)) +
                std::string(1, '\0') + testing::frame(make_node(6, ChakraProtoMsg::COMP_NODE)));
  auto source = open_node_source(path.string());
  EXPECT_TRUE(source->metadata().version.empty());
  EXPECT_TRUE(source->metadata().attrs.empty());
  TraceNode node;
  ASSERT_TRUE(source->next(node));
  EXPECT_EQ(node.id, 5u);
  ASSERT_TRUE(source->next(node));
  EXPECT_EQ(node.id, 0u);
  EXPECT_EQ(node.type, NodeType::kInvalid);
  EXPECT_EQ(node.record_index, 2u);
  EXPECT_TRUE(node.name.empty());
  EXPECT_TRUE(node.attrs.empty());
  ASSERT_TRUE(source->next(node));
  EXPECT_EQ(node.id, 6u);
  EXPECT_EQ(node.record_index, 3u);
  EXPECT_FALSE(source->next(node));

  // Metadata only, zero length: a legal trace with no nodes.
  testing::write_file(path, std::string(1, '\0'));
  EXPECT_TRUE(testing::read_all(path.string()).empty());
}

// A trace big enough to cross the reader's buffer many times, with one record larger than the
// buffer itself.
std::vector<Node> large_trace() {
  std::vector<Node> nodes;
  for (uint64_t id = 1; id <= 40000; ++id) {
    if (id % 2 == 1) {
      nodes.push_back(make_node(id, ChakraProtoMsg::COMM_COLL_NODE,
                                {attr_bool("is_cpu_op", false), attr_int64("comm_type", 0),
                                 attr_int64("comm_size", static_cast<int64_t>(id) * 1024),
                                 attr_string("pg_name", std::to_string(id % 7))},
                                {id - 1}));
    } else {
      Node node = make_node(id, ChakraProtoMsg::COMP_NODE, {}, {id - 1});
      node.set_duration_micros(id);
      if (id == 20000) node.mutable_inputs()->set_values(std::string(3 << 20, 'x'));
      nodes.push_back(node);
    }
  }
  return nodes;
}

TEST_F(EtReaderSynthetic, LargePlainAndGzipFilesReadIdentically) {
  auto nodes = large_trace();
  ChakraProtoMsg::GlobalMetadata metadata;
  metadata.set_version("1.0.0");
  *metadata.add_attr() = attr_string("input_file", std::string(100000, 'm'));
  std::string bytes = testing::trace_bytes(metadata, nodes);
  testing::write_file(dir_ / "big.et", bytes);
  testing::write_gzip(dir_ / "big.et.gz", bytes);
  // Two gzip members back to back are one stream, as gzip(1) treats them.
  std::string split = testing::gzip_bytes(bytes.substr(0, bytes.size() / 3)) +
                      testing::gzip_bytes(bytes.substr(bytes.size() / 3));
  testing::write_file(dir_ / "multi.et.gz", split);

  for (const char* name : {"big.et", "big.et.gz", "multi.et.gz"}) {
    SCOPED_TRACE(name);
    auto source = open_node_source((dir_ / name).string());
    EXPECT_EQ(source->metadata().version, "1.0.0");
    ASSERT_EQ(source->metadata().attrs.size(), 1u);
    EXPECT_EQ(source->metadata().attrs[0].text.size(), 100000u);
    TraceNode node;
    size_t i = 0;
    while (source->next(node)) {
      ASSERT_LT(i, nodes.size());
      testing::expect_node_matches(nodes[i], node, std::to_string(i));
      if (HasFailure()) return;
      ++i;
    }
    EXPECT_EQ(i, nodes.size());
  }
}

}  // namespace
}  // namespace etwire::trace
