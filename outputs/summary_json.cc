#include "outputs/summary_json.h"

#include <fmt/format.h>

namespace etwire::outputs {

namespace {

constexpr size_t kExcerptChars = 60;

}  // namespace

nlohmann::json parse_summary_json(const std::string& text) {
  // The callback sees each object and array as it opens, before anything below it is built, so a
  // deep file is refused at the first level too many.
  const auto bound_depth = [](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
    if ((event == nlohmann::json::parse_event_t::object_start ||
         event == nlohmann::json::parse_event_t::array_start) &&
        depth >= kMaxSummaryJsonDepth) {
      throw SummaryJsonError(
          fmt::format("nested deeper than {} levels: not a summary.json", kMaxSummaryJsonDepth));
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text, bound_depth);
  } catch (const nlohmann::json::parse_error& e) {
    throw SummaryJsonError(fmt::format("not valid JSON: {}", e.what()));
  }
}

std::string json_excerpt(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > kExcerptChars) {
    size_t cut = kExcerptChars;
    // Never in the middle of a UTF-8 sequence: the message must stay valid text.
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut) + "...";
  }
  return text;
}

}  // namespace etwire::outputs
