#include "tests/trace/trace_test_support.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <fstream>
#include <sstream>

#include "tests/testing/test_paths.h"

namespace etwire::trace::testing {

using ChakraProtoMsg::AttributeProto;

std::string varint(uint64_t value) {
  std::string out;
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
  return out;
}

std::string frame(const std::string& body) {
  return varint(body.size()) + body;
}

std::string frame(const google::protobuf::MessageLite& message) {
  return frame(message.SerializeAsString());
}

std::string trace_bytes(const ChakraProtoMsg::GlobalMetadata& metadata,
                        const std::vector<ChakraProtoMsg::Node>& nodes) {
  std::string out = frame(metadata);
  for (const auto& node : nodes) out += frame(node);
  return out;
}

void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

void write_gzip(const std::filesystem::path& path, const std::string& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr) << path;
  // gzwrite takes an unsigned length: write in pieces so any size works.
  size_t done = 0;
  while (done < bytes.size()) {
    auto chunk = static_cast<unsigned>(std::min<size_t>(bytes.size() - done, 1u << 20));
    ASSERT_EQ(gzwrite(file, bytes.data() + done, chunk), static_cast<int>(chunk));
    done += chunk;
  }
  ASSERT_EQ(gzclose(file), Z_OK);
}

std::string gzip_bytes(const std::string& bytes) {
  auto dir = etwire::testing::make_scratch_dir("gzip");
  write_gzip(dir / "data.gz", bytes);
  std::string out = read_file(dir / "data.gz");
  std::filesystem::remove_all(dir);
  return out;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

RawRecords split_records(const std::string& bytes) {
  RawRecords out;
  size_t pos = 0;
  while (pos < bytes.size()) {
    uint64_t length = 0;
    int shift = 0;
    while (true) {
      if (pos >= bytes.size() || shift > 28) {
        out.ok = false;
        return out;
      }
      auto byte = static_cast<uint8_t>(bytes[pos++]);
      length |= static_cast<uint64_t>(byte & 0x7f) << shift;
      shift += 7;
      if (byte < 0x80) break;
    }
    if (length > bytes.size() - pos) {
      out.ok = false;
      return out;
    }
    out.bodies.push_back(bytes.substr(pos, length));
    pos += length;
  }
  return out;
}

std::vector<TraceNode> read_all(const std::string& path, TraceFormat format) {
  auto source = open_node_source(path, format);
  std::vector<TraceNode> nodes;
  TraceNode node;
  while (source->next(node)) nodes.push_back(node);
  return nodes;
}

AttributeProto attr_int64(const std::string& name, int64_t value) {
  AttributeProto attr;
  attr.set_name(name);
  attr.set_int64_val(value);
  return attr;
}

AttributeProto attr_int32(const std::string& name, int32_t value) {
  AttributeProto attr;
  attr.set_name(name);
  attr.set_int32_val(value);
  return attr;
}

AttributeProto attr_uint64(const std::string& name, uint64_t value) {
  AttributeProto attr;
  attr.set_name(name);
  attr.set_uint64_val(value);
  return attr;
}

AttributeProto attr_bool(const std::string& name, bool value) {
  AttributeProto attr;
  attr.set_name(name);
  attr.set_bool_val(value);
  return attr;
}

AttributeProto attr_string(const std::string& name, const std::string& value) {
  AttributeProto attr;
  attr.set_name(name);
  attr.set_string_val(value);
  return attr;
}

ChakraProtoMsg::Node make_node(uint64_t id, ChakraProtoMsg::NodeType type,
                               std::vector<AttributeProto> attrs, std::vector<uint64_t> data_deps) {
  ChakraProtoMsg::Node node;
  node.set_id(id);
  node.set_name("node" + std::to_string(id));
  node.set_type(type);
  for (auto& attr : attrs) *node.add_attr() = std::move(attr);
  for (uint64_t dep : data_deps) node.add_data_deps(dep);
  return node;
}

namespace {

bool same_real(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) ||
         std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

template <typename List>
void expect_ints(const List& expected, const std::vector<uint64_t>& got, bool is_signed) {
  ASSERT_EQ(got.size(), static_cast<size_t>(expected.values_size()));
  for (int i = 0; i < expected.values_size(); ++i) {
    if (is_signed) {
      EXPECT_EQ(static_cast<int64_t>(got[i]), static_cast<int64_t>(expected.values(i))) << i;
    } else {
      EXPECT_EQ(got[i], static_cast<uint64_t>(expected.values(i))) << i;
    }
  }
}

template <typename List>
void expect_reals(const List& expected, const std::vector<double>& got) {
  ASSERT_EQ(got.size(), static_cast<size_t>(expected.values_size()));
  for (int i = 0; i < expected.values_size(); ++i) {
    EXPECT_TRUE(same_real(got[i], static_cast<double>(expected.values(i))))
        << i << ": " << got[i] << " vs " << expected.values(i);
  }
}

template <typename List>
void expect_texts(const List& expected, const etwire::trace::TextList& got) {
  ASSERT_EQ(got.size(), static_cast<size_t>(expected.values_size()));
  for (int i = 0; i < expected.values_size(); ++i) EXPECT_EQ(got[i], expected.values(i)) << i;
}

// The integer value of a scalar integer or bool attribute, as the schema defines it.
std::optional<int64_t> int_value(const AttributeProto& a) {
  switch (a.value_case()) {
    case AttributeProto::kInt32Val:
      return a.int32_val();
    case AttributeProto::kInt64Val:
      return a.int64_val();
    case AttributeProto::kUint32Val:
      return a.uint32_val();
    case AttributeProto::kUint64Val:
      return static_cast<int64_t>(a.uint64_val());
    case AttributeProto::kSint32Val:
      return a.sint32_val();
    case AttributeProto::kSint64Val:
      return a.sint64_val();
    case AttributeProto::kFixed32Val:
      return a.fixed32_val();
    case AttributeProto::kFixed64Val:
      return static_cast<int64_t>(a.fixed64_val());
    case AttributeProto::kSfixed32Val:
      return a.sfixed32_val();
    case AttributeProto::kSfixed64Val:
      return a.sfixed64_val();
    case AttributeProto::kBoolVal:
      return a.bool_val() ? 1 : 0;
    default:
      return std::nullopt;
  }
}

const AttributeProto* first_attr(const ChakraProtoMsg::Node& node, const std::string& name) {
  for (const auto& attr : node.attr()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

void expect_io(bool present, const ChakraProtoMsg::IOInfo& expected, const IoInfo& got) {
  EXPECT_EQ(got.present, present);
  EXPECT_EQ(got.values, expected.values());
  EXPECT_EQ(got.shapes, expected.shapes());
  EXPECT_EQ(got.types, expected.types());
}

}  // namespace

void expect_attr_matches(const AttributeProto& expected, const Attribute& attr,
                         const std::string& context) {
  SCOPED_TRACE(context + " attr " + expected.name());
  EXPECT_EQ(attr.name, expected.name());
  ASSERT_EQ(static_cast<int>(attr.kind), static_cast<int>(expected.value_case()))
      << attr_kind_name(attr.kind);
  const auto& e = expected;
  switch (e.value_case()) {
    case AttributeProto::VALUE_NOT_SET:
      break;
    case AttributeProto::kDoubleVal:
      EXPECT_TRUE(same_real(attr.real, e.double_val()));
      break;
    case AttributeProto::kFloatVal:
      EXPECT_TRUE(same_real(attr.real, e.float_val()));
      break;
    case AttributeProto::kStringVal:
      EXPECT_EQ(attr.text, e.string_val());
      break;
    case AttributeProto::kBytesVal:
      EXPECT_EQ(attr.text, e.bytes_val());
      break;
    case AttributeProto::kDoubleList:
      expect_reals(e.double_list(), attr.real_list);
      break;
    case AttributeProto::kFloatList:
      expect_reals(e.float_list(), attr.real_list);
      break;
    case AttributeProto::kInt32List:
      expect_ints(e.int32_list(), attr.int_list, true);
      break;
    case AttributeProto::kInt64List:
      expect_ints(e.int64_list(), attr.int_list, true);
      break;
    case AttributeProto::kUint32List:
      expect_ints(e.uint32_list(), attr.int_list, false);
      break;
    case AttributeProto::kUint64List:
      expect_ints(e.uint64_list(), attr.int_list, false);
      break;
    case AttributeProto::kSint32List:
      expect_ints(e.sint32_list(), attr.int_list, true);
      break;
    case AttributeProto::kSint64List:
      expect_ints(e.sint64_list(), attr.int_list, true);
      break;
    case AttributeProto::kFixed32List:
      expect_ints(e.fixed32_list(), attr.int_list, false);
      break;
    case AttributeProto::kFixed64List:
      expect_ints(e.fixed64_list(), attr.int_list, false);
      break;
    case AttributeProto::kSfixed32List:
      expect_ints(e.sfixed32_list(), attr.int_list, true);
      break;
    case AttributeProto::kSfixed64List:
      expect_ints(e.sfixed64_list(), attr.int_list, true);
      break;
    case AttributeProto::kBoolList:
      expect_ints(e.bool_list(), attr.int_list, false);
      break;
    case AttributeProto::kStringList:
      expect_texts(e.string_list(), attr.text_list);
      break;
    case AttributeProto::kBytesList:
      expect_texts(e.bytes_list(), attr.text_list);
      break;
    default: {
      auto value = int_value(e);
      ASSERT_TRUE(value.has_value());
      EXPECT_EQ(static_cast<int64_t>(attr.bits), *value);
    }
  }
  // Value storage that the kind does not use stays empty.
  if (!is_list_kind(attr.kind)) {
    EXPECT_TRUE(attr.int_list.empty() && attr.real_list.empty() && attr.text_list.empty());
  }
}

void expect_node_matches(const ChakraProtoMsg::Node& expected, const TraceNode& node,
                         const std::string& context) {
  SCOPED_TRACE(context);
  EXPECT_EQ(node.id, expected.id());
  EXPECT_EQ(node.name, expected.name());
  EXPECT_EQ(static_cast<int>(node.type), static_cast<int>(expected.type()));
  EXPECT_EQ(node.ctrl_deps,
            std::vector<uint64_t>(expected.ctrl_deps().begin(), expected.ctrl_deps().end()));
  EXPECT_EQ(node.data_deps,
            std::vector<uint64_t>(expected.data_deps().begin(), expected.data_deps().end()));
  EXPECT_EQ(node.start_time_us, expected.start_time_micros());
  EXPECT_EQ(node.duration_us, expected.duration_micros());
  expect_io(expected.has_inputs(), expected.inputs(), node.inputs);
  expect_io(expected.has_outputs(), expected.outputs(), node.outputs);
  ASSERT_EQ(node.attrs.size(), static_cast<size_t>(expected.attr_size()));
  for (int i = 0; i < expected.attr_size(); ++i) {
    expect_attr_matches(expected.attr(i), node.attrs[static_cast<size_t>(i)], context);
  }

  // Well-known attributes, read here the simple way: first occurrence, any integer kind.
  auto int_of = [&](const char* name) -> std::optional<int64_t> {
    const AttributeProto* attr = first_attr(expected, name);
    return attr != nullptr ? int_value(*attr) : std::nullopt;
  };
  bool p2p = expected.type() == ChakraProtoMsg::COMM_SEND_NODE ||
             expected.type() == ChakraProtoMsg::COMM_RECV_NODE;
  EXPECT_EQ(node.is_cpu_op, int_of("is_cpu_op").value_or(0) != 0);
  if (expected.type() == ChakraProtoMsg::COMM_COLL_NODE && int_of("comm_type")) {
    ASSERT_TRUE(node.comm.coll_type.has_value());
    EXPECT_EQ(static_cast<int64_t>(*node.comm.coll_type), *int_of("comm_type"));
  } else {
    EXPECT_FALSE(node.comm.coll_type.has_value());
  }
  std::optional<int64_t> size = int_of("comm_size");
  if (!size && p2p) size = int_of("tensor_size");
  EXPECT_EQ(node.comm.size,
            size ? std::optional<uint64_t>(static_cast<uint64_t>(*size)) : std::nullopt);
  auto as32 = [](std::optional<int64_t> v) {
    return v ? std::optional<int32_t>(static_cast<int32_t>(*v)) : std::nullopt;
  };
  EXPECT_EQ(node.comm.src, as32(int_of("comm_src")));
  EXPECT_EQ(node.comm.dst, as32(int_of("comm_dst")));
  EXPECT_EQ(node.comm.tag, as32(int_of("comm_tag")));
  EXPECT_EQ(node.comm.priority, as32(int_of("comm_priority")));
  std::optional<std::string> pg;
  if (const AttributeProto* attr = first_attr(expected, "pg_name")) {
    pg = attr->string_val();
  } else if (auto group = int_of("comm_group")) {
    pg = std::to_string(*group);
  }
  EXPECT_EQ(node.comm.pg_name, pg);
  std::vector<bool> dims;
  if (const AttributeProto* attr = first_attr(expected, "involved_dim")) {
    for (bool flag : attr->bool_list().values()) dims.push_back(flag);
  }
  EXPECT_EQ(node.comm.involved_dim, dims);
  auto tensor = int_of("tensor_size");
  EXPECT_EQ(node.tensor_size,
            tensor ? std::optional<uint64_t>(static_cast<uint64_t>(*tensor)) : std::nullopt);
  EXPECT_EQ(node.num_ops, int_of("num_ops"));
}

void expect_nodes_equal(const TraceNode& a, const TraceNode& b, const std::string& context) {
  SCOPED_TRACE(context);
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.data_deps, b.data_deps);
  EXPECT_EQ(a.ctrl_deps, b.ctrl_deps);
  EXPECT_EQ(a.start_time_us, b.start_time_us);
  EXPECT_EQ(a.duration_us, b.duration_us);
  EXPECT_EQ(a.is_cpu_op, b.is_cpu_op);
  EXPECT_EQ(a.tensor_size, b.tensor_size);
  EXPECT_EQ(a.num_ops, b.num_ops);
  EXPECT_EQ(a.comm.coll_type, b.comm.coll_type);
  EXPECT_EQ(a.comm.size, b.comm.size);
  EXPECT_EQ(a.comm.src, b.comm.src);
  EXPECT_EQ(a.comm.dst, b.comm.dst);
  EXPECT_EQ(a.comm.tag, b.comm.tag);
  EXPECT_EQ(a.comm.priority, b.comm.priority);
  EXPECT_EQ(a.comm.pg_name, b.comm.pg_name);
  EXPECT_EQ(a.comm.involved_dim, b.comm.involved_dim);
  for (auto [x, y] : {std::pair{&a.inputs, &b.inputs}, std::pair{&a.outputs, &b.outputs}}) {
    EXPECT_EQ(x->present, y->present);
    EXPECT_EQ(x->values, y->values);
    EXPECT_EQ(x->shapes, y->shapes);
    EXPECT_EQ(x->types, y->types);
  }
  EXPECT_EQ(a.record_index, b.record_index);
  ASSERT_EQ(a.attrs.size(), b.attrs.size());
  for (size_t i = 0; i < a.attrs.size(); ++i) {
    const Attribute& x = a.attrs[i];
    const Attribute& y = b.attrs[i];
    SCOPED_TRACE("attr " + x.name);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.bits, y.bits);
    EXPECT_TRUE(same_real(x.real, y.real));
    EXPECT_EQ(x.text, y.text);
    EXPECT_EQ(x.int_list, y.int_list);
    ASSERT_EQ(x.real_list.size(), y.real_list.size());
    for (size_t j = 0; j < x.real_list.size(); ++j) {
      EXPECT_TRUE(same_real(x.real_list[j], y.real_list[j]));
    }
    EXPECT_EQ(x.text_list, y.text_list);
  }
}

std::vector<std::filesystem::path> upstream_et_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(etwire::testing::upstream_traces())) {
    if (entry.is_regular_file() && entry.path().extension() == ".et") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace etwire::trace::testing
