#include "trace/comm_groups.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "common/bounded_file.h"
#include "trace/trace_error.h"

namespace etwire::trace {

namespace {

// A group per line of a few thousand ranks stays far below this; the cap keeps an endless stream
// from being read forever.
constexpr uint64_t kMaxCommGroupFileBytes = uint64_t{64} << 20;

}  // namespace

std::optional<GroupRef> parse_pg_name(std::optional<std::string_view> pg_name) {
  // "0" is not special here: ASTRA-sim example sets define a group "0" of their own (a torus row)
  // and name it "0", so the file decides what it holds (TraceSet::resolve_group).
  if (!pg_name || pg_name->empty()) return GroupRef{};
  // A leading decimal integer, as the reference simulator reads it: "1.0" names group 1.
  std::string_view text = *pg_name;
  size_t begin = 0;
  while (begin < text.size() && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  int64_t id = 0;
  auto [end, ec] = std::from_chars(text.data() + begin, text.data() + text.size(), id);
  if (ec != std::errc() || id < 0) return std::nullopt;
  (void)end;
  return GroupRef{id, true};
}

CommGroups CommGroups::load(const std::string& path) {
  std::string text;
  try {
    text = read_bounded_file(path, kMaxCommGroupFileBytes, "a comm-group file");
  } catch (const InputFileError& e) {
    // Past the cap, or a FIFO with no writer: the message says it without an errno.
    if (e.error_number() == 0) throw TraceError({path, {}, {}}, e.what());
    throw TraceError({path, {}, {}},
                     fmt::format("cannot {} comm-group file: {}",
                                 e.reason() == InputFileError::Reason::kOpen ? "open" : "read",
                                 std::strerror(e.error_number())));
  }
  return from_json_text(text, path);
}

CommGroups CommGroups::from_json_text(const std::string& text, const std::string& origin) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw TraceError({origin, {}, {}},
                     fmt::format("not valid JSON (at byte {}): {}", e.byte, e.what()));
  } catch (const nlohmann::json::exception& e) {
    // Not only syntax: a number too large for a double ("1e400") is out_of_range, which
    // escaped as an internal error (exit 1) instead of bad input.
    throw TraceError({origin, {}, {}}, fmt::format("not valid JSON: {}", e.what()));
  }
  if (!doc.is_object()) {
    throw TraceError({origin, {}, {}},
                     "expected a JSON object mapping group ids to rank arrays, e.g. "
                     "{\"1\": [0, 1, 2, 3]}");
  }
  CommGroups groups;
  groups.origin_ = origin;
  for (const auto& [key, value] : doc.items()) {
    int64_t id = 0;
    auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (ec != std::errc() || end != key.data() + key.size() || id < 0) {
      throw TraceError({origin, {}, {}},
                       fmt::format("group key \"{}\" is not a non-negative integer", key));
    }
    if (groups.groups_.count(id) != 0) {
      throw TraceError({origin, {}, {}}, fmt::format("group {} is defined twice", id));
    }
    if (!value.is_array()) {
      throw TraceError({origin, {}, {}},
                       fmt::format("group \"{}\": expected an array of ranks, found {}", key,
                                   value.type_name()));
    }
    std::vector<int32_t> ranks;
    std::set<int32_t> seen;
    for (const auto& rank : value) {
      if (!rank.is_number_integer() || rank.get<int64_t>() < 0 || rank.get<int64_t>() > INT32_MAX) {
        throw TraceError({origin, {}, {}},
                         fmt::format("group \"{}\": {} is not a valid rank", key, rank.dump()));
      }
      auto r = static_cast<int32_t>(rank.get<int64_t>());
      if (!seen.insert(r).second) {
        throw TraceError({origin, {}, {}},
                         fmt::format("group \"{}\": rank {} is listed twice", key, r));
      }
      ranks.push_back(r);
    }
    if (ranks.empty()) {
      throw TraceError({origin, {}, {}}, fmt::format("group \"{}\" has no ranks", key));
    }
    groups.groups_.emplace(id, std::move(ranks));
  }
  return groups;
}

const std::vector<int32_t>* CommGroups::find(int64_t id) const {
  auto it = groups_.find(id);
  return it == groups_.end() ? nullptr : &it->second;
}

}  // namespace etwire::trace
