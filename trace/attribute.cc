#include "trace/attribute.h"

#include <fmt/format.h>

#include <limits>

namespace etwire::trace {

std::string_view attr_kind_name(AttrKind kind) {
  switch (kind) {
    case AttrKind::kNone:
      return "none";
    case AttrKind::kDouble:
      return "double_val";
    case AttrKind::kDoubleList:
      return "double_list";
    case AttrKind::kFloat:
      return "float_val";
    case AttrKind::kFloatList:
      return "float_list";
    case AttrKind::kInt32:
      return "int32_val";
    case AttrKind::kInt32List:
      return "int32_list";
    case AttrKind::kInt64:
      return "int64_val";
    case AttrKind::kInt64List:
      return "int64_list";
    case AttrKind::kUint32:
      return "uint32_val";
    case AttrKind::kUint32List:
      return "uint32_list";
    case AttrKind::kUint64:
      return "uint64_val";
    case AttrKind::kUint64List:
      return "uint64_list";
    case AttrKind::kSint32:
      return "sint32_val";
    case AttrKind::kSint32List:
      return "sint32_list";
    case AttrKind::kSint64:
      return "sint64_val";
    case AttrKind::kSint64List:
      return "sint64_list";
    case AttrKind::kFixed32:
      return "fixed32_val";
    case AttrKind::kFixed32List:
      return "fixed32_list";
    case AttrKind::kFixed64:
      return "fixed64_val";
    case AttrKind::kFixed64List:
      return "fixed64_list";
    case AttrKind::kSfixed32:
      return "sfixed32_val";
    case AttrKind::kSfixed32List:
      return "sfixed32_list";
    case AttrKind::kSfixed64:
      return "sfixed64_val";
    case AttrKind::kSfixed64List:
      return "sfixed64_list";
    case AttrKind::kBool:
      return "bool_val";
    case AttrKind::kBoolList:
      return "bool_list";
    case AttrKind::kString:
      return "string_val";
    case AttrKind::kStringList:
      return "string_list";
    case AttrKind::kBytes:
      return "bytes_val";
    case AttrKind::kBytesList:
      return "bytes_list";
  }
  return "unknown";
}

void Attribute::reset() {
  name.clear();
  kind = AttrKind::kNone;
  bits = 0;
  real = 0.0;
  text.clear();
  int_list.clear();
  real_list.clear();
  text_list.clear();
}

std::optional<int64_t> Attribute::as_int64() const {
  if (!is_integer_kind(kind)) return std::nullopt;
  if (is_signed_kind(kind)) return static_cast<int64_t>(bits);
  if (bits > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return static_cast<int64_t>(bits);
}

std::optional<uint64_t> Attribute::as_uint64() const {
  if (!is_integer_kind(kind)) return std::nullopt;
  if (is_signed_kind(kind) && static_cast<int64_t>(bits) < 0) return std::nullopt;
  return bits;
}

std::optional<double> Attribute::as_double() const {
  if (kind == AttrKind::kDouble || kind == AttrKind::kFloat) return real;
  if (!is_integer_kind(kind)) return std::nullopt;
  if (is_signed_kind(kind)) return static_cast<double>(static_cast<int64_t>(bits));
  return static_cast<double>(bits);
}

std::optional<std::string_view> Attribute::as_text() const {
  if (kind == AttrKind::kString || kind == AttrKind::kBytes) return std::string_view(text);
  return std::nullopt;
}

namespace {

std::string int_text(AttrKind scalar_kind, uint64_t value) {
  if (scalar_kind == AttrKind::kBool) return value != 0 ? "true" : "false";
  if (is_signed_kind(scalar_kind)) return std::to_string(static_cast<int64_t>(value));
  return std::to_string(value);
}

}  // namespace

std::string Attribute::value_to_string() const {
  if (kind == AttrKind::kNone) return "(no value)";
  if (kind == AttrKind::kDouble || kind == AttrKind::kFloat) return fmt::format("{}", real);
  if (kind == AttrKind::kString || kind == AttrKind::kBytes) return fmt::format("\"{}\"", text);
  if (!is_list_kind(kind)) return int_text(kind, bits);
  // The scalar kind of a list kind is the field number before it.
  auto scalar = static_cast<AttrKind>(static_cast<int>(kind) - 1);
  std::string out = "[";
  auto add = [&out](const std::string& item) {
    if (out.size() > 1) out += ", ";
    out += item;
  };
  if (scalar == AttrKind::kDouble || scalar == AttrKind::kFloat) {
    for (double v : real_list) add(fmt::format("{}", v));
  } else if (scalar == AttrKind::kString || scalar == AttrKind::kBytes) {
    for (const auto& v : text_list) add(fmt::format("\"{}\"", v));
  } else {
    for (uint64_t v : int_list) add(int_text(scalar, v));
  }
  return out + "]";
}

Attribute& AttributeList::append() {
  if (count_ == storage_.size()) storage_.emplace_back();
  Attribute& attr = storage_[count_++];
  attr.reset();
  return attr;
}

const Attribute* AttributeList::find(std::string_view name) const {
  for (size_t i = 0; i < count_; ++i) {
    if (storage_[i].name == name) return &storage_[i];
  }
  return nullptr;
}

}  // namespace etwire::trace
