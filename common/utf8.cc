#include "common/utf8.h"

#include <cstdint>

namespace etwire {

std::optional<size_t> first_invalid_utf8(std::string_view text) {
  size_t at = 0;
  while (at < text.size()) {
    const auto lead = static_cast<uint8_t>(text[at]);
    if (lead < 0x80) {
      ++at;
      continue;
    }
    // The sequence's length and the range its second byte must fall in (RFC 3629, table 3-7 of
    // the Unicode standard): that range is what rules out overlong forms and surrogates.
    size_t length = 0;
    uint8_t low = 0x80;
    uint8_t high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) low = 0xA0;
      if (lead == 0xED) high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) low = 0x90;
      if (lead == 0xF4) high = 0x8F;
    } else {
      return at;
    }
    if (at + length > text.size()) return at;
    const auto second = static_cast<uint8_t>(text[at + 1]);
    if (second < low || second > high) return at;
    for (size_t i = 2; i < length; ++i) {
      const auto next = static_cast<uint8_t>(text[at + i]);
      if (next < 0x80 || next > 0xBF) return at;
    }
    at += length;
  }
  return std::nullopt;
}

std::optional<ControlCharacter> first_control_character(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<uint8_t>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) {
      return ControlCharacter{i, c};
    }
    // In UTF-8, U+0080..U+009F is C2 followed by 80..9F; a C2 byte always leads a sequence.
    if (c == 0xC2 && i + 1 < text.size()) {
      const auto next = static_cast<uint8_t>(text[i + 1]);
      if (next >= 0x80 && next <= 0x9F) return ControlCharacter{i, next};
    }
  }
  return std::nullopt;
}

}  // namespace etwire
