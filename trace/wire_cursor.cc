#include "trace/wire_cursor.h"

#include <fmt/format.h>

namespace etwire::trace::wire {

uint64_t Cursor::varint_slow() {
  uint64_t value = 0;
  for (int i = 0; i < 10; ++i) {
    if (p_ >= end_) fail("truncated varint");
    uint8_t byte = *p_++;
    // The tenth byte can only contribute the top bit; protobuf drops anything above 64 bits.
    value |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if (byte < 0x80) return value;
  }
  fail("varint longer than 10 bytes");
}

void Cursor::skip(uint32_t tag) {
  switch (tag & 7) {
    case kVarint:
      varint();
      return;
    case kFixed64:
      need(8, "fixed64 field");
      p_ += 8;
      return;
    case kLengthDelimited:
      p_ += length();
      return;
    case kFixed32:
      need(4, "fixed32 field");
      p_ += 4;
      return;
    default:
      bad_tag(tag);
  }
}

void Cursor::fail(const std::string& what) const {
  throw WireError(fmt::format("{} at byte {} of the record", what, p_ - base_));
}

void Cursor::bad_tag(uint64_t value) const {
  uint64_t field = value >> 3;
  uint64_t type = value & 7;
  if (value > 0xffffffffu) fail(fmt::format("bad field tag {:#x} (exceeds 32 bits)", value));
  if (field == 0) fail(fmt::format("bad field tag {:#x} (field number 0)", value));
  if (type == kStartGroup || type == kEndGroup) {
    fail(fmt::format("field {} uses wire type {} (group), which the schema never uses", field,
                     type));
  }
  fail(fmt::format("field {} has invalid wire type {}", field, type));
}

void Cursor::too_long(uint64_t size) const {
  fail(fmt::format("length-delimited field claims {} bytes but only {} remain in its message", size,
                   remaining()));
}

}  // namespace etwire::trace::wire
