#include "trace/proto_convert.h"

#include "chakra_et.pb.h"
#include "trace/node_semantics.h"

namespace etwire::trace {

namespace {

using ChakraProtoMsg::AttributeProto;

uint64_t sign_extend(int64_t value) {
  return static_cast<uint64_t>(value);
}

template <typename List, typename Convert>
void copy_ints(const List& list, std::vector<uint64_t>& out, Convert convert) {
  for (auto value : list.values()) out.push_back(convert(value));
}

}  // namespace

namespace {

uint64_t as_signed(int64_t v) {
  return sign_extend(v);
}
uint64_t as_unsigned(uint64_t v) {
  return v;
}

// The value of a scalar kind; false for a list or no value.
bool scalar_from_proto(const AttributeProto& in, Attribute& out) {
  switch (in.value_case()) {
    case AttributeProto::kDoubleVal:
      out.real = in.double_val();
      break;
    case AttributeProto::kFloatVal:
      out.real = in.float_val();
      break;
    case AttributeProto::kInt32Val:
      out.bits = as_signed(in.int32_val());
      break;
    case AttributeProto::kInt64Val:
      out.bits = as_signed(in.int64_val());
      break;
    case AttributeProto::kUint32Val:
      out.bits = in.uint32_val();
      break;
    case AttributeProto::kUint64Val:
      out.bits = in.uint64_val();
      break;
    case AttributeProto::kSint32Val:
      out.bits = as_signed(in.sint32_val());
      break;
    case AttributeProto::kSint64Val:
      out.bits = as_signed(in.sint64_val());
      break;
    case AttributeProto::kFixed32Val:
      out.bits = in.fixed32_val();
      break;
    case AttributeProto::kFixed64Val:
      out.bits = in.fixed64_val();
      break;
    case AttributeProto::kSfixed32Val:
      out.bits = as_signed(in.sfixed32_val());
      break;
    case AttributeProto::kSfixed64Val:
      out.bits = as_signed(in.sfixed64_val());
      break;
    case AttributeProto::kBoolVal:
      out.bits = in.bool_val() ? 1 : 0;
      break;
    case AttributeProto::kStringVal:
      out.text = in.string_val();
      break;
    case AttributeProto::kBytesVal:
      out.text = in.bytes_val();
      break;
    default:
      return false;
  }
  return true;
}

// The values of a list kind.
void list_from_proto(const AttributeProto& in, Attribute& out) {
  switch (in.value_case()) {
    case AttributeProto::kDoubleList:
      out.real_list.assign(in.double_list().values().begin(), in.double_list().values().end());
      break;
    case AttributeProto::kFloatList:
      out.real_list.assign(in.float_list().values().begin(), in.float_list().values().end());
      break;
    case AttributeProto::kInt32List:
      copy_ints(in.int32_list(), out.int_list, as_signed);
      break;
    case AttributeProto::kInt64List:
      copy_ints(in.int64_list(), out.int_list, as_signed);
      break;
    case AttributeProto::kUint32List:
      copy_ints(in.uint32_list(), out.int_list, as_unsigned);
      break;
    case AttributeProto::kUint64List:
      copy_ints(in.uint64_list(), out.int_list, as_unsigned);
      break;
    case AttributeProto::kSint32List:
      copy_ints(in.sint32_list(), out.int_list, as_signed);
      break;
    case AttributeProto::kSint64List:
      copy_ints(in.sint64_list(), out.int_list, as_signed);
      break;
    case AttributeProto::kFixed32List:
      copy_ints(in.fixed32_list(), out.int_list, as_unsigned);
      break;
    case AttributeProto::kFixed64List:
      copy_ints(in.fixed64_list(), out.int_list, as_unsigned);
      break;
    case AttributeProto::kSfixed32List:
      copy_ints(in.sfixed32_list(), out.int_list, as_signed);
      break;
    case AttributeProto::kSfixed64List:
      copy_ints(in.sfixed64_list(), out.int_list, as_signed);
      break;
    case AttributeProto::kBoolList:
      copy_ints(in.bool_list(), out.int_list, [](bool v) { return uint64_t{v ? 1u : 0u}; });
      break;
    case AttributeProto::kStringList:
      out.text_list.assign(in.string_list().values().begin(), in.string_list().values().end());
      break;
    case AttributeProto::kBytesList:
      out.text_list.assign(in.bytes_list().values().begin(), in.bytes_list().values().end());
      break;
    default:
      break;
  }
}

}  // namespace

void attribute_from_proto(const AttributeProto& in, Attribute& out) {
  out.reset();
  out.name = in.name();
  // The oneof case numbers are the field numbers, which AttrKind mirrors.
  out.kind = static_cast<AttrKind>(in.value_case());
  if (!scalar_from_proto(in, out)) list_from_proto(in, out);
}

void metadata_from_proto(const ChakraProtoMsg::GlobalMetadata& in, TraceMetadata& out) {
  out.version = in.version();
  out.attrs.clear();
  for (const auto& attr : in.attr()) attribute_from_proto(attr, out.attrs.append());
}

void node_from_proto(const ChakraProtoMsg::Node& in, uint64_t record_index, const std::string& file,
                     TraceNode& out) {
  out.reset();
  out.record_index = record_index;
  out.id = in.id();
  out.name = in.name();
  out.data_deps.assign(in.data_deps().begin(), in.data_deps().end());
  out.ctrl_deps.assign(in.ctrl_deps().begin(), in.ctrl_deps().end());
  out.start_time_us = in.start_time_micros();
  out.duration_us = in.duration_micros();
  auto copy_io = [](bool present, const ChakraProtoMsg::IOInfo& io, IoInfo& dst) {
    if (!present) return;
    dst.present = true;
    dst.values = io.values();
    dst.shapes = io.shapes();
    dst.types = io.types();
  };
  copy_io(in.has_inputs(), in.inputs(), out.inputs);
  copy_io(in.has_outputs(), in.outputs(), out.outputs);
  for (const auto& attr : in.attr()) attribute_from_proto(attr, out.attrs.append());
  apply_node_semantics(out, static_cast<int64_t>(in.type()), file);
}

}  // namespace etwire::trace
