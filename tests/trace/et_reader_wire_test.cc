// The binary reader on hand-made bytes: the worked example of the format notes, and every protobuf
// wire rule the decoder must honour, each checked against libprotobuf parsing the same bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/testing/test_paths.h"
#include "tests/trace/trace_test_support.h"
#include "trace/node_source.h"

namespace etwire::trace {
namespace {

using ChakraProtoMsg::AttributeProto;
using testing::expect_node_matches;
using testing::frame;
using testing::varint;

// "0A 05" -> bytes 0x0A 0x05.
std::string hex(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == ' ') {
      ++i;
      continue;
    }
    out.push_back(static_cast<char>(std::stoi(text.substr(i, 2), nullptr, 16)));
    i += 2;
  }
  return out;
}

class EtReaderWire : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = etwire::testing::make_scratch_dir("wire"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& bytes, const std::string& name = "t.et") {
    auto path = dir_ / name;
    testing::write_file(path, bytes);
    return path.string();
  }

  // Decodes one Node body with the reader under test (behind an empty metadata record).
  TraceNode decode(const std::string& body) {
    auto nodes = testing::read_all(write(frame(std::string()) + frame(body)));
    EXPECT_EQ(nodes.size(), 1u);
    return nodes.empty() ? TraceNode{} : nodes[0];
  }

  // Decodes `body` with both decoders and expects them to agree.
  TraceNode decode_and_compare(const std::string& body) {
    ChakraProtoMsg::Node expected;
    EXPECT_TRUE(expected.ParseFromString(body));
    TraceNode node = decode(body);
    expect_node_matches(expected, node, "body");
    return node;
  }

  std::filesystem::path dir_;
};

TEST_F(EtReaderWire, SpecWorkedExample) {
  std::string bytes = hex("07 0A 05") + "0.0.4";
  bytes += hex("51 08 01 12 0C") + "All-Reduce-X" + hex("18 07");
  bytes += hex("52 0E 0A 09") + "is_cpu_op" + hex("D8 01 00");
  bytes += hex("52 0D 0A 09") + "comm_type" + hex("48 00");
  bytes += hex("52 0F 0A 09") + "comm_size" + hex("48 80 80 40");
  bytes += hex("52 0D 0A 07") + "pg_name" + hex("EA 01 01") + "0";
  bytes += hex("23 08 02 12 08") + "Compute1" + hex("18 04 2A 01 01 38 64");
  bytes += hex("52 0E 0A 09") + "is_cpu_op" + hex("D8 01 00");
  ASSERT_EQ(bytes.size(), 8u + 82u + 36u);

  auto source = open_node_source(write(bytes));
  EXPECT_EQ(source->metadata().version, "0.0.4");
  EXPECT_TRUE(source->metadata().attrs.empty());

  TraceNode node;
  ASSERT_TRUE(source->next(node));
  EXPECT_EQ(node.record_index, 1u);
  EXPECT_EQ(node.id, 1u);
  EXPECT_EQ(node.name, "All-Reduce-X");
  EXPECT_EQ(node.type, NodeType::kCommColl);
  ASSERT_EQ(node.attrs.size(), 4u);
  EXPECT_EQ(node.attrs[0].name, "is_cpu_op");
  EXPECT_EQ(node.attrs[0].kind, AttrKind::kBool);
  EXPECT_EQ(node.attrs[0].bits, 0u);
  EXPECT_EQ(node.attrs[1].kind, AttrKind::kInt64);
  EXPECT_EQ(node.attrs[1].bits, 0u);
  EXPECT_EQ(node.attrs[2].bits, 1048576u);
  EXPECT_EQ(node.attrs[3].kind, AttrKind::kString);
  EXPECT_EQ(node.attrs[3].text, "0");
  EXPECT_FALSE(node.is_cpu_op);
  EXPECT_EQ(node.comm.coll_type, CollectiveType::kAllReduce);
  EXPECT_EQ(node.comm.size, 1048576u);
  EXPECT_EQ(node.comm.pg_name, "0");
  EXPECT_TRUE(node.carries_traffic());

  ASSERT_TRUE(source->next(node));
  EXPECT_EQ(node.record_index, 2u);
  EXPECT_EQ(node.id, 2u);
  EXPECT_EQ(node.name, "Compute1");
  EXPECT_EQ(node.type, NodeType::kComp);
  EXPECT_EQ(node.data_deps, std::vector<uint64_t>{1});
  EXPECT_EQ(node.duration_us, 100u);
  ASSERT_EQ(node.attrs.size(), 1u);
  EXPECT_FALSE(node.comm.coll_type.has_value());
  EXPECT_FALSE(node.comm.pg_name.has_value());
  EXPECT_FALSE(node.carries_traffic());
  EXPECT_FALSE(source->next(node));
  EXPECT_FALSE(source->next(node));  // stays at the end
}

// One attribute of every kind, with edge values, plus one without a value.
ChakraProtoMsg::Node every_kind_node() {
  ChakraProtoMsg::Node node;
  node.set_id(std::numeric_limits<uint64_t>::max());
  node.set_name(std::string("with\0nul", 8));
  node.set_type(ChakraProtoMsg::COMP_NODE);
  node.add_ctrl_deps(0);
  node.add_ctrl_deps(uint64_t{1} << 63);
  node.add_data_deps(300);
  node.set_start_time_micros(123456789012345);
  node.set_duration_micros(7);
  node.mutable_inputs()->set_values("[[1, 2]]");
  node.mutable_outputs();  // present but empty
  auto add = [&](const std::string& name) {
    AttributeProto* attr = node.add_attr();
    attr->set_name(name);
    return attr;
  };
  add("double")->set_double_val(-0.0);
  add("float")->set_float_val(std::numeric_limits<float>::infinity());
  add("int32")->set_int32_val(std::numeric_limits<int32_t>::min());
  add("int64")->set_int64_val(std::numeric_limits<int64_t>::min());
  add("uint32")->set_uint32_val(std::numeric_limits<uint32_t>::max());
  add("uint64")->set_uint64_val(std::numeric_limits<uint64_t>::max());
  add("sint32")->set_sint32_val(-123456);
  add("sint64")->set_sint64_val(std::numeric_limits<int64_t>::min());
  add("fixed32")->set_fixed32_val(0xdeadbeef);
  add("fixed64")->set_fixed64_val(0xfeedfacecafebeefULL);
  add("sfixed32")->set_sfixed32_val(-2);
  add("sfixed64")->set_sfixed64_val(-3);
  add("bool")->set_bool_val(true);
  add("string")->set_string_val("");
  add("bytes")->set_bytes_val(std::string("\0\xff", 2));
  auto* doubles = add("double_list")->mutable_double_list();
  doubles->add_values(1.5);
  doubles->add_values(std::nan(""));
  auto* floats = add("float_list")->mutable_float_list();
  floats->add_values(-1.25f);
  auto* i32 = add("int32_list")->mutable_int32_list();
  i32->add_values(-1);
  i32->add_values(5);
  add("int64_list")->mutable_int64_list()->add_values(-5);
  add("uint32_list")->mutable_uint32_list()->add_values(4000000000u);
  add("uint64_list")->mutable_uint64_list()->add_values(1);
  auto* s32 = add("sint32_list")->mutable_sint32_list();
  s32->add_values(std::numeric_limits<int32_t>::min());
  s32->add_values(std::numeric_limits<int32_t>::max());
  add("sint64_list")->mutable_sint64_list()->add_values(-1);
  add("fixed32_list")->mutable_fixed32_list()->add_values(1);
  add("fixed64_list")->mutable_fixed64_list()->add_values(2);
  add("sfixed32_list")->mutable_sfixed32_list()->add_values(-7);
  add("sfixed64_list")->mutable_sfixed64_list()->add_values(-8);
  auto* bools = add("bool_list")->mutable_bool_list();
  bools->add_values(true);
  bools->add_values(false);
  auto* strings = add("string_list")->mutable_string_list();
  strings->add_values("a");
  strings->add_values("");
  add("bytes_list")->mutable_bytes_list()->add_values(std::string(40, '\x80'));
  add("empty_list")->mutable_int64_list();  // a list kind with no elements
  add("no_value")->set_doc_string("documented but valueless");
  return node;
}

TEST_F(EtReaderWire, EveryAttributeKindMatchesLibprotobuf) {
  ChakraProtoMsg::Node node = every_kind_node();
  TraceNode got = decode_and_compare(node.SerializeAsString());
  ASSERT_EQ(got.attrs.size(), 32u);
  EXPECT_EQ(got.attrs[2].as_int64(), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(got.attrs[3].as_int64(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(got.attrs[5].as_uint64(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(got.attrs[6].as_int64(), -123456);
  EXPECT_EQ(got.attrs[10].as_int64(), -2);
  EXPECT_TRUE(std::signbit(got.attrs[0].real));
  EXPECT_EQ(got.attrs[30].kind, AttrKind::kInt64List);
  EXPECT_TRUE(got.attrs[30].int_list.empty());
  EXPECT_EQ(got.attrs[31].kind, AttrKind::kNone);
  EXPECT_TRUE(got.inputs.present);
  EXPECT_TRUE(got.outputs.present);
  EXPECT_TRUE(got.outputs.values.empty());
}

TEST_F(EtReaderWire, NegativeInt32IsATenByteVarint) {
  ChakraProtoMsg::Node node;
  *node.add_attr() = testing::attr_int32("comm_src", -1);
  std::string body = node.SerializeAsString();
  // tag 52, length, name (2 + 8 bytes), tag 38, ten varint bytes
  ASSERT_EQ(body.size(), 2u + 10u + 1u + 10u);
  TraceNode got = decode_and_compare(body);
  EXPECT_EQ(got.attrs[0].bits, ~uint64_t{0});
  EXPECT_EQ(got.comm.src, -1);
}

TEST_F(EtReaderWire, UnpackedAndMixedRepeatedFields) {
  // data_deps 1, 2 unpacked (tag 28); ctrl_deps packed [2, 3] between unpacked 1 and 4.
  std::string body = hex("08 05 28 01 28 02 20 01 22 02 02 03 20 04");
  TraceNode got = decode_and_compare(body);
  EXPECT_EQ(got.data_deps, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(got.ctrl_deps, (std::vector<uint64_t>{1, 2, 3, 4}));

  // Lists inside attributes: packed then unpacked then packed again, all appended in order.
  std::string list = hex("0A 02 01 02 08 03 0A 01 04");
  std::string attr = hex("0A 01") + "x" + hex("52") + varint(list.size()) + list;
  got = decode_and_compare(hex("52") + varint(attr.size()) + attr);
  EXPECT_EQ(got.attrs[0].kind, AttrKind::kInt64List);
  EXPECT_EQ(got.attrs[0].int_list, (std::vector<uint64_t>{1, 2, 3, 4}));

  // Unpacked fixed32 and float elements.
  std::string fixed = hex("0D 01 00 00 00 0A 08 02 00 00 00 03 00 00 00");
  attr = hex("0A 01") + "f" + hex("A2 01") + varint(fixed.size()) + fixed;
  got = decode_and_compare(hex("52") + varint(attr.size()) + attr);
  EXPECT_EQ(got.attrs[0].int_list, (std::vector<uint64_t>{1, 2, 3}));
  std::string floats = hex("0D 00 00 80 3F 0A 04 00 00 00 40");
  attr = hex("0A 01") + "g" + hex("32") + varint(floats.size()) + floats;
  got = decode_and_compare(hex("52") + varint(attr.size()) + attr);
  EXPECT_EQ(got.attrs[0].real_list, (std::vector<double>{1.0, 2.0}));
}

TEST_F(EtReaderWire, UnknownFieldsAreSkippedByWireType) {
  // Field numbers no message of the schema uses (AttributeProto has 1..32).
  std::string unknown = hex("C0 02 2A") +                       // field 40 varint
                        hex("C9 02 01 02 03 04 05 06 07 08") +  // field 41 fixed64
                        hex("D2 02 03 41 42 43") +              // field 42 length-delimited
                        hex("DD 02 01 02 03 04") +              // field 43 fixed32
                        hex("F8 FF FF FF 0F 01");               // field 2^29-1 varint
  std::string io = hex("0A 01") + "v" + unknown;
  std::string list = hex("0A 01 07") + unknown;
  std::string attr = hex("0A 01") + "a" + unknown + hex("52") + varint(list.size()) + list;
  std::string body = hex("08 09") + unknown + hex("42") + varint(io.size()) + io + hex("52") +
                     varint(attr.size()) + attr + hex("18 04") + unknown;
  TraceNode got = decode_and_compare(body);
  EXPECT_EQ(got.id, 9u);
  EXPECT_EQ(got.type, NodeType::kComp);
  EXPECT_EQ(got.inputs.values, "v");
  EXPECT_EQ(got.attrs[0].int_list, std::vector<uint64_t>{7});
}

TEST_F(EtReaderWire, KnownFieldWithForeignWireTypeIsUnknown) {
  // id as length-delimited, type as fixed32, attr as varint: protobuf skips all three.
  std::string body = hex("08 03 0A 01 05 1D 01 00 00 00 50 01 12 01") + "n";
  TraceNode got = decode_and_compare(body);
  EXPECT_EQ(got.id, 3u);
  EXPECT_EQ(got.type, NodeType::kInvalid);
  EXPECT_TRUE(got.attrs.empty());
  EXPECT_EQ(got.name, "n");
}

TEST_F(EtReaderWire, LastOccurrenceWinsForSingularFields) {
  std::string body =
      hex("08 01 12 01") + "a" + hex("18 04 38 05 08 02 12 02") + "bb" + hex("18 07 38 06");
  TraceNode got = decode_and_compare(body);
  EXPECT_EQ(got.id, 2u);
  EXPECT_EQ(got.name, "bb");
  EXPECT_EQ(got.type, NodeType::kCommColl);
  EXPECT_EQ(got.duration_us, 6u);
}

TEST_F(EtReaderWire, OneofLastMemberWinsAndListsMerge) {
  // int64 then string: string wins. string then int64: int64 wins.
  std::string a1 = hex("0A 01") + "a" + hex("48 05 EA 01 02") + "hi";
  std::string a2 = hex("0A 01") + "b" + hex("EA 01 02") + "hi" + hex("48 05");
  // int64_list twice: merged. Then the same member as a scalar kind: replaced.
  std::string a3 = hex("0A 01") + "c" + hex("52 03 0A 01 01 52 03 0A 01 02");
  std::string a4 = hex("0A 01") + "d" + hex("52 03 0A 01 01 48 09");
  // int64 twice: last wins; name twice: last wins.
  std::string a5 = hex("0A 01") + "e" + hex("48 01 48 02 0A 01") + "f";
  std::string body;
  for (const auto& a : {a1, a2, a3, a4, a5}) body += hex("52") + varint(a.size()) + a;
  TraceNode got = decode_and_compare(body);
  ASSERT_EQ(got.attrs.size(), 5u);
  EXPECT_EQ(got.attrs[0].kind, AttrKind::kString);
  EXPECT_EQ(got.attrs[0].text, "hi");
  EXPECT_EQ(got.attrs[0].bits, 0u);
  EXPECT_EQ(got.attrs[1].kind, AttrKind::kInt64);
  EXPECT_EQ(got.attrs[1].bits, 5u);
  EXPECT_TRUE(got.attrs[1].text.empty());
  EXPECT_EQ(got.attrs[2].int_list, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(got.attrs[3].kind, AttrKind::kInt64);
  EXPECT_TRUE(got.attrs[3].int_list.empty());
  EXPECT_EQ(got.attrs[4].name, "f");
  EXPECT_EQ(got.attrs[4].bits, 2u);
}

TEST_F(EtReaderWire, IoInfoPresenceAndMerge) {
  TraceNode got = decode_and_compare(hex("08 01"));
  EXPECT_FALSE(got.inputs.present);
  EXPECT_FALSE(got.outputs.present);
  got = decode_and_compare(hex("42 00"));
  EXPECT_TRUE(got.inputs.present);
  EXPECT_FALSE(got.outputs.present);
  // Two occurrences of inputs merge field by field.
  std::string first = hex("0A 01") + "v" + hex("12 01") + "s";
  std::string second = hex("12 01") + "t" + hex("1A 01") + "u";
  got = decode_and_compare(hex("42") + varint(first.size()) + first + hex("42") +
                           varint(second.size()) + second);
  EXPECT_EQ(got.inputs.values, "v");
  EXPECT_EQ(got.inputs.shapes, "t");
  EXPECT_EQ(got.inputs.types, "u");
}

TEST_F(EtReaderWire, ZigzagAndFixedWidthValues) {
  ChakraProtoMsg::Node node;
  AttributeProto* a = node.add_attr();
  a->set_name("comm_size");
  a->set_sint64_val(1 << 20);
  a = node.add_attr();
  a->set_name("comm_src");
  a->set_sint32_val(-3);
  a = node.add_attr();
  a->set_name("comm_dst");
  a->set_sfixed32_val(12);
  a = node.add_attr();
  a->set_name("comm_tag");
  a->set_fixed64_val(99);
  node.set_type(ChakraProtoMsg::COMM_SEND_NODE);
  TraceNode got = decode_and_compare(node.SerializeAsString());
  EXPECT_EQ(got.comm.size, uint64_t{1} << 20);
  EXPECT_EQ(got.comm.src, -3);
  EXPECT_EQ(got.comm.dst, 12);
  EXPECT_EQ(got.comm.tag, 99);
}

TEST_F(EtReaderWire, NodeIsReusedWithoutStaleData) {
  ChakraProtoMsg::Node big = every_kind_node();
  *big.add_attr() = testing::attr_string("pg_name", "a process group name longer than SSO");
  *big.add_attr() = testing::attr_uint64("tensor_size", 5);
  ChakraProtoMsg::Node small;
  small.set_id(2);
  *small.add_attr() = testing::attr_int64("x", 1);
  std::string bytes = frame(ChakraProtoMsg::GlobalMetadata()) + frame(big) + frame(small) +
                      frame(big) + frame(std::string());
  auto source = open_node_source(write(bytes));
  TraceNode node;
  ASSERT_TRUE(source->next(node));
  expect_node_matches(big, node, "big");
  ASSERT_TRUE(source->next(node));
  expect_node_matches(small, node, "small after big");
  ASSERT_TRUE(source->next(node));
  expect_node_matches(big, node, "big again");
  ASSERT_TRUE(source->next(node));
  expect_node_matches(ChakraProtoMsg::Node(), node, "empty");
  EXPECT_EQ(node.record_index, 4u);
  EXPECT_FALSE(source->next(node));
}

}  // namespace
}  // namespace etwire::trace
