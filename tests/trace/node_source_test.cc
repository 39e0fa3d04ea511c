// open_node_source: format detection by content, explicit formats, and the byte source beneath.
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include "tests/testing/test_paths.h"
#include "tests/trace/trace_test_support.h"
#include "trace/byte_source.h"
#include "trace/node_source.h"
#include "trace/trace_error.h"

namespace etwire::trace {
namespace {

using testing::frame;
using testing::make_node;

class NodeSourceTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = etwire::testing::make_scratch_dir("source"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& bytes, const std::string& name) {
    auto path = dir_ / name;
    testing::write_file(path, bytes);
    return path.string();
  }

  // The ids read from a file, to tell which reader handled it.
  static std::vector<uint64_t> ids(const std::string& path,
                                   TraceFormat format = TraceFormat::kAuto) {
    std::vector<uint64_t> out;
    for (const auto& node : testing::read_all(path, format)) out.push_back(node.id);
    return out;
  }

  std::filesystem::path dir_;
};

TEST_F(NodeSourceTest, DetectsEveryFormatByContent) {
  std::vector<ChakraProtoMsg::Node> nodes = {make_node(4, ChakraProtoMsg::COMP_NODE),
                                             make_node(5, ChakraProtoMsg::COMP_NODE, {}, {4})};
  ChakraProtoMsg::GlobalMetadata metadata;
  metadata.set_version("0.0.4");
  std::string binary = testing::trace_bytes(metadata, nodes);
  const std::vector<uint64_t> expected = {4, 5};

  // The file name never matters.
  EXPECT_EQ(ids(write(binary, "a.json")), expected);
  EXPECT_EQ(ids(write(testing::gzip_bytes(binary), "b.et")), expected);

  std::string feeder =
      "\n\t {\"workload_graph\": [{\"Id\": 4, \"NodeType\": 4},"
      " {\"Id\": 5, \"NodeType\": 4, \"data_deps\": [4]}]}";
  EXPECT_EQ(ids(write(feeder, "c.et")), expected);
  // The key is found even when it is not the first one.
  std::string feeder_late =
      "{\"ngpus\": {\"a\": [\"workload_graph\"]}, \"workload_graph\": "
      "[{\"Id\": 4, \"NodeType\": 4}, {\"Id\": 5, \"NodeType\": 4}]}";
  EXPECT_EQ(ids(write(feeder_late, "d")), expected);

  std::string dump;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  std::string text;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(metadata, &text, options).ok());
  dump += text;
  for (const auto& node : nodes) {
    text.clear();
    ASSERT_TRUE(google::protobuf::util::MessageToJsonString(node, &text, options).ok());
    dump += text;
  }
  EXPECT_EQ(ids(write(dump, "e.et")), expected);
  // An all-default GlobalMetadata prints as {}.
  EXPECT_EQ(ids(write("{}{\"id\": \"4\"}", "f")), std::vector<uint64_t>{4});
}

TEST_F(NodeSourceTest, BinaryTraceStartingWithABraceStaysBinary) {
  // A GlobalMetadata record of 123 bytes starts with 0x7B, which is '{'.
  ChakraProtoMsg::GlobalMetadata metadata;
  metadata.set_version(std::string(121, 'v'));
  std::string record = frame(metadata);
  ASSERT_EQ(record[0], '{');
  auto nodes = std::vector<ChakraProtoMsg::Node>{make_node(8, ChakraProtoMsg::COMP_NODE)};
  EXPECT_EQ(ids(write(testing::trace_bytes(metadata, nodes), "g.et")), std::vector<uint64_t>{8});

  // Worse: '{', whitespace ('\n' is the version tag) and '"' (a 34-byte version string).
  metadata.set_version(std::string(34, 'w'));
  *metadata.add_attr() = testing::attr_string("pad", std::string(77, 'p'));
  record = frame(metadata);
  ASSERT_EQ(record.substr(0, 3), "{\n\"");
  EXPECT_EQ(ids(write(testing::trace_bytes(metadata, nodes), "h.et")), std::vector<uint64_t>{8});
}

TEST_F(NodeSourceTest, ExplicitFormatOverridesDetection) {
  std::string feeder = "{\"workload_graph\": [{\"Id\": 1, \"NodeType\": 4}]}";
  std::string path = write(feeder, "x");
  EXPECT_EQ(ids(path, TraceFormat::kFeederJson), std::vector<uint64_t>{1});
  EXPECT_THROW(ids(path, TraceFormat::kJsonizerDump), TraceError);
  EXPECT_THROW(ids(path, TraceFormat::kBinary), TraceError);
  // gzip-compressed JSON is read when the format is given.
  std::string gz = write(testing::gzip_bytes(feeder), "x.gz");
  EXPECT_EQ(ids(gz, TraceFormat::kFeederJson), std::vector<uint64_t>{1});
}

TEST_F(NodeSourceTest, PathIsReported) {
  std::string path = write(frame(std::string()), "p.et");
  EXPECT_EQ(open_node_source(path)->path(), path);
}

TEST(ByteSource, PlainAndGzipDeliverTheSameBytes) {
  auto dir = etwire::testing::make_scratch_dir("bytes");
  std::string data;
  for (uint32_t i = 0; i < 3000000; ++i) data.push_back(static_cast<char>((i * 7919u) >> 3));
  testing::write_file(dir / "plain", data);
  testing::write_gzip(dir / "packed", data);
  for (const char* name : {"plain", "packed"}) {
    SCOPED_TRACE(name);
    auto bytes = ByteSource::open((dir / name).string());
    EXPECT_EQ(bytes->is_gzip(), std::string(name) == "packed");
    if (!bytes->is_gzip()) {
      EXPECT_EQ(bytes->remaining_bound(), data.size());
    } else {
      EXPECT_FALSE(bytes->remaining_bound().has_value());
    }
    std::string got;
    size_t step = 1;
    while (true) {
      // Requests of varying sizes, some larger than the internal buffer.
      size_t want = (step * 104729) % (3 << 20) + 1;
      size_t available = bytes->fill(want);
      ASSERT_TRUE(available >= want || bytes->position() + available == data.size());
      size_t take = std::min(available, step % 3 == 0 ? available : want / 2 + 1);
      got.append(reinterpret_cast<const char*>(bytes->data()), take);
      bytes->consume(take);
      if (available == 0) break;
      ++step;
    }
    EXPECT_EQ(got.size(), data.size());
    EXPECT_TRUE(got == data);
    EXPECT_EQ(bytes->position(), data.size());
  }
  std::filesystem::remove_all(dir);
}

TEST(ByteSource, EmptyAndTinyFiles) {
  auto dir = etwire::testing::make_scratch_dir("tiny");
  testing::write_file(dir / "empty", "");
  testing::write_file(dir / "one", "\x1f");
  auto empty = ByteSource::open((dir / "empty").string());
  EXPECT_EQ(empty->fill(10), 0u);
  auto one = ByteSource::open((dir / "one").string());
  EXPECT_FALSE(one->is_gzip());
  EXPECT_EQ(one->fill(10), 1u);
  EXPECT_EQ(one->data()[0], 0x1f);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace etwire::trace
