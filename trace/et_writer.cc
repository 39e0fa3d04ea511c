#include "trace/et_writer.h"

#include <fmt/format.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "chakra_et.pb.h"

namespace etwire::trace {

namespace {

namespace pb = ChakraProtoMsg;

// Values are stored in Attribute as described in attribute.h; this puts them back into the oneof
// member of their kind.
void to_proto(const Attribute& attr, pb::AttributeProto& out) {
  out.set_name(attr.name);
  const auto i32 = [](uint64_t bits) { return static_cast<int32_t>(static_cast<int64_t>(bits)); };
  const auto i64 = [](uint64_t bits) { return static_cast<int64_t>(bits); };
  const auto u32 = [](uint64_t bits) { return static_cast<uint32_t>(bits); };
  switch (attr.kind) {
    case AttrKind::kNone:
      break;
    case AttrKind::kDouble:
      out.set_double_val(attr.real);
      break;
    case AttrKind::kFloat:
      out.set_float_val(static_cast<float>(attr.real));
      break;
    case AttrKind::kInt32:
      out.set_int32_val(i32(attr.bits));
      break;
    case AttrKind::kInt64:
      out.set_int64_val(i64(attr.bits));
      break;
    case AttrKind::kUint32:
      out.set_uint32_val(u32(attr.bits));
      break;
    case AttrKind::kUint64:
      out.set_uint64_val(attr.bits);
      break;
    case AttrKind::kSint32:
      out.set_sint32_val(i32(attr.bits));
      break;
    case AttrKind::kSint64:
      out.set_sint64_val(i64(attr.bits));
      break;
    case AttrKind::kFixed32:
      out.set_fixed32_val(u32(attr.bits));
      break;
    case AttrKind::kFixed64:
      out.set_fixed64_val(attr.bits);
      break;
    case AttrKind::kSfixed32:
      out.set_sfixed32_val(i32(attr.bits));
      break;
    case AttrKind::kSfixed64:
      out.set_sfixed64_val(i64(attr.bits));
      break;
    case AttrKind::kBool:
      out.set_bool_val(attr.bits != 0);
      break;
    case AttrKind::kString:
      out.set_string_val(attr.text);
      break;
    case AttrKind::kBytes:
      out.set_bytes_val(attr.text);
      break;
    case AttrKind::kDoubleList:
      for (double v : attr.real_list) out.mutable_double_list()->add_values(v);
      break;
    case AttrKind::kFloatList:
      for (double v : attr.real_list) out.mutable_float_list()->add_values(static_cast<float>(v));
      break;
    case AttrKind::kInt32List:
      for (uint64_t v : attr.int_list) out.mutable_int32_list()->add_values(i32(v));
      break;
    case AttrKind::kInt64List:
      for (uint64_t v : attr.int_list) out.mutable_int64_list()->add_values(i64(v));
      break;
    case AttrKind::kUint32List:
      for (uint64_t v : attr.int_list) out.mutable_uint32_list()->add_values(u32(v));
      break;
    case AttrKind::kUint64List:
      for (uint64_t v : attr.int_list) out.mutable_uint64_list()->add_values(v);
      break;
    case AttrKind::kSint32List:
      for (uint64_t v : attr.int_list) out.mutable_sint32_list()->add_values(i32(v));
      break;
    case AttrKind::kSint64List:
      for (uint64_t v : attr.int_list) out.mutable_sint64_list()->add_values(i64(v));
      break;
    case AttrKind::kFixed32List:
      for (uint64_t v : attr.int_list) out.mutable_fixed32_list()->add_values(u32(v));
      break;
    case AttrKind::kFixed64List:
      for (uint64_t v : attr.int_list) out.mutable_fixed64_list()->add_values(v);
      break;
    case AttrKind::kSfixed32List:
      for (uint64_t v : attr.int_list) out.mutable_sfixed32_list()->add_values(i32(v));
      break;
    case AttrKind::kSfixed64List:
      for (uint64_t v : attr.int_list) out.mutable_sfixed64_list()->add_values(i64(v));
      break;
    case AttrKind::kBoolList:
      for (uint64_t v : attr.int_list) out.mutable_bool_list()->add_values(v != 0);
      break;
    case AttrKind::kStringList:
      for (const auto& v : attr.text_list) out.mutable_string_list()->add_values(v);
      break;
    case AttrKind::kBytesList:
      for (const auto& v : attr.text_list) out.mutable_bytes_list()->add_values(v);
      break;
  }
}

void to_proto(const TraceNode& node, pb::Node& out) {
  out.Clear();
  out.set_id(node.id);
  out.set_name(node.name);
  out.set_type(static_cast<pb::NodeType>(node.type));
  for (uint64_t dep : node.ctrl_deps) out.add_ctrl_deps(dep);
  for (uint64_t dep : node.data_deps) out.add_data_deps(dep);
  out.set_start_time_micros(node.start_time_us);
  out.set_duration_micros(node.duration_us);
  if (node.inputs.present) {
    out.mutable_inputs()->set_values(node.inputs.values);
    out.mutable_inputs()->set_shapes(node.inputs.shapes);
    out.mutable_inputs()->set_types(node.inputs.types);
  }
  if (node.outputs.present) {
    out.mutable_outputs()->set_values(node.outputs.values);
    out.mutable_outputs()->set_shapes(node.outputs.shapes);
    out.mutable_outputs()->set_types(node.outputs.types);
  }
  for (const Attribute& attr : node.attrs) to_proto(attr, *out.add_attr());
}

// Appends the delimited-record framing: a base-128 varint length, then the body.
void append_record(const std::string& body, std::string& out) {
  uint64_t length = body.size();
  while (length >= 0x80) {
    out.push_back(static_cast<char>((length & 0x7F) | 0x80));
    length >>= 7;
  }
  out.push_back(static_cast<char>(length));
  out += body;
}

class BinaryWriter final : public TraceWriter {
 public:
  BinaryWriter(std::string path, bool gzip, const TraceMetadata& metadata)
      : path_(std::move(path)), gzip_(gzip) {
    if (gzip_) {
      gz_ = gzopen(path_.c_str(), "wb6");
      if (gz_ == nullptr) fail("cannot create file");
    } else {
      file_ = std::fopen(path_.c_str(), "wb");
      if (file_ == nullptr) fail(std::strerror(errno));
    }
    pb::GlobalMetadata meta;
    meta.set_version(metadata.version);
    for (const Attribute& attr : metadata.attrs) to_proto(attr, *meta.add_attr());
    meta.SerializeToString(&body_);
    append_record(body_, buffer_);
  }

  ~BinaryWriter() override {
    if (file_ != nullptr) std::fclose(file_);
    if (gz_ != nullptr) gzclose(gz_);
  }

  void write(const TraceNode& node) override {
    to_proto(node, message_);
    message_.SerializeToString(&body_);
    append_record(body_, buffer_);
    if (buffer_.size() >= kFlushBytes) flush();
  }

  void close() override {
    flush();
    if (file_ != nullptr) {
      int rc = std::fclose(file_);
      file_ = nullptr;
      if (rc != 0) fail(std::strerror(errno));
    }
    if (gz_ != nullptr) {
      int rc = gzclose(gz_);
      gz_ = nullptr;
      if (rc != Z_OK) fail("gzip close failed");
    }
  }

 private:
  static constexpr size_t kFlushBytes = 1 << 20;

  void flush() {
    if (buffer_.empty()) return;
    bool ok = gzip_ ? gzwrite(gz_, buffer_.data(), static_cast<unsigned>(buffer_.size())) ==
                          static_cast<int>(buffer_.size())
                    : std::fwrite(buffer_.data(), 1, buffer_.size(), file_) == buffer_.size();
    if (!ok) fail("write failed (disk full?)");
    buffer_.clear();
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw std::runtime_error(fmt::format("{}: {}", path_, why));
  }

  std::string path_;
  bool gzip_;
  std::FILE* file_ = nullptr;
  gzFile gz_ = nullptr;
  pb::Node message_;
  std::string body_;
  std::string buffer_;
};

// The chakra feeder JSON: {"workload_graph": [ {Id, Name, NodeType, data_deps, runtime,
// is_cpu_op, comm_*}, ... ]}. Holds the document in memory: meant for small traces.
class FeederJsonWriter final : public TraceWriter {
 public:
  explicit FeederJsonWriter(std::string path) : path_(std::move(path)) {
    file_ = std::fopen(path_.c_str(), "wb");
    if (file_ == nullptr) {
      throw std::runtime_error(fmt::format("{}: {}", path_, std::strerror(errno)));
    }
  }
  ~FeederJsonWriter() override {
    if (file_ != nullptr) std::fclose(file_);
  }

  void write(const TraceNode& node) override {
    nlohmann::ordered_json j;
    j["Id"] = node.id;
    j["Name"] = node.name;
    j["NodeType"] = static_cast<int>(node.type);
    if (!node.ctrl_deps.empty()) j["ctrlDeps"] = node.ctrl_deps;
    j["data_deps"] = node.data_deps;
    j["runtime"] = node.duration_us;
    j["is_cpu_op"] = node.is_cpu_op;
    if (node.comm.coll_type) j["comm_type"] = static_cast<int>(*node.comm.coll_type);
    if (node.comm.size) j["comm_size"] = *node.comm.size;
    if (node.comm.src) j["comm_src"] = *node.comm.src;
    if (node.comm.dst) j["comm_dst"] = *node.comm.dst;
    if (node.comm.tag) j["comm_tag"] = *node.comm.tag;
    if (node.comm.priority) j["comm_priority"] = *node.comm.priority;
    if (node.tensor_size) j["tensor_size"] = *node.tensor_size;
    nodes_.push_back(std::move(j));
  }

  void close() override {
    if (file_ == nullptr) return;
    nlohmann::ordered_json doc;
    doc["workload_graph"] = std::move(nodes_);
    std::string text = doc.dump(2) + "\n";
    bool ok = std::fwrite(text.data(), 1, text.size(), file_) == text.size();
    ok = std::fclose(file_) == 0 && ok;
    file_ = nullptr;
    if (!ok) throw std::runtime_error(fmt::format("{}: write failed", path_));
  }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  nlohmann::ordered_json::array_t nodes_;
};

}  // namespace

std::unique_ptr<TraceWriter> open_trace_writer(const std::string& path, WriteFormat format,
                                               const TraceMetadata& metadata) {
  switch (format) {
    case WriteFormat::kBinary:
      return std::make_unique<BinaryWriter>(path, false, metadata);
    case WriteFormat::kBinaryGzip:
      return std::make_unique<BinaryWriter>(path, true, metadata);
    case WriteFormat::kFeederJson:
      return std::make_unique<FeederJsonWriter>(path);
  }
  throw std::logic_error("unknown trace write format");
}

}  // namespace etwire::trace
