// Reading the protobuf wire format over the bytes of one message: tags, varints, fixed-width
// values, length-delimited payloads and skipping unknown fields. Malformed bytes raise WireError,
// which the trace reader turns into a TraceError carrying the file and record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

namespace etwire::trace::wire {

enum WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

constexpr uint32_t make_tag(uint32_t field, WireType type) {
  return (field << 3) | type;
}

class WireError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The bounds of an embedded message.
struct Slice {
  const uint8_t* begin;
  const uint8_t* end;
};

class Cursor {
 public:
  // `base` is the start of the record, so that errors can give a byte offset within it.
  Cursor(const uint8_t* begin, const uint8_t* end, const uint8_t* base)
      : p_(begin), end_(end), base_(base) {}

  const uint8_t* base() const { return base_; }

  bool at_end() const { return p_ >= end_; }
  // Whether the next byte is `byte` (a one-byte tag); consumes it if so.
  bool take(uint8_t byte) {
    if (p_ < end_ && *p_ == byte) {
      ++p_;
      return true;
    }
    return false;
  }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }

  uint64_t varint() {
    // One-byte values (tags, enums, bools, small ids) dominate real traces; ids and byte counts
    // mostly take two or three bytes. Longer ones and those near the end of the message take the
    // bounds-checked path.
    if (p_ < end_ && *p_ < 0x80) [[likely]]
      return *p_++;
    if (end_ - p_ >= 3) [[likely]] {
      uint64_t value = p_[0] & 0x7fu;
      uint8_t byte = p_[1];
      value |= static_cast<uint64_t>(byte & 0x7fu) << 7;
      if (byte < 0x80) {
        p_ += 2;
        return value;
      }
      byte = p_[2];
      value |= static_cast<uint64_t>(byte & 0x7fu) << 14;
      if (byte < 0x80) {
        p_ += 3;
        return value;
      }
    }
    return varint_slow();
  }

  // A field tag, checked: field number >= 1, value within 32 bits, and a wire type the schema can
  // contain (groups and the reserved types 6 and 7 are rejected).
  uint32_t tag() {
    const uint8_t* start = p_;
    uint64_t value = varint();
    uint32_t type = static_cast<uint32_t>(value) & 7;
    if (value > 0xffffffffu || (value >> 3) == 0 || (type > kLengthDelimited && type != kFixed32))
        [[unlikely]] {
      p_ = start;  // report the offset of the tag itself
      bad_tag(value);
    }
    return static_cast<uint32_t>(value);
  }

  uint32_t fixed32() {
    need(4, "fixed32 value");
    uint32_t value;
    std::memcpy(&value, p_, 4);  // the wire is little-endian, as is every supported host
    p_ += 4;
    return value;
  }

  uint64_t fixed64() {
    need(8, "fixed64 value");
    uint64_t value;
    std::memcpy(&value, p_, 8);
    p_ += 8;
    return value;
  }

  // The payload of a length-delimited field.
  std::string_view bytes() {
    size_t size = length();
    std::string_view out(reinterpret_cast<const char*>(p_), size);
    p_ += size;
    return out;
  }

  // A length-delimited field read as an embedded message.
  Slice message() {
    size_t size = length();
    Slice sub{p_, p_ + size};
    p_ += size;
    return sub;
  }

  // Skips a field of an unknown number (or a known number with an unexpected wire type, which
  // protobuf also treats as unknown).
  void skip(uint32_t tag);

  [[noreturn]] void fail(const std::string& what) const;

 private:
  size_t length() {
    uint64_t size = varint();
    if (size > remaining()) [[unlikely]]
      too_long(size);
    return static_cast<size_t>(size);
  }
  void need(size_t n, const char* what) {
    if (remaining() < n) [[unlikely]]
      fail(std::string("truncated ") + what);
  }
  uint64_t varint_slow();
  [[noreturn]] void bad_tag(uint64_t value) const;
  [[noreturn]] void too_long(uint64_t size) const;

  const uint8_t* p_;
  const uint8_t* end_;
  const uint8_t* base_;
};

}  // namespace etwire::trace::wire
