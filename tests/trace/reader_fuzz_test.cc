// Fuzz-style robustness checks: random and mutated inputs must either read cleanly or raise
// TraceError, never crash or throw anything else (run under ASan/UBSan in CI). Where libprotobuf
// also accepts a mutated node, both decoders must agree on it.
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <random>

#include "tests/testing/test_paths.h"
#include "tests/trace/trace_test_support.h"
#include "trace/node_source.h"
#include "trace/trace_error.h"

namespace etwire::trace {
namespace {

using ChakraProtoMsg::Node;
using testing::attr_bool;
using testing::attr_int32;
using testing::attr_int64;
using testing::attr_string;
using testing::frame;
using testing::make_node;

// Fixed seeds: a failure reproduces on every run.
constexpr uint64_t kSeed = 0x5eed'e7f1'7e00'0001ULL;

std::vector<Node> seed_nodes() {
  std::vector<Node> nodes;
  Node coll = make_node(10, ChakraProtoMsg::COMM_COLL_NODE,
                        {attr_bool("is_cpu_op", false), attr_int64("comm_type", 2),
                         attr_int64("comm_size", 1 << 20), attr_string("pg_name", "1.0")},
                        {9});
  ChakraProtoMsg::AttributeProto* dims = coll.add_attr();
  dims->set_name("involved_dim");
  dims->mutable_bool_list()->add_values(true);
  dims->mutable_bool_list()->add_values(false);
  nodes.push_back(coll);
  Node send = make_node(
      11, ChakraProtoMsg::COMM_SEND_NODE,
      {attr_int32("comm_dst", 3), attr_int32("comm_tag", 0), attr_int64("comm_size", 4096)}, {10});
  send.add_ctrl_deps(2);
  send.mutable_inputs()->set_values("[[1, 2, 0, 4, 4, 'cuda:0']]");
  nodes.push_back(send);
  Node comp = make_node(12, ChakraProtoMsg::COMP_NODE, {attr_int32("is_cpu_op", 1)}, {10, 11});
  comp.set_duration_micros(250);
  ChakraProtoMsg::AttributeProto* lists = comp.add_attr();
  lists->set_name("sizes");
  lists->mutable_sint64_list()->add_values(-3);
  lists->mutable_sint64_list()->add_values(1LL << 40);
  ChakraProtoMsg::AttributeProto* reals = comp.add_attr();
  reals->set_name("ratios");
  reals->mutable_float_list()->add_values(0.5f);
  ChakraProtoMsg::AttributeProto* fixed = comp.add_attr();
  fixed->set_name("f");
  fixed->set_sfixed64_val(-1);
  nodes.push_back(comp);
  return nodes;
}

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  size_t below(size_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_);
  }
  char byte() { return static_cast<char>(below(256)); }

  std::string mutate(std::string data) {
    size_t rounds = 1 + below(4);
    for (size_t r = 0; r < rounds; ++r) {
      size_t pos = below(data.size() + 1);
      switch (below(7)) {
        case 0:
          if (!data.empty()) data[pos % data.size()] ^= static_cast<char>(1 << below(8));
          break;
        case 1:
          if (!data.empty()) data[pos % data.size()] = byte();
          break;
        case 2: {
          std::string extra;
          for (size_t i = 0, n = 1 + below(8); i < n; ++i) extra += byte();
          data.insert(pos, extra);
          break;
        }
        case 3:
          data.erase(pos, below(16));
          break;
        case 4:
          data.resize(pos);
          break;
        case 5: {
          size_t n = below(32);
          std::string piece = data.substr(pos, n);
          data.insert(below(data.size() + 1), piece);
          break;
        }
        default: {
          static const char kInteresting[] = {'\0',   '\x7f', '\x80', '\xff', '\x0a',
                                              '\x52', '{',    '"',    '\x1f', '\x8b'};
          if (!data.empty()) data[pos % data.size()] = kInteresting[below(sizeof(kInteresting))];
        }
      }
    }
    return data;
  }

  std::string random_bytes(size_t max) {
    std::string out;
    for (size_t i = 0, n = below(max + 1); i < n; ++i) out += byte();
    return out;
  }

 private:
  std::mt19937_64 rng_;
};

class ReaderFuzz : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = etwire::testing::make_scratch_dir("fuzz"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Reads the whole input; returns true when it read cleanly. Anything but TraceError fails the
  // test, with the input kept for reproduction.
  bool survive(const std::string& bytes, TraceFormat format, size_t iteration) {
    auto path = dir_ / "input";
    testing::write_file(path, bytes);
    try {
      auto source = open_node_source(path.string(), format);
      TraceNode node;
      while (source->next(node)) {
      }
      return true;
    } catch (const TraceError&) {
      return false;
    } catch (const std::exception& e) {
      auto keep = dir_.parent_path() / ("etwire-fuzz-crash-" + std::to_string(iteration));
      testing::write_file(keep, bytes);
      ADD_FAILURE() << "iteration " << iteration << ": non-TraceError exception: " << e.what()
                    << " (input kept in " << keep << ")";
      return false;
    }
  }

  std::filesystem::path dir_;
};

TEST_F(ReaderFuzz, MutatedBinaryTraces) {
  ChakraProtoMsg::GlobalMetadata metadata;
  metadata.set_version("0.0.4");
  *metadata.add_attr() = attr_string("schema", "1.0.1");
  std::string seed = testing::trace_bytes(metadata, seed_nodes());
  Mutator mutator(kSeed);
  size_t clean = 0;
  for (size_t i = 0; i < 3000; ++i) {
    TraceFormat format = i % 2 == 0 ? TraceFormat::kBinary : TraceFormat::kAuto;
    clean += survive(mutator.mutate(seed), format, i) ? 1 : 0;
    if (HasFailure()) return;
  }
  // Some mutations (e.g. inside a string) leave a valid trace: both outcomes are exercised.
  EXPECT_GT(clean, 0u);
  EXPECT_LT(clean, 3000u);
}

TEST_F(ReaderFuzz, RandomBytes) {
  Mutator mutator(kSeed + 1);
  std::string metadata = frame(std::string());
  for (size_t i = 0; i < 3000; ++i) {
    std::string bytes = mutator.random_bytes(200);
    // Half of the inputs get a valid metadata record so that node decoding is reached.
    if (i % 2 == 1) bytes = metadata + bytes;
    survive(bytes, TraceFormat::kAuto, i);
    if (HasFailure()) return;
  }
}

TEST_F(ReaderFuzz, MutatedGzipTraces) {
  std::string plain = testing::trace_bytes(ChakraProtoMsg::GlobalMetadata(), seed_nodes());
  std::string gz = testing::gzip_bytes(plain);
  Mutator mutator(kSeed + 2);
  for (size_t i = 0; i < 1000; ++i) {
    std::string bytes = mutator.mutate(gz);
    // Keep the magic most of the time so that the inflater, not the sniffer, sees the damage.
    if (i % 4 != 0 && bytes.size() >= 2) {
      bytes[0] = '\x1f';
      bytes[1] = '\x8b';
    }
    survive(bytes, TraceFormat::kAuto, i);
    if (HasFailure()) return;
  }
}

TEST_F(ReaderFuzz, MutatedJsonTraces) {
  std::string feeder = R"({"workload_graph": [
    {"Id": 1, "Name": "a", "NodeType": 7, "data_deps": [], "ctrlDeps": [3], "runtime": 5,
     "is_cpu_op": false, "comm_type": 0, "comm_size": 1024, "comm_src": 1, "comm_dst": 2},
    {"Id": 2, "Name": "b", "NodeType": 4, "data_deps": [1], "runtime": 7, "is_cpu_op": 1}
  ]})";
  std::string dump;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  std::string text;
  ASSERT_TRUE(
      google::protobuf::util::MessageToJsonString(ChakraProtoMsg::GlobalMetadata(), &text, options)
          .ok());
  dump += text;
  for (const Node& node : seed_nodes()) {
    text.clear();
    ASSERT_TRUE(google::protobuf::util::MessageToJsonString(node, &text, options).ok());
    dump += text;
  }
  Mutator mutator(kSeed + 3);
  size_t clean = 0;
  for (size_t i = 0; i < 1500; ++i) {
    const std::string& seed = i % 2 == 0 ? feeder : dump;
    TraceFormat format = TraceFormat::kAuto;
    if (i % 3 == 1) format = TraceFormat::kFeederJson;
    if (i % 3 == 2) format = TraceFormat::kJsonizerDump;
    clean += survive(mutator.mutate(seed), format, i) ? 1 : 0;
    if (HasFailure()) return;
  }
  EXPECT_GT(clean, 0u);
}

TEST_F(ReaderFuzz, MutatedNodesAgreeWithLibprotobufWhenBothAccept) {
  auto seeds = seed_nodes();
  Mutator mutator(kSeed + 4);
  // libprotobuf logs every string with invalid UTF-8 it refuses; those inputs are simply skipped.
  google::protobuf::LogSilencer quiet;
  size_t compared = 0;
  for (size_t i = 0; i < 4000; ++i) {
    std::string body = mutator.mutate(seeds[i % seeds.size()].SerializeAsString());
    Node expected;
    if (!expected.ParseFromString(body)) continue;
    auto path = dir_ / "node.et";
    testing::write_file(path, frame(std::string()) + frame(body));
    std::vector<TraceNode> nodes;
    try {
      nodes = testing::read_all(path.string());
    } catch (const TraceError&) {
      continue;  // e.g. a node type out of range: libprotobuf keeps it, the reader refuses it
    }
    ASSERT_EQ(nodes.size(), 1u);
    testing::expect_node_matches(expected, nodes[0], "iteration " + std::to_string(i));
    if (HasFailure()) return;
    ++compared;
  }
  EXPECT_GT(compared, 300u);
}

}  // namespace
}  // namespace etwire::trace
