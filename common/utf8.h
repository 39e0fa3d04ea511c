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

}  // namespace etwire
