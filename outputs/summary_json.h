// summary.json parsed back by `etwire report` and `etwire compare`. The file may come from
// anywhere, so its nesting is bounded: nlohmann's parser nests without recursion, but printing a
// value (in an error message) and walking it recurse, so a file nested tens of thousands deep
// would overflow the stack. Its size and its count of values are bounded too: a parsed value
// takes 50 to 110 bytes however few bytes of text it is ("[]," is three), so the text's size
// alone does not bound the memory.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace etwire::outputs {

// A summary.json is at most five levels deep (iterations[].ranks[].fields); the margin leaves
// room for what a later version may add.
inline constexpr int kMaxSummaryJsonDepth = 64;

// The largest summary.json read. The largest shipped configuration's is 450 KB (the MoE case
// study: 32 ranks, 108 iterations, 16,000 values), a point of the default sweep's 67 KB; the cap
// is 140 times the first.
inline constexpr uint64_t kMaxSummaryJsonBytes = uint64_t{64} << 20;
// The most values and keys a summary.json holds, counted as the '[', '{', ',' and ':' outside
// strings. etwire writes one per 15 bytes or so (the MoE case study: 30,000), so a file of
// kMaxSummaryJsonBytes has about 4.5 million. Text made of values a few bytes long is refused
// before it is parsed; what passes parses into at most about 400 MB, in well under a second.
inline constexpr uint64_t kMaxSummaryJsonValues = uint64_t{6} << 20;

// Thrown for text that is not JSON, nests deeper than kMaxSummaryJsonDepth or holds more than
// kMaxSummaryJsonValues values; the message says
// what is wrong, without the path: callers name the file.
class SummaryJsonError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

nlohmann::json parse_summary_json(const std::string& text);

// `value` as JSON text for an error message, cut to a few dozen characters: a value that is
// wrong may be a huge array or string.
std::string json_excerpt(const nlohmann::json& value);

}  // namespace etwire::outputs
