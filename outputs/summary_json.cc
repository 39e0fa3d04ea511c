#include "outputs/summary_json.h"

#include <fmt/format.h>

namespace etwire::outputs {

namespace {

constexpr size_t kExcerptChars = 60;

// Refuses text nesting deeper than kMaxSummaryJsonDepth or holding more than
// kMaxSummaryJsonValues values, in one pass over it before it is parsed. Every value and every
// key but the first of the text follows a '[', '{', ',' or ':' outside a string, so counting
// those bounds them. nlohmann's parse callback could count them too, but its parser then scans
// the enclosing array for discarded values at the end of every object: quadratic in an array of
// objects (100,000 empty objects took 6 s).
void bound_summary_json(const std::string& text) {
  int depth = 0;
  uint64_t values = 1;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        continue;
      case '[':
      case '{':
        if (++depth > kMaxSummaryJsonDepth) {
          throw SummaryJsonError(fmt::format("nested deeper than {} levels: not a summary.json",
                                             kMaxSummaryJsonDepth));
        }
        break;
      case ']':
      case '}':
        --depth;
        continue;
      case ',':
      case ':':
        break;
      default:
        continue;
    }
    if (++values > kMaxSummaryJsonValues) {
      throw SummaryJsonError(fmt::format(
          "more than {} values: not a summary.json (etwire writes about one per 15 bytes)",
          kMaxSummaryJsonValues));
    }
  }
}

}  // namespace

nlohmann::json parse_summary_json(const std::string& text) {
  bound_summary_json(text);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // A parse_error, or out_of_range for a number too large for a double (1e999).
    throw SummaryJsonError(fmt::format("not valid JSON: {}", e.what()));
  }
}

std::string json_excerpt(const nlohmann::json& value) {
  // A long string is cut before it is printed: it may be most of the file.
  // The cut may split a UTF-8 sequence, which dump() would throw on: such bytes print as U+FFFD.
  constexpr auto kReplace = nlohmann::json::error_handler_t::replace;
  std::string text =
      value.is_string() && value.get_ref<const std::string&>().size() > kExcerptChars
          ? nlohmann::json(value.get_ref<const std::string&>().substr(0, kExcerptChars * 2))
                .dump(-1, ' ', false, kReplace)
          : value.dump(-1, ' ', false, kReplace);
  if (text.size() > kExcerptChars) {
    size_t cut = kExcerptChars;
    // Never in the middle of a UTF-8 sequence: the message must stay valid text.
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut) + "...";
  }
  return text;
}

}  // namespace etwire::outputs
