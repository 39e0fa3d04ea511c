#include "trace/node_semantics.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <limits>
#include <string_view>

#include "trace/trace_error.h"

namespace etwire::trace {

namespace {

enum WellKnown : uint8_t {
  kIsCpuOp,
  kCommType,
  kCommSize,
  kCommSrc,
  kCommDst,
  kCommTag,
  kCommPriority,
  kPgName,
  kCommGroup,
  kInvolvedDim,
  kTensorSize,
  kNumOps,
  kOther,
};

// Dispatch on length first: most attribute names are rejected by one size comparison.
WellKnown classify(std::string_view name) {
  switch (name.size()) {
    case 7:
      if (name == "pg_name") return kPgName;
      if (name == "num_ops") return kNumOps;
      break;
    case 8:
      if (name == "comm_src") return kCommSrc;
      if (name == "comm_dst") return kCommDst;
      if (name == "comm_tag") return kCommTag;
      break;
    case 9:
      if (name == "is_cpu_op") return kIsCpuOp;
      if (name == "comm_type") return kCommType;
      if (name == "comm_size") return kCommSize;
      break;
    case 10:
      if (name == "comm_group") return kCommGroup;
      break;
    case 11:
      if (name == "tensor_size") return kTensorSize;
      break;
    case 12:
      if (name == "involved_dim") return kInvolvedDim;
      break;
    case 13:
      if (name == "comm_priority") return kCommPriority;
      break;
    default:
      break;
  }
  return kOther;
}

class Interpreter {
 public:
  Interpreter(TraceNode& node, const std::string& file) : node_(node), file_(file) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw TraceError({file_, node_.record_index, node_.id}, problem);
  }

  [[noreturn]] void wrong_kind(const Attribute& attr, std::string_view expected) const {
    fail(fmt::format("attribute {} has kind {}, expected {}", attr.name, attr_kind_name(attr.kind),
                     expected));
  }

  void require_integer(const Attribute& attr) const {
    if (!is_integer_kind(attr.kind)) wrong_kind(attr, "an integer kind");
  }

  int64_t signed_value(const Attribute& attr) const {
    require_integer(attr);
    if (!is_signed_kind(attr.kind) && attr.bits > static_cast<uint64_t>(INT64_MAX)) {
      fail(fmt::format("attribute {} value {} does not fit in int64", attr.name, attr.bits));
    }
    return static_cast<int64_t>(attr.bits);
  }

  // A byte count: any integer kind, never negative.
  uint64_t byte_count(const Attribute& attr) const {
    require_integer(attr);
    if (is_signed_kind(attr.kind) && static_cast<int64_t>(attr.bits) < 0) {
      fail(fmt::format("{} {} is negative", attr.name, static_cast<int64_t>(attr.bits)));
    }
    return attr.bits;
  }

  void check_comm_bytes(std::string_view what, uint64_t bytes) const {
    if (bytes > kMaxCommBytes) {
      fail(
          fmt::format("{} {} is absurd: more than 1 TiB (2^40 bytes) in one operation, the trace "
                      "is probably corrupt",
                      what, bytes));
    }
  }

  int32_t rank_like(const Attribute& attr) const {
    int64_t value = signed_value(attr);
    if (value < std::numeric_limits<int32_t>::min() ||
        value > std::numeric_limits<int32_t>::max()) {
      fail(fmt::format("attribute {} value {} does not fit in int32", attr.name, value));
    }
    return static_cast<int32_t>(value);
  }

  void apply(int64_t raw_type) {
    if (raw_type < 0 || raw_type >= kNodeTypeCount) {
      fail(fmt::format("node type {} is not a known NodeType (0..{})", raw_type,
                       kNodeTypeCount - 1));
    }
    node_.type = static_cast<NodeType>(raw_type);

    const Attribute* comm_group = nullptr;
    uint32_t seen = 0;
    for (const Attribute& attr : node_.attrs) {
      WellKnown which = classify(attr.name);
      if (which == kOther) continue;
      // The schema allows a name twice; the first occurrence wins.
      uint32_t bit = 1u << which;
      if (seen & bit) continue;
      seen |= bit;
      interpret(which, attr, comm_group);
    }

    CommAttrs& comm = node_.comm;
    bool p2p = node_.type == NodeType::kCommSend || node_.type == NodeType::kCommRecv;
    // Some generators size SEND/RECV nodes with tensor_size only.
    if (p2p && !comm.size && node_.tensor_size) {
      check_comm_bytes("tensor_size", *node_.tensor_size);
      comm.size = node_.tensor_size;
    }
    if (!comm.pg_name && comm_group != nullptr) {
      char text[24];
      auto result = std::to_chars(text, text + sizeof(text), signed_value(*comm_group));
      comm.pg_name.assign(std::string_view(text, static_cast<size_t>(result.ptr - text)));
    }
  }

 private:
  void interpret(WellKnown which, const Attribute& attr, const Attribute*& comm_group) {
    CommAttrs& comm = node_.comm;
    switch (which) {
      case kIsCpuOp:
        require_integer(attr);
        node_.is_cpu_op = attr.bits != 0;
        break;
      case kCommType: {
        // Converters of p2p algorithms put comm_type on SEND/RECV too; it means nothing there.
        if (node_.type != NodeType::kCommColl) break;
        int64_t value = signed_value(attr);
        if (value < 0 || value >= kCollectiveTypeCount) {
          fail(fmt::format("comm_type {} is not a known CollectiveCommType (0..{})", value,
                           kCollectiveTypeCount - 1));
        }
        comm.coll_type = static_cast<CollectiveType>(value);
        break;
      }
      case kCommSize: {
        uint64_t bytes = byte_count(attr);
        check_comm_bytes("comm_size", bytes);
        comm.size = bytes;
        break;
      }
      case kCommSrc:
        comm.src = rank_like(attr);
        break;
      case kCommDst:
        comm.dst = rank_like(attr);
        break;
      case kCommTag:
        comm.tag = rank_like(attr);
        break;
      case kCommPriority:
        comm.priority = rank_like(attr);
        break;
      case kPgName:
        if (attr.kind != AttrKind::kString) wrong_kind(attr, "string_val");
        comm.pg_name.assign(attr.text);
        break;
      case kCommGroup:
        require_integer(attr);
        comm_group = &attr;  // used only when no pg_name is present
        break;
      case kInvolvedDim:
        if (attr.kind != AttrKind::kBoolList) wrong_kind(attr, "bool_list");
        for (uint64_t flag : attr.int_list) comm.involved_dim.push_back(flag != 0);
        break;
      case kTensorSize:
        node_.tensor_size = byte_count(attr);
        break;
      case kNumOps:
        node_.num_ops = signed_value(attr);
        break;
      case kOther:
        break;
    }
  }

  TraceNode& node_;
  const std::string& file_;
};

}  // namespace

void apply_node_semantics(TraceNode& node, int64_t raw_type, const std::string& file) {
  Interpreter(node, file).apply(raw_type);
}

}  // namespace etwire::trace
