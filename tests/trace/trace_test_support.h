// Helpers shared by the trace reader tests: building .et bytes from libprotobuf messages (an
// encoder independent of the decoder under test), writing plain and gzip files, reading a whole
// trace, and comparing decoded nodes with the messages libprotobuf parsed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "chakra_et.pb.h"
#include "trace/node.h"
#include "trace/node_source.h"

namespace etwire::trace::testing {

// Base-128 varint, as protobuf and the record framing use.
std::string varint(uint64_t value);
// One record: the varint length of `body`, then `body`.
std::string frame(const std::string& body);
std::string frame(const google::protobuf::MessageLite& message);
// A whole trace: the metadata record, then each node.
std::string trace_bytes(const ChakraProtoMsg::GlobalMetadata& metadata,
                        const std::vector<ChakraProtoMsg::Node>& nodes);

void write_file(const std::filesystem::path& path, const std::string& bytes);
// gzip-compresses `bytes` with zlib's gz* API (a real gzip file with header and trailer).
void write_gzip(const std::filesystem::path& path, const std::string& bytes);
std::string gzip_bytes(const std::string& bytes);
std::string read_file(const std::filesystem::path& path);

// Frames a file's records (metadata first) with plain code independent of the reader.
struct RawRecords {
  std::vector<std::string> bodies;  // bodies[0] is the GlobalMetadata
  bool ok = true;
};
RawRecords split_records(const std::string& bytes);

// Every node of a file, read through open_node_source.
std::vector<TraceNode> read_all(const std::string& path, TraceFormat format = TraceFormat::kAuto);

// Attribute builders for the common kinds.
ChakraProtoMsg::AttributeProto attr_int64(const std::string& name, int64_t value);
ChakraProtoMsg::AttributeProto attr_int32(const std::string& name, int32_t value);
ChakraProtoMsg::AttributeProto attr_uint64(const std::string& name, uint64_t value);
ChakraProtoMsg::AttributeProto attr_bool(const std::string& name, bool value);
ChakraProtoMsg::AttributeProto attr_string(const std::string& name, const std::string& value);

// A node with the given id, type and attributes.
ChakraProtoMsg::Node make_node(uint64_t id, ChakraProtoMsg::NodeType type,
                               std::vector<ChakraProtoMsg::AttributeProto> attrs = {},
                               std::vector<uint64_t> data_deps = {});

// Expects `attr` to hold exactly what libprotobuf decoded into `expected`.
void expect_attr_matches(const ChakraProtoMsg::AttributeProto& expected, const Attribute& attr,
                         const std::string& context);
// Expects every raw field and attribute of `node` to match `expected`, and the decoded comm fields
// to match an independent reading of the attributes.
void expect_node_matches(const ChakraProtoMsg::Node& expected, const TraceNode& node,
                         const std::string& context);
// Expects two decoded nodes to be identical, field by field.
void expect_nodes_equal(const TraceNode& a, const TraceNode& b, const std::string& context);

// All .et files under the upstream trace collection, sorted.
std::vector<std::filesystem::path> upstream_et_files();

}  // namespace etwire::trace::testing
