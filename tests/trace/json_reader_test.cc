// The two JSON readers: chakra's feeder JSON on the upstream samples and on synthetic files, and
// the jsonizer dump generated here with libprotobuf's JSON printer and compared with the binary
// reader's output for the same messages.
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include "tests/testing/test_paths.h"
#include "tests/trace/trace_test_support.h"
#include "trace/feeder_json_reader.h"
#include "trace/json_object_stream.h"
#include "trace/node_source.h"
#include "trace/trace_error.h"

namespace etwire::trace {
namespace {

using ChakraProtoMsg::Node;
using testing::attr_bool;
using testing::attr_int32;
using testing::attr_int64;
using testing::attr_string;
using testing::attr_uint64;
using testing::make_node;
using testing::read_all;

std::string sample(const std::string& name) {
  return (etwire::testing::upstream_traces() / "chakra/json_variant_feeder_test" / name).string();
}

std::string to_json(const google::protobuf::Message& message, bool pretty) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = pretty;
  std::string out;
  auto status = google::protobuf::util::MessageToJsonString(message, &out, options);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return out;
}

// What chakra's jsonizer writes: metadata then every node, objects back to back.
std::string jsonizer_dump(const ChakraProtoMsg::GlobalMetadata& metadata,
                          const std::vector<Node>& nodes, bool pretty) {
  std::string out = to_json(metadata, pretty);
  for (const auto& node : nodes) out += to_json(node, pretty);
  return out;
}

void expect_error(const std::string& path, std::optional<uint64_t> record,
                  std::optional<uint64_t> node_id, const std::string& problem,
                  TraceFormat format = TraceFormat::kAuto) {
  try {
    read_all(path, format);
    ADD_FAILURE() << "no TraceError, expected: " << problem;
  } catch (const TraceError& e) {
    std::string what = e.what();
    EXPECT_EQ(e.where().file, path) << what;
    EXPECT_EQ(e.where().record_index, record) << what;
    EXPECT_EQ(e.where().node_id, node_id) << what;
    EXPECT_EQ(what.rfind(path, 0), 0u) << what;
    EXPECT_NE(what.find(problem), std::string::npos) << what << "\nexpected: " << problem;
  }
}

class JsonReader : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = etwire::testing::make_scratch_dir("json"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& text, const std::string& name = "t.json") {
    auto path = dir_ / name;
    testing::write_file(path, text);
    return path.string();
  }

  std::filesystem::path dir_;
};

TEST_F(JsonReader, SmallFeederSampleByHand) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  auto source = open_node_source(sample("small_chakra.0.json"));
  EXPECT_TRUE(source->metadata().version.empty());
  std::vector<TraceNode> nodes;
  TraceNode node;
  while (source->next(node)) nodes.push_back(node);
  ASSERT_EQ(nodes.size(), 7u);

  EXPECT_EQ(nodes[0].id, 216u);
  EXPECT_EQ(nodes[0].name, "aten::flatten_dense_tensors(0)");
  EXPECT_EQ(nodes[0].type, NodeType::kComp);
  EXPECT_EQ(nodes[0].ctrl_deps, std::vector<uint64_t>{3});
  EXPECT_TRUE(nodes[0].data_deps.empty());
  EXPECT_EQ(nodes[0].duration_us, 318u);
  EXPECT_TRUE(nodes[0].is_cpu_op);
  EXPECT_EQ(nodes[0].record_index, 0u);
  ASSERT_EQ(nodes[0].attrs.size(), 1u);
  EXPECT_EQ(nodes[0].attrs[0].name, "is_cpu_op");
  EXPECT_EQ(nodes[0].attrs[0].kind, AttrKind::kBool);

  EXPECT_EQ(nodes[2].id, 430u);
  EXPECT_EQ(nodes[2].name.rfind("voId at::native::", 0), 0u);  // the sample's damaged name
  EXPECT_EQ(nodes[2].ctrl_deps, std::vector<uint64_t>{429});
  EXPECT_EQ(nodes[2].data_deps, std::vector<uint64_t>{216});
  EXPECT_EQ(nodes[2].duration_us, 4u);
  EXPECT_FALSE(nodes[2].is_cpu_op);

  EXPECT_EQ(nodes[3].id, 432u);
  EXPECT_EQ(nodes[3].name, "c10d::broadcast_(0)");
  EXPECT_EQ(nodes[3].type, NodeType::kCommColl);
  EXPECT_FALSE(nodes[3].carries_traffic());

  EXPECT_EQ(nodes[5].id, 435u);
  EXPECT_EQ(nodes[5].type, NodeType::kCommColl);
  EXPECT_EQ(nodes[5].data_deps, (std::vector<uint64_t>{432, 216, 217}));
  EXPECT_EQ(nodes[5].ctrl_deps, std::vector<uint64_t>{434});
  EXPECT_EQ(nodes[5].duration_us, 28u);
  EXPECT_FALSE(nodes[5].is_cpu_op);
  // No comm_type/comm_size keys in the sample: no traffic, no invented size.
  EXPECT_FALSE(nodes[5].comm.size.has_value());
  EXPECT_FALSE(nodes[5].carries_traffic());

  EXPECT_EQ(nodes[6].id, 541u);
  EXPECT_EQ(nodes[6].duration_us, 153u);
  EXPECT_EQ(nodes[6].record_index, 6u);
}

TEST_F(JsonReader, LargeFeederSampleMatchesItsBinaryTwin) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  auto json_nodes = read_all(sample("chakra.0.json"));
  auto binary_nodes = read_all(
      (etwire::testing::upstream_traces() / "chakra/feeder_tests_trace_pytorch_1rank/chakra.0.et")
          .string());
  ASSERT_EQ(json_nodes.size(), 3664u);
  ASSERT_EQ(json_nodes.size(), binary_nodes.size());
  for (size_t i = 0; i < json_nodes.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(json_nodes[i].id, binary_nodes[i].id);
    EXPECT_EQ(json_nodes[i].type, binary_nodes[i].type);
    EXPECT_EQ(json_nodes[i].data_deps, binary_nodes[i].data_deps);
    EXPECT_EQ(json_nodes[i].duration_us, binary_nodes[i].duration_us);
    EXPECT_EQ(json_nodes[i].is_cpu_op, binary_nodes[i].is_cpu_op);
    if (HasFailure()) return;
  }
}

TEST_F(JsonReader, FeederCommKeysBecomeAttributes) {
  std::string path = write(R"({"workload_graph": [
    {"Id": 1, "Name": "ar", "NodeType": 7, "data_deps": [], "runtime": 3, "is_cpu_op": false,
     "comm_type": 7, "comm_size": 1048576, "comm_priority": 2},
    {"Id": 2, "Name": "send", "NodeType": 5, "data_deps": [1], "is_cpu_op": 0,
     "comm_dst": 3, "comm_tag": 9, "tensor_size": 4096},
    {"Id": 3, "Name": "recv", "NodeType": 6, "data_deps": [1], "comm_src": -1,
     "comm_size": 64, "comm_type": 6, "Unused": "ignored", "runtime": null}
  ], "ngpus": 8})");
  auto nodes = read_all(path);
  ASSERT_EQ(nodes.size(), 3u);
  const TraceNode& ar = nodes[0];
  EXPECT_EQ(ar.comm.coll_type, CollectiveType::kReduceScatter);
  EXPECT_EQ(ar.comm.size, 1048576u);
  EXPECT_EQ(ar.comm.priority, 2);
  ASSERT_EQ(ar.attrs.size(), 4u);
  EXPECT_EQ(ar.attrs.find("comm_size")->kind, AttrKind::kInt64);
  EXPECT_EQ(ar.attrs.find("comm_type")->bits, 7u);
  EXPECT_TRUE(ar.carries_traffic());

  const TraceNode& send = nodes[1];
  EXPECT_EQ(send.comm.size, 4096u);  // tensor_size stands in for comm_size on p2p
  EXPECT_EQ(send.tensor_size, 4096u);
  EXPECT_EQ(send.comm.dst, 3);
  EXPECT_EQ(send.comm.tag, 9);
  EXPECT_FALSE(send.is_cpu_op);
  EXPECT_EQ(send.attrs.find("is_cpu_op")->kind, AttrKind::kInt64);
  EXPECT_EQ(send.attrs.find("tensor_size")->kind, AttrKind::kUint64);

  const TraceNode& recv = nodes[2];
  EXPECT_EQ(recv.comm.src, -1);
  EXPECT_EQ(recv.comm.size, 64u);
  EXPECT_FALSE(recv.comm.coll_type.has_value());  // comm_type ignored on p2p, as in binary
  EXPECT_EQ(recv.duration_us, 0u);
  EXPECT_EQ(recv.record_index, 2u);
}

TEST_F(JsonReader, FeederErrorsNameElementAndNode) {
  expect_error(write("{\"workload_graph\": [", "a.json"), {}, {}, "invalid JSON");
  expect_error(write("{\"nodes\": []}", "b.json"), {}, {},
               "not a feeder JSON trace: no top-level \"workload_graph\" array",
               TraceFormat::kFeederJson);
  expect_error(write(R"({"workload_graph": [{"Id": 1, "NodeType": 4}, 5]})", "c.json"), 1, {},
               "workload_graph element is not an object");
  expect_error(write(R"({"workload_graph": [{"Id": 4, "Name": "x"}]})", "d.json"), 0, 4,
               "missing \"NodeType\"");
  expect_error(write(R"({"workload_graph": [{"Name": "x", "NodeType": 4}]})", "e.json"), 0, {},
               "missing \"Id\"");
  expect_error(
      write(R"({"workload_graph": [{"Id": 4, "NodeType": 4, "data_deps": [-1]}]})", "f.json"), 0, 4,
      "\"data_deps\" holds -1, not a node id");
  expect_error(write(R"({"workload_graph": [{"Id": 1, "NodeType": 4},
                                            {"Id": 8, "NodeType": 9}]})",
                     "g.json"),
               1, 8, "node type 9 is not a known NodeType (0..7)");
  expect_error(
      write(R"({"workload_graph": [{"Id": 8, "NodeType": 7, "comm_size": -2}]})", "h.json"), 0, 8,
      "comm_size -2 is negative");
  expect_error(
      write(R"({"workload_graph": [{"Id": 8, "NodeType": 7, "comm_type": 12}]})", "i.json"), 0, 8,
      "comm_type 12 is not a known CollectiveCommType");
  expect_error(
      write(R"({"workload_graph": [{"Id": 8, "NodeType": 7, "comm_size": "1"}]})", "j.json"), 0, 8,
      "\"comm_size\" is not an integer: \"1\"");
  expect_error(write(R"({"workload_graph": [{"Id": 8, "NodeType": 4, "runtime": 1.5}]})", "k.json"),
               0, 8, "\"runtime\" is not a non-negative integer: 1.5");
}

// JSON keeps the last of two equal keys: a duplicate would silently drop a graph or a field.
TEST_F(JsonReader, FeederDuplicateKeysAreRefused) {
  expect_error(
      write(R"({"workload_graph": [{"Id": 1, "NodeType": 4}], "workload_graph": []})", "dup.json"),
      {}, {}, "duplicate top-level key \"workload_graph\"");
  expect_error(write(R"({"workload_graph": [{"Id": 1, "NodeType": 4},
                                            {"Id": 2, "NodeType": 4, "runtime": 1, "runtime": 9}]})",
                     "dup-node.json"),
               1, {}, "duplicate key \"runtime\"");
  // The same key in different objects is no duplicate.
  const std::string fine = write(R"({"workload_graph": [{"Id": 1, "NodeType": 4, "runtime": 1},
                                                       {"Id": 2, "NodeType": 4, "runtime": 1}]})",
                                 "fine.json");
  EXPECT_NO_THROW(read_all(fine, TraceFormat::kAuto));
}

// A JSON value that is not an object is said to be one, not read as a binary trace.
TEST_F(JsonReader, OtherJsonValuesAreSaidToBeNoTrace) {
  expect_error(write("[]", "empty-array.json"), {}, {}, "the top level is an array");
  expect_error(write(" [ {\"Id\": 1} ]\n", "array.json"), {}, {}, "the top level is an array");
  expect_error(write("null\n", "null.json"), {}, {}, "the top level is null");
  expect_error(write("true", "true.json"), {}, {}, "the top level is a boolean");
}

// Nodes that use every JSON mapping rule: 64-bit integers as strings, enums as names, bytes as
// base64, floats, lists, absent defaults (id 0), IOInfo presence.
std::vector<Node> jsonizer_nodes() {
  std::vector<Node> nodes;
  Node zero = make_node(0, ChakraProtoMsg::INVALID_NODE);
  zero.clear_name();
  nodes.push_back(zero);
  nodes.push_back(
      make_node(uint64_t{1} << 60, ChakraProtoMsg::COMM_COLL_NODE,
                {attr_bool("is_cpu_op", false), attr_int64("comm_type", 0),
                 attr_int64("comm_size", int64_t{1} << 39), attr_string("pg_name", "0.0")},
                {7, uint64_t{1} << 63}));
  Node send = make_node(5, ChakraProtoMsg::COMM_SEND_NODE,
                        {attr_int32("comm_dst", -1), attr_uint64("tensor_size", 77)});
  send.add_ctrl_deps(3);
  send.set_start_time_micros(11);
  send.set_duration_micros(12);
  send.mutable_inputs()->set_values("[[1, 2]]");
  send.mutable_inputs()->set_types("['Tensor(float)']");
  send.mutable_outputs();
  auto* bytes = send.add_attr();
  bytes->set_name("blob");
  bytes->set_bytes_val(std::string("\0\x01\xfe", 3));
  auto* reals = send.add_attr();
  reals->set_name("reals");
  reals->mutable_double_list()->add_values(0.1);
  reals->mutable_double_list()->add_values(-1e300);
  auto* floats = send.add_attr();
  floats->set_name("f");
  floats->set_float_val(0.3f);
  auto* sints = send.add_attr();
  sints->set_name("s");
  sints->mutable_sint64_list()->add_values(INT64_MIN);
  auto* dims = send.add_attr();
  dims->set_name("involved_dim");
  dims->mutable_bool_list()->add_values(true);
  auto* none = send.add_attr();
  none->set_name("outputs");
  nodes.push_back(send);
  return nodes;
}

TEST_F(JsonReader, JsonizerDumpReadsLikeTheBinaryTrace) {
  ChakraProtoMsg::GlobalMetadata metadata;
  metadata.set_version("1.0.0");
  *metadata.add_attr() = attr_uint64("pid", 114598);
  auto nodes = jsonizer_nodes();
  std::string binary = write(testing::trace_bytes(metadata, nodes), "t.et");
  auto expected = read_all(binary);
  ASSERT_EQ(expected.size(), nodes.size());

  for (bool pretty : {true, false}) {
    SCOPED_TRACE(pretty ? "pretty" : "compact");
    std::string path = write(jsonizer_dump(metadata, nodes, pretty), "dump.json");
    auto source = open_node_source(path);
    EXPECT_EQ(source->metadata().version, "1.0.0");
    ASSERT_EQ(source->metadata().attrs.size(), 1u);
    EXPECT_EQ(source->metadata().attrs[0].kind, AttrKind::kUint64);
    EXPECT_EQ(source->metadata().attrs[0].bits, 114598u);
    std::vector<TraceNode> got;
    TraceNode node;
    while (source->next(node)) got.push_back(node);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      testing::expect_nodes_equal(got[i], expected[i], "node " + std::to_string(i));
      testing::expect_node_matches(nodes[i], got[i], "node " + std::to_string(i));
    }
  }
}

TEST_F(JsonReader, JsonizerDumpOfEveryUpstreamTraceMatchesBinaryReader) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  size_t files = 0;
  for (const auto& file : testing::upstream_et_files()) {
    SCOPED_TRACE(file.string());
    auto records = testing::split_records(testing::read_file(file));
    ASSERT_TRUE(records.ok);
    ChakraProtoMsg::GlobalMetadata metadata;
    ASSERT_TRUE(metadata.ParseFromString(records.bodies[0]));
    std::string dump = to_json(metadata, true);
    Node node;
    for (size_t r = 1; r < records.bodies.size(); ++r) {
      ASSERT_TRUE(node.ParseFromString(records.bodies[r]));
      dump += to_json(node, true);
    }
    std::string path = write(dump, "dump.json");
    auto from_json = read_all(path);
    auto from_binary = read_all(file.string());
    ASSERT_EQ(from_json.size(), from_binary.size());
    for (size_t i = 0; i < from_json.size(); ++i) {
      testing::expect_nodes_equal(from_json[i], from_binary[i], "node " + std::to_string(i));
      if (HasFailure()) return;
    }
    ++files;
  }
  EXPECT_GE(files, 300u);
}

TEST_F(JsonReader, JsonizerErrorsNameObjectAndNode) {
  std::string md = to_json(ChakraProtoMsg::GlobalMetadata(), true);
  std::string good = to_json(make_node(1, ChakraProtoMsg::COMP_NODE), true);
  expect_error(write("  \n", "a.json"), 0, {}, "empty file: no GlobalMetadata record",
               TraceFormat::kJsonizerDump);
  expect_error(write(md + good + ",\n" + good, "b.json"), 2, {},
               "expected '{' to start object 2 at byte");
  expect_error(write(md + good + "{\"id\": \"3\", \"name\": \"x\"", "c.json"), 2, {},
               "file ends inside object 2: file truncated?");
  expect_error(write(md + good + R"({"id": "3", "color": "blue"})", "d.json"), 2, {},
               "object 2 is not a Node in protobuf JSON");
  expect_error(write(R"({"version": "1", "nodes": []})" + good, "e.json"), 0, {},
               "object 0 is not a GlobalMetadata in protobuf JSON");
  expect_error(write(md + good + R"({"id": "9", "type": 12})", "f.json"), 2, 9,
               "node type 12 is not a known NodeType (0..7)");
  expect_error(write(md + R"({"id": "9", "type": "COMM_COLL_NODE", "attr": [
                    {"name": "comm_size", "stringVal": "big"}]})",
                     "g.json"),
               1, 9, "attribute comm_size has kind string_val, expected an integer kind");
}

// A file holding just `{}` (or any lone metadata object) is not taken for a trace with no nodes
// (issue 39, N21); the same metadata followed by a node stays a trace.
TEST_F(JsonReader, JsonizerDumpWithoutNodesIsNoTrace) {
  const std::string empty_metadata = to_json(ChakraProtoMsg::GlobalMetadata(), false);
  ASSERT_EQ(empty_metadata, "{}");
  for (const std::string& text :
       {std::string("{}"), std::string(" {}\n"), std::string(R"({"version": "1.0.1"})")}) {
    SCOPED_TRACE(text);
    expect_error(write(text, "lone.json"), {}, {}, "no nodes: a JSON object with no Node object");
  }
  const std::string one = to_json(make_node(1, ChakraProtoMsg::COMP_NODE), false);
  EXPECT_EQ(read_all(write("{}" + one, "one.json")).size(), 1u);
  EXPECT_EQ(read_all(write("{}\n{}", "zero-node.json")).size(), 1u);  // an empty node, id 0
  // Formats that say what they are keep an empty graph legal.
  EXPECT_TRUE(read_all(write(R"({"workload_graph": []})", "feeder.json")).empty());
}

// Both JSON formats are held in memory (the feeder document whole, a jsonizer dump one object at
// a time), so each has a cap. The padding is a sparse file: the tests stay fast and small on disk.
TEST_F(JsonReader, OversizeJsonIsRefusedAtItsCap) {
  const std::string feeder = write(R"({"workload_graph": [)", "feeder.json");
  std::filesystem::resize_file(feeder, kMaxFeederJsonBytes + 1);
  expect_error(feeder, {}, {},
               "268435457 bytes: larger than 256 MiB, the limit for a feeder JSON trace");

  // A jsonizer dump is read an object at a time; one object that never closes stops at its cap.
  const std::string md = to_json(ChakraProtoMsg::GlobalMetadata(), false);
  const std::string dump = write(md + "{\"id\": \"1\", \"name\": \"", "dump.json");
  std::filesystem::resize_file(dump, kMaxJsonObjectBytes + 4096);
  expect_error(dump, 1, {},
               "object 1 is larger than 64 MiB, the limit for one object of a JSON trace");
}

}  // namespace
}  // namespace etwire::trace
