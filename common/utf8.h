// UTF-8 validity of text that came from a file: configuration values end up in JSON results,
// which hold UTF-8 only, so text is checked where it is read rather than where it is written.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace etwire {

// The offset of the first byte that does not start or continue a well-formed UTF-8 sequence
// (overlong forms, surrogates and code points above U+10FFFF are not well formed); nullopt when
// the whole text is UTF-8.
std::optional<size_t> first_invalid_utf8(std::string_view text);

// A control character in UTF-8 text: C0 (U+0000..U+001F) other than tab, line feed and carriage
// return, DEL (U+007F), or C1 (U+0080..U+009F, the two bytes C2 80..C2 9F). Such characters pass
// unseen into names, paths and results, and C1 ones (U+009B is a terminal's CSI) can drive a
// terminal that prints them.
struct ControlCharacter {
  size_t offset = 0;  // of its first byte
  char32_t code_point = 0;
};
// The first control character of `text`, which must be UTF-8 (first_invalid_utf8 says nothing
// is wrong); nullopt when there is none.
std::optional<ControlCharacter> first_control_character(std::string_view text);

}  // namespace etwire
