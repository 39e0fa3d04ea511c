// A Chakra node attribute as plain data: a name and at most one value of one of the schema's
// thirty value kinds. Nothing here depends on protobuf.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/reusable_text.h"

namespace etwire::trace {

// The value kinds of AttributeProto's oneof, numbered as their protobuf field numbers so that a
// decoder can map a field number to a kind without a table. kNone = no value was set.
enum class AttrKind : uint8_t {
  kNone = 0,
  kDouble = 3,
  kDoubleList = 4,
  kFloat = 5,
  kFloatList = 6,
  kInt32 = 7,
  kInt32List = 8,
  kInt64 = 9,
  kInt64List = 10,
  kUint32 = 11,
  kUint32List = 12,
  kUint64 = 13,
  kUint64List = 14,
  kSint32 = 15,
  kSint32List = 16,
  kSint64 = 17,
  kSint64List = 18,
  kFixed32 = 19,
  kFixed32List = 20,
  kFixed64 = 21,
  kFixed64List = 22,
  kSfixed32 = 23,
  kSfixed32List = 24,
  kSfixed64 = 25,
  kSfixed64List = 26,
  kBool = 27,
  kBoolList = 28,
  kString = 29,
  kStringList = 30,
  kBytes = 31,
  kBytesList = 32,
};

// Schema name of a kind ("int64_val", "bool_list", "none").
std::string_view attr_kind_name(AttrKind kind);
// Inline: the readers ask these for every attribute of every node.
constexpr bool is_list_kind(AttrKind kind) {
  const auto n = static_cast<int>(kind);
  return n >= 4 && n % 2 == 0;
}

// True for the scalar integer kinds and bool.
constexpr bool is_integer_kind(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt32:
    case AttrKind::kInt64:
    case AttrKind::kUint32:
    case AttrKind::kUint64:
    case AttrKind::kSint32:
    case AttrKind::kSint64:
    case AttrKind::kFixed32:
    case AttrKind::kFixed64:
    case AttrKind::kSfixed32:
    case AttrKind::kSfixed64:
    case AttrKind::kBool:
      return true;
    default:
      return false;
  }
}

// True for the kinds whose values are signed integers (int32/64, sint32/64, sfixed32/64).
constexpr bool is_signed_kind(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt32:
    case AttrKind::kInt64:
    case AttrKind::kSint32:
    case AttrKind::kSint64:
    case AttrKind::kSfixed32:
    case AttrKind::kSfixed64:
      return true;
    default:
      return false;
  }
}

struct Attribute {
  std::string name;
  AttrKind kind = AttrKind::kNone;
  // Scalar integers and bool: the value's bits. Signed kinds are stored sign-extended, so
  // static_cast<int64_t>(bits) gives the value back.
  uint64_t bits = 0;
  // kDouble, kFloat.
  double real = 0.0;
  // kString, kBytes.
  std::string text;
  // Integer and bool lists, stored like `bits`.
  std::vector<uint64_t> int_list;
  // kDoubleList, kFloatList.
  std::vector<double> real_list;
  // kStringList, kBytesList.
  TextList text_list;

  // Clears the value but keeps the buffers' capacity, so decoding into a reused Attribute does not
  // allocate once warmed up.
  void reset();

  // The value as a signed 64-bit integer, for any scalar integer kind or bool; nullopt for other
  // kinds and for unsigned values above INT64_MAX.
  std::optional<int64_t> as_int64() const;
  // The value as an unsigned 64-bit integer; nullopt for negative values and non-integers.
  std::optional<uint64_t> as_uint64() const;
  // Integers, bools and reals as a double; nullopt otherwise.
  std::optional<double> as_double() const;
  // kString/kBytes text; nullopt otherwise.
  std::optional<std::string_view> as_text() const;
  // A printable rendering of the value, for `inspect` and error messages.
  std::string value_to_string() const;
};

// Attributes of one node in file order. The storage grows to the largest node seen and is then
// reused: clear() keeps the Attribute objects (and their buffers) for the next node.
class AttributeList {
 public:
  void clear() { count_ = 0; }
  // Returns a reset Attribute at the end of the list, reusing storage where possible.
  Attribute& append();
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  const Attribute& operator[](size_t i) const { return storage_[i]; }
  Attribute& operator[](size_t i) { return storage_[i]; }
  const Attribute* begin() const { return storage_.data(); }
  const Attribute* end() const { return storage_.data() + count_; }
  // The first attribute with this name (the schema allows repeats; the first one wins), or null.
  const Attribute* find(std::string_view name) const;

 private:
  std::vector<Attribute> storage_;
  size_t count_ = 0;
};

}  // namespace etwire::trace
