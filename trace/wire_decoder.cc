#include "trace/wire_decoder.h"

#include <array>
#include <bit>
#include <string_view>

#include "trace/wire_cursor.h"

namespace etwire::trace::wire {

namespace {

// Field numbers of the messages read here (see chakra_et.proto).
constexpr uint32_t kNodeId = 1;
constexpr uint32_t kNodeName = 2;
constexpr uint32_t kNodeType = 3;
constexpr uint32_t kNodeCtrlDeps = 4;
constexpr uint32_t kNodeDataDeps = 5;
constexpr uint32_t kNodeStartTime = 6;
constexpr uint32_t kNodeDuration = 7;
constexpr uint32_t kNodeInputs = 8;
constexpr uint32_t kNodeOutputs = 9;
constexpr uint32_t kNodeAttr = 10;
constexpr uint32_t kMetadataVersion = 1;
constexpr uint32_t kMetadataAttr = 2;
constexpr uint32_t kAttrName = 1;
constexpr uint32_t kFirstValueField = 3;
constexpr uint32_t kLastValueField = 32;
constexpr uint32_t kListValues = 1;

constexpr WireType scalar_wire_type(AttrKind kind) {
  switch (kind) {
    case AttrKind::kDouble:
    case AttrKind::kFixed64:
    case AttrKind::kSfixed64:
      return kFixed64;
    case AttrKind::kFloat:
    case AttrKind::kFixed32:
    case AttrKind::kSfixed32:
      return kFixed32;
    case AttrKind::kString:
    case AttrKind::kBytes:
      return kLengthDelimited;
    default:
      return kVarint;
  }
}

// The wire type each oneof member of AttributeProto must arrive with, indexed by field number.
// List members are wrapper messages, hence length-delimited.
constexpr std::array<uint8_t, kLastValueField + 1> make_value_wire_types() {
  std::array<uint8_t, kLastValueField + 1> types{};
  for (uint32_t field = kFirstValueField; field <= kLastValueField; ++field) {
    types[field] =
        field % 2 == 0 ? kLengthDelimited : scalar_wire_type(static_cast<AttrKind>(field));
  }
  return types;
}
constexpr auto kValueWireTypes = make_value_wire_types();

void assign(std::string& out, std::string_view in) {
  out.assign(in.data(), in.size());
}

uint64_t sign_extend32(uint32_t value) {
  return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(value)));
}

constexpr bool list_kind(AttrKind kind) {
  return static_cast<int>(kind) % 2 == 0;
}

// Integer-like values as Attribute stores them in `bits` (signed kinds sign-extended). Inlined so
// that a caller with a known kind keeps only its case.
[[gnu::always_inline]] inline uint64_t read_int(Cursor& c, AttrKind scalar) {
  switch (scalar) {
    case AttrKind::kInt32:
      // int32 is sent as a (possibly 10-byte, sign-extended) varint; its low 32 bits are the value.
      return sign_extend32(static_cast<uint32_t>(c.varint()));
    case AttrKind::kUint32:
      return static_cast<uint32_t>(c.varint());
    case AttrKind::kSint32: {
      auto n = static_cast<uint32_t>(c.varint());
      return sign_extend32((n >> 1) ^ (0u - (n & 1u)));
    }
    case AttrKind::kSint64: {
      uint64_t n = c.varint();
      return (n >> 1) ^ (uint64_t{0} - (n & 1u));
    }
    case AttrKind::kFixed32:
      return c.fixed32();
    case AttrKind::kSfixed32:
      return sign_extend32(c.fixed32());
    case AttrKind::kFixed64:
    case AttrKind::kSfixed64:
      return c.fixed64();
    case AttrKind::kBool:
      return c.varint() != 0 ? 1 : 0;
    default:
      return c.varint();  // int64, uint64
  }
}

double read_real(Cursor& c, AttrKind scalar) {
  if (scalar == AttrKind::kFloat) return std::bit_cast<float>(c.fixed32());
  return std::bit_cast<double>(c.fixed64());
}

void clear_value(Attribute& attr) {
  attr.bits = 0;
  attr.real = 0.0;
  attr.text.clear();
  attr.int_list.clear();
  attr.real_list.clear();
  attr.text_list.clear();
}

// One of the *List wrapper messages. Numeric elements may come packed, unpacked or both; they are
// appended in wire order, as libprotobuf does.
void decode_list(const uint8_t* begin, const uint8_t* end, const uint8_t* base, Attribute& attr,
                 AttrKind list_kind) {
  Cursor list(begin, end, base);
  auto scalar = static_cast<AttrKind>(static_cast<int>(list_kind) - 1);
  const uint32_t element_tag = make_tag(kListValues, scalar_wire_type(scalar));
  constexpr uint32_t kPackedTag = make_tag(kListValues, kLengthDelimited);
  const bool text = scalar == AttrKind::kString || scalar == AttrKind::kBytes;
  const bool real = scalar == AttrKind::kDouble || scalar == AttrKind::kFloat;
  auto read_one = [&](Cursor& c) {
    if (real) {
      attr.real_list.push_back(read_real(c, scalar));
    } else {
      attr.int_list.push_back(read_int(c, scalar));
    }
  };
  while (!list.at_end()) {
    uint32_t tag = list.tag();
    if (tag == element_tag) {
      if (text) {
        attr.text_list.push_back(list.bytes());
      } else {
        read_one(list);
      }
    } else if (tag == kPackedTag && !text) {
      Slice s = list.message();
      Cursor packed(s.begin, s.end, base);
      while (!packed.at_end()) read_one(packed);
    } else {
      list.skip(tag);
    }
  }
}

void decode_value(Cursor& c, Attribute& attr, AttrKind kind) {
  // A oneof: a different member replaces the value; the same member again overwrites a scalar and
  // merges (appends to) a list, which is what libprotobuf's parser does.
  if (attr.kind != kind) {
    // A fresh attribute (kind none) holds no value yet: nothing to clear.
    if (attr.kind != AttrKind::kNone) clear_value(attr);
    attr.kind = kind;
  }
  switch (kind) {
    case AttrKind::kDouble:
    case AttrKind::kFloat:
      attr.real = read_real(c, kind);
      return;
    case AttrKind::kString:
    case AttrKind::kBytes:
      assign(attr.text, c.bytes());
      return;
    default:
      break;
  }
  if (list_kind(kind)) {
    Slice s = c.message();
    decode_list(s.begin, s.end, c.base(), attr, kind);
  } else {
    attr.bits = read_int(c, kind);
  }
}

// `attr` is fresh (kind none), as AttributeList::append() returns it.
void decode_attribute(const uint8_t* begin, const uint8_t* end, const uint8_t* base,
                      Attribute& attr) {
  Cursor c(begin, end, base);
  // Writers put the name first and the value right after it. The value kinds that well-known
  // attributes use are read here directly; the loop below handles everything else, in any order.
  if (c.take(make_tag(kAttrName, kLengthDelimited))) assign(attr.name, c.bytes());
  if (c.take(make_tag(static_cast<uint32_t>(AttrKind::kInt64), kVarint))) {
    attr.kind = AttrKind::kInt64;
    attr.bits = c.varint();
  } else if (c.take(make_tag(static_cast<uint32_t>(AttrKind::kInt32), kVarint))) {
    attr.kind = AttrKind::kInt32;
    attr.bits = read_int(c, AttrKind::kInt32);
  } else if (c.take(make_tag(static_cast<uint32_t>(AttrKind::kUint64), kVarint))) {
    attr.kind = AttrKind::kUint64;
    attr.bits = c.varint();
  }
  while (!c.at_end()) {
    uint32_t tag = c.tag();
    uint32_t field = tag >> 3;
    if (tag == make_tag(kAttrName, kLengthDelimited)) {
      assign(attr.name, c.bytes());
    } else if (field >= kFirstValueField && field <= kLastValueField &&
               (tag & 7) == kValueWireTypes[field]) {
      decode_value(c, attr, static_cast<AttrKind>(field));
    } else {
      c.skip(tag);  // doc_string, unknown fields, or a known field with a foreign wire type
    }
  }
}

// The embedded message at the parent's position. Its bounds are passed as two pointers: an
// aggregate argument would make a round trip through memory on every call.
inline void decode_attribute(Cursor& parent, Attribute& attr) {
  Slice s = parent.message();
  decode_attribute(s.begin, s.end, parent.base(), attr);
}

// A singular message field that occurs twice is merged, not replaced: a second `inputs` overwrites
// only the fields it carries. Presence is what the field's existence says.
void decode_io(const uint8_t* begin, const uint8_t* end, const uint8_t* base, IoInfo& io) {
  Cursor c(begin, end, base);
  io.present = true;
  while (!c.at_end()) {
    uint32_t tag = c.tag();
    switch (tag) {
      case make_tag(1, kLengthDelimited):
        assign(io.values, c.bytes());
        break;
      case make_tag(2, kLengthDelimited):
        assign(io.shapes, c.bytes());
        break;
      case make_tag(3, kLengthDelimited):
        assign(io.types, c.bytes());
        break;
      default:
        c.skip(tag);
    }
  }
}

inline void decode_io(Cursor& parent, IoInfo& io) {
  Slice s = parent.message();
  decode_io(s.begin, s.end, parent.base(), io);
}

void read_packed_varints(const uint8_t* begin, const uint8_t* end, const uint8_t* base,
                         std::vector<uint64_t>& out) {
  Cursor c(begin, end, base);
  while (!c.at_end()) out.push_back(c.varint());
}

inline void read_packed_varints(Cursor& parent, std::vector<uint64_t>& out) {
  Slice s = parent.message();
  read_packed_varints(s.begin, s.end, parent.base(), out);
}

}  // namespace

namespace {

// One Node field, whatever its position.
void node_field(Cursor& c, uint32_t tag, TraceNode& out, NodeDecodeState& state) {
  switch (tag) {
    case make_tag(kNodeId, kVarint):
      out.id = c.varint();
      state.id_seen = true;
      break;
    case make_tag(kNodeName, kLengthDelimited):
      assign(out.name, c.bytes());
      break;
    case make_tag(kNodeType, kVarint):
      state.raw_type = static_cast<int32_t>(static_cast<uint32_t>(c.varint()));
      break;
    case make_tag(kNodeCtrlDeps, kVarint):
      out.ctrl_deps.push_back(c.varint());
      break;
    case make_tag(kNodeCtrlDeps, kLengthDelimited):
      read_packed_varints(c, out.ctrl_deps);
      break;
    case make_tag(kNodeDataDeps, kVarint):
      out.data_deps.push_back(c.varint());
      break;
    case make_tag(kNodeDataDeps, kLengthDelimited):
      read_packed_varints(c, out.data_deps);
      break;
    case make_tag(kNodeStartTime, kVarint):
      out.start_time_us = c.varint();
      break;
    case make_tag(kNodeDuration, kVarint):
      out.duration_us = c.varint();
      break;
    case make_tag(kNodeInputs, kLengthDelimited):
      decode_io(c, out.inputs);
      break;
    case make_tag(kNodeOutputs, kLengthDelimited):
      decode_io(c, out.outputs);
      break;
    case make_tag(kNodeAttr, kLengthDelimited):
      decode_attribute(c, out.attrs.append());
      break;
    default:
      c.skip(tag);
  }
}

}  // namespace

void decode_node(const uint8_t* data, size_t size, TraceNode& out, NodeDecodeState& state) {
  Cursor c(data, data + size, data);
  // Serializers write fields in ascending number order with repeated ones grouped, so most records
  // are read by this straight run of well-predicted tests instead of a jump per field. Whatever
  // does not fit the order (unknown fields, repeats, foreign wire types) is left to the general
  // loop below, which applies the same rules to the rest of the record.
  if (c.take(make_tag(kNodeId, kVarint))) {
    out.id = c.varint();
    state.id_seen = true;
  }
  if (c.take(make_tag(kNodeName, kLengthDelimited))) assign(out.name, c.bytes());
  if (c.take(make_tag(kNodeType, kVarint))) {
    state.raw_type = static_cast<int32_t>(static_cast<uint32_t>(c.varint()));
  }
  if (c.take(make_tag(kNodeCtrlDeps, kLengthDelimited))) {
    read_packed_varints(c, out.ctrl_deps);
  }
  if (c.take(make_tag(kNodeDataDeps, kLengthDelimited))) {
    read_packed_varints(c, out.data_deps);
  }
  if (c.take(make_tag(kNodeStartTime, kVarint))) out.start_time_us = c.varint();
  if (c.take(make_tag(kNodeDuration, kVarint))) out.duration_us = c.varint();
  while (c.take(make_tag(kNodeAttr, kLengthDelimited))) {
    decode_attribute(c, out.attrs.append());
  }
  while (!c.at_end()) {
    uint32_t tag = c.tag();
    node_field(c, tag, out, state);
  }
}

void decode_metadata(const uint8_t* data, size_t size, TraceMetadata& out) {
  out.version.clear();
  out.attrs.clear();
  Cursor c(data, data + size, data);
  while (!c.at_end()) {
    uint32_t tag = c.tag();
    switch (tag) {
      case make_tag(kMetadataVersion, kLengthDelimited):
        assign(out.version, c.bytes());
        break;
      case make_tag(kMetadataAttr, kLengthDelimited):
        decode_attribute(c, out.attrs.append());
        break;
      default:
        c.skip(tag);
    }
  }
}

}  // namespace etwire::trace::wire
