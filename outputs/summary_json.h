// summary.json parsed back by `etwire report` and `etwire compare`. The file may come from
// anywhere, so its nesting is bounded: nlohmann's parser nests without recursion, but printing a
// value (in an error message) and walking it recurse, so a file nested tens of thousands deep
// would overflow the stack.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace etwire::outputs {

// A summary.json is at most five levels deep (iterations[].ranks[].fields); the margin leaves
// room for what a later version may add.
inline constexpr int kMaxSummaryJsonDepth = 64;

// Thrown for text that is not JSON or nests deeper than kMaxSummaryJsonDepth; the message says
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
