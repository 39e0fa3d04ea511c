// The bad-input corpus of the binary reader, generated into a scratch directory: one file per error
// class, each checked for the file, the record index, the node id (once known) and the problem.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>

#include "tests/testing/test_paths.h"
#include "tests/trace/trace_test_support.h"
#include "trace/node_source.h"
#include "trace/trace_error.h"

namespace etwire::trace {
namespace {

using ChakraProtoMsg::AttributeProto;
using ChakraProtoMsg::Node;
using testing::attr_int32;
using testing::attr_int64;
using testing::attr_string;
using testing::attr_uint64;
using testing::frame;
using testing::make_node;

struct Expected {
  std::optional<uint64_t> record;
  std::optional<uint64_t> node_id;
  std::string problem;
};

class EtReaderErrors : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = etwire::testing::make_scratch_dir("errors"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& bytes, const std::string& name = "bad.et") {
    auto path = dir_ / name;
    testing::write_file(path, bytes);
    return path.string();
  }

  static std::string metadata() {
    ChakraProtoMsg::GlobalMetadata md;
    md.set_version("0.0.4");
    return frame(md);
  }

  // A valid trace prefix followed by one node record built from `node`.
  std::string with_node(const Node& node) {
    return write(metadata() + frame(make_node(1, ChakraProtoMsg::COMP_NODE)) + frame(node));
  }

  static void expect_error(const std::string& path, const Expected& expected,
                           TraceFormat format = TraceFormat::kAuto) {
    try {
      testing::read_all(path, format);
      ADD_FAILURE() << "no TraceError for " << path << " (expected: " << expected.problem << ")";
    } catch (const TraceError& e) {
      std::string what = e.what();
      EXPECT_EQ(e.where().file, path) << what;
      EXPECT_EQ(e.where().record_index, expected.record) << what;
      EXPECT_EQ(e.where().node_id, expected.node_id) << what;
      EXPECT_EQ(what.rfind(path, 0), 0u) << what;
      if (expected.record) {
        EXPECT_NE(what.find("record " + std::to_string(*expected.record)), std::string::npos)
            << what;
      }
      if (expected.node_id) {
        EXPECT_NE(what.find("node id " + std::to_string(*expected.node_id)), std::string::npos)
            << what;
      }
      EXPECT_NE(what.find(expected.problem), std::string::npos)
          << "message: " << what << "\nexpected to contain: " << expected.problem;
    }
  }

  std::filesystem::path dir_;
};

TEST_F(EtReaderErrors, EmptyFile) {
  expect_error(write(""), {0, {}, "empty file: no GlobalMetadata record"});
}

TEST_F(EtReaderErrors, TruncatedLengthPrefixAtEndOfFile) {
  expect_error(write(metadata() + "\x80"),
               {1, {}, "file ends inside the length prefix of record 1: file truncated?"});
  expect_error(write("\x81\x80"), {0, {}, "file ends inside the length prefix of record 0"});
}

TEST_F(EtReaderErrors, LengthVarintLongerThanFiveBytes) {
  expect_error(write(metadata() + "\xff\xff\xff\xff\xff\x01" + std::string(20, 'x')),
               {1, {}, "record length varint is longer than 5 bytes"});
}

TEST_F(EtReaderErrors, LengthOverTwoGibibytes) {
  expect_error(write(metadata() + testing::varint(uint64_t{1} << 31) + "abc"),
               {1, {}, "record length 2147483648 exceeds the 2147483647-byte limit"});
  expect_error(write(metadata() + "\xff\xff\xff\xff\x7f"),
               {1, {}, "record length 34359738367 exceeds"});
}

TEST_F(EtReaderErrors, RecordLongerThanTheRestOfTheFile) {
  std::string bytes = metadata();
  for (uint64_t id = 1; id <= 6; ++id) bytes += frame(make_node(id, ChakraProtoMsg::COMP_NODE));
  bytes += testing::varint(500) + std::string(12, '\x08');
  expect_error(write(bytes),
               {7, {}, "record 7 claims 500 bytes but only 12 remain: file truncated?"});
  // The same file gzip-compressed: the size is not known up front, the message is the same.
  testing::write_gzip(dir_ / "bad.et.gz", bytes);
  expect_error((dir_ / "bad.et.gz").string(),
               {7, {}, "record 7 claims 500 bytes but only 12 remain: file truncated?"});
}

TEST_F(EtReaderErrors, TruncatedGzipStream) {
  std::string bytes = metadata();
  for (uint64_t id = 1; id <= 2000; ++id) bytes += frame(make_node(id, ChakraProtoMsg::COMP_NODE));
  std::string gz = testing::gzip_bytes(bytes);
  auto path = write(gz.substr(0, gz.size() - 30), "cut.et.gz");
  try {
    testing::read_all(path);
    ADD_FAILURE() << "no error";
  } catch (const TraceError& e) {
    EXPECT_EQ(e.where().file, path);
    EXPECT_TRUE(e.where().record_index.has_value());
    EXPECT_NE(std::string(e.what()).find("gzip stream is truncated"), std::string::npos)
        << e.what();
  }
}

TEST_F(EtReaderErrors, CorruptGzipData) {
  std::string bytes = metadata();
  for (uint64_t id = 1; id <= 2000; ++id) bytes += frame(make_node(id, ChakraProtoMsg::COMP_NODE));
  std::string gz = testing::gzip_bytes(bytes);
  for (size_t i = 20; i < 40; ++i) gz[i] = static_cast<char>(gz[i] ^ 0x55);
  auto path = write(gz, "corrupt.et.gz");
  try {
    testing::read_all(path);
    ADD_FAILURE() << "no error";
  } catch (const TraceError& e) {
    EXPECT_EQ(e.where().file, path);
    EXPECT_NE(std::string(e.what()).find("gzip data is corrupt"), std::string::npos) << e.what();
  }
}

TEST_F(EtReaderErrors, GarbageAfterGzipStream) {
  std::string bytes = metadata() + frame(make_node(1, ChakraProtoMsg::COMP_NODE));
  expect_error(write(testing::gzip_bytes(bytes) + "junk", "tail.et.gz"),
               {0, {}, "unexpected bytes after the end of the gzip stream"});
}

TEST_F(EtReaderErrors, UndecodableNodeBodies) {
  struct Case {
    std::string body;
    std::optional<uint64_t> id;
    std::string problem;
  };
  const Case cases[] = {
      {std::string("\x08\x2a\x00", 3), 42, "bad field tag 0x0 (field number 0) at byte 2"},
      {"\x1b", {}, "field 3 uses wire type 3 (group)"},
      {"\x08\x05\x1c", 5, "field 3 uses wire type 4 (group)"},
      {"\x1e", {}, "field 3 has invalid wire type 6"},
      {"\x1f", {}, "field 3 has invalid wire type 7"},
      {"\x08\x80", {}, "truncated varint at byte 2"},
      {"\x08\x01\x38\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 1,
       "varint longer than 10 bytes"},
      {"\x08\x01\x79\x01\x02", 1, "truncated fixed64 field"},
      {"\x08\x01\x12\x05\x41", 1,
       "length-delimited field claims 5 bytes but only 1 remain in its message"},
      // An attribute whose name runs past the attribute's own end (inside the record).
      {"\x08\x07\x52\x02\x0a\x05\x41\x41\x41\x41\x41", 7,
       "length-delimited field claims 5 bytes but only 0 remain"},
      {"\x08\x01\x2a\x02\x01\x80", 1, "truncated varint"},
      {"\x08\x01\xf8\xff\xff\xff\x1f\x00", 1,
       "bad field tag 0x1fffffff8 (exceeds 32 bits) at byte 2"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.problem);
    std::string path =
        write(metadata() + frame(make_node(1, ChakraProtoMsg::COMP_NODE)) + frame(c.body));
    expect_error(path, {2, c.id, "undecodable Node: " + c.problem});
  }
}

TEST_F(EtReaderErrors, UndecodableMetadata) {
  expect_error(
      write(frame(std::string("\x0a\x09", 2)) + frame(make_node(1, ChakraProtoMsg::COMP_NODE))),
      {0, {}, "undecodable GlobalMetadata: length-delimited field claims 9 bytes"});
}

TEST_F(EtReaderErrors, NodeTypeOutOfRange) {
  Node node = make_node(9, ChakraProtoMsg::COMP_NODE);
  node.set_type(static_cast<ChakraProtoMsg::NodeType>(8));
  expect_error(with_node(node), {2, 9, "node type 8 is not a known NodeType (0..7)"});
  node.set_type(static_cast<ChakraProtoMsg::NodeType>(-1));
  expect_error(with_node(node), {2, 9, "node type -1 is not a known NodeType"});
}

TEST_F(EtReaderErrors, CommTypeOutOfRange) {
  expect_error(
      with_node(make_node(4, ChakraProtoMsg::COMM_COLL_NODE, {attr_int64("comm_type", 10)})),
      {2, 4, "comm_type 10 is not a known CollectiveCommType (0..9)"});
  expect_error(
      with_node(make_node(4, ChakraProtoMsg::COMM_COLL_NODE, {attr_int32("comm_type", -1)})),
      {2, 4, "comm_type -1 is not a known CollectiveCommType"});
}

TEST_F(EtReaderErrors, CommSizeNegative) {
  expect_error(with_node(make_node(3, ChakraProtoMsg::COMM_COLL_NODE,
                                   {attr_int64("comm_type", 0), attr_int64("comm_size", -1)})),
               {2, 3, "comm_size -1 is negative"});
  Node node = make_node(3, ChakraProtoMsg::COMM_SEND_NODE);
  AttributeProto* size = node.add_attr();
  size->set_name("comm_size");
  size->set_sint32_val(-5);
  expect_error(with_node(node), {2, 3, "comm_size -5 is negative"});
  expect_error(
      with_node(make_node(3, ChakraProtoMsg::COMM_SEND_NODE, {attr_int64("tensor_size", -2)})),
      {2, 3, "tensor_size -2 is negative"});
}

TEST_F(EtReaderErrors, CommSizeAbsurd) {
  expect_error(with_node(make_node(3, ChakraProtoMsg::COMM_COLL_NODE,
                                   {attr_int64("comm_size", (int64_t{1} << 40) + 1)})),
               {2, 3, "comm_size 1099511627777 is absurd: more than 1 TiB (2^40 bytes)"});
  expect_error(
      with_node(make_node(3, ChakraProtoMsg::COMM_COLL_NODE,
                          {attr_uint64("comm_size", std::numeric_limits<uint64_t>::max())})),
      {2, 3, "comm_size 18446744073709551615 is absurd"});
  // The tensor_size fallback of a RECV is held to the same limit.
  expect_error(with_node(make_node(3, ChakraProtoMsg::COMM_RECV_NODE,
                                   {attr_uint64("tensor_size", uint64_t{1} << 50)})),
               {2, 3, "tensor_size 1125899906842624 is absurd"});
}

TEST_F(EtReaderErrors, WellKnownAttributeOfTheWrongKind) {
  struct Case {
    AttributeProto attr;
    std::string problem;
  };
  AttributeProto list;
  list.set_name("pg_name");
  list.mutable_string_list()->add_values("1");
  AttributeProto real;
  real.set_name("comm_size");
  real.set_double_val(1024.0);
  AttributeProto none;
  none.set_name("comm_size");
  AttributeProto scalar_dims = attr_int64("involved_dim", 1);
  AttributeProto int_dims;
  int_dims.set_name("involved_dim");
  int_dims.mutable_int32_list()->add_values(1);
  AttributeProto bytes_pg;
  bytes_pg.set_name("pg_name");
  bytes_pg.set_bytes_val("1");
  std::vector<Case> cases = {
      {attr_string("comm_type", "ALL_REDUCE"),
       "attribute comm_type has kind string_val, expected an integer kind"},
      {list, "attribute pg_name has kind string_list, expected string_val"},
      {real, "attribute comm_size has kind double_val, expected an integer kind"},
      {none, "attribute comm_size has kind none, expected an integer kind"},
      {attr_string("is_cpu_op", "true"), "attribute is_cpu_op has kind string_val"},
      {attr_int64("pg_name", 1), "attribute pg_name has kind int64_val, expected string_val"},
      {scalar_dims, "attribute involved_dim has kind int64_val, expected bool_list"},
      {int_dims, "attribute involved_dim has kind int32_list, expected bool_list"},
      {bytes_pg, "attribute pg_name has kind bytes_val, expected string_val"},
      {attr_string("comm_group", "1"), "attribute comm_group has kind string_val"},
      {attr_string("num_ops", "1"), "attribute num_ops has kind string_val"},
      {attr_uint64("num_ops", std::numeric_limits<uint64_t>::max()),
       "attribute num_ops value 18446744073709551615 does not fit in int64"},
      {attr_int64("comm_src", int64_t{1} << 33),
       "attribute comm_src value 8589934592 does not fit in int32"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.problem);
    expect_error(with_node(make_node(11, ChakraProtoMsg::COMM_COLL_NODE, {c.attr})),
                 {2, 11, c.problem});
  }
}

TEST_F(EtReaderErrors, MissingFileAndDirectory) {
  std::string missing = (dir_ / "no-such-file.et").string();
  expect_error(missing, {{}, {}, "cannot open trace file: No such file or directory"});
  expect_error(dir_.string(), {{}, {}, "cannot read trace file: it is a directory"});
}

TEST_F(EtReaderErrors, JsonForcedAsBinaryIsRejected) {
  expect_error(write("{\"workload_graph\": []}", "x.json"),
               {0, {}, "record 0 claims 123 bytes but only 21 remain"}, TraceFormat::kBinary);
}

}  // namespace
}  // namespace etwire::trace
