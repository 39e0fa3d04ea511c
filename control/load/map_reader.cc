#include "control/load/map_reader.h"

#include <fmt/format.h>

#include <map>

#include "control/load/key_path.h"
#include "control/load/nearest_name.h"

namespace etwire::control {

MapReader::MapReader(DocumentContext& ctx, const YAML::Node& node, std::string path)
    // An absent section reads as yaml-cpp's null node, which costs no allocation.
    : ctx_(ctx), node_(node.IsDefined() ? node : YAML::Node()), path_(std::move(path)) {
  if (ctx_.recording() && !path_.empty()) ctx_.expect(path_, expected_plain(ValueKind::kSection));
  if (node_.IsDefined() && !node_.IsNull()) ctx_.note(node_, path_);
  if (!node_.IsDefined() || node_.IsNull() || node_.IsMap()) {
    if (!node_.IsMap()) return;
    // Duplicate keys: yaml-cpp keeps both silently, and the later one would be ignored.
    std::map<std::string, int, std::less<>> first_line;
    for (const auto& entry : node_) {
      if (!entry.first.IsScalar()) {
        ctx_.error(Problem::kWrongType, entry.first, path_,
                   "expected a plain key, got " + describe_value(entry.first));
        continue;
      }
      const std::string& key = entry.first.Scalar();
      int line = entry.first.Mark().line + 1;
      auto [it, inserted] = first_line.emplace(key, line);
      if (!inserted) {
        ctx_.error(Problem::kDuplicate, entry.first, child_path(path_, key),
                   fmt::format("key \"{}\" appears twice (first on line {})", key, it->second));
      }
    }
    return;
  }
  ctx_.error(Problem::kWrongType, node_, path_,
             "expected a section of key: value pairs, got " + describe_value(node_));
  node_.reset();
  wrong_type_ = true;
}

std::string MapReader::key_path(std::string_view key) const {
  return child_path(path_, key);
}

YAML::Node MapReader::get(std::string_view key) {
  declare(key);
  if (!node_.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  YAML::Node value = find(key);
  // The caller may ask the node anything, which yaml-cpp's invalid node would throw on.
  if (!value.IsDefined()) return YAML::Node(YAML::NodeType::Undefined);
  if (!value.IsNull()) ctx_.note(value, key_path(key));
  return value;
}

YAML::Node MapReader::find(std::string_view key) const {
  if (!node_.IsMap()) return YAML::Node();
  const YAML::Node& view = node_;
  return view[std::string(key)];
}

YAML::Node MapReader::present(std::string_view key) {
  declare(key);
  YAML::Node value = find(key);
  if (!value.IsDefined() || value.IsNull()) return YAML::Node();
  ctx_.note(value, key_path(key));
  return value;
}

void MapReader::expect(std::string_view key, ValueKind kind) {
  expect_made(key, [kind] { return expected_plain(kind); });
}

bool MapReader::has(std::string_view key) {
  return !present(key).IsNull();
}

bool MapReader::overridden(std::string_view key) const {
  return ctx_.overrides().origin_of(key_path(key)).has_value();
}

bool MapReader::require(std::string_view key, std::string_view what) {
  if (has(key)) return true;
  if (wrong_type_) return false;
  ctx_.error(Problem::kMissing, node_, key_path(key),
             fmt::format("required key \"{}\" is missing: {}", key, what));
  return false;
}

bool MapReader::text(std::string_view key, std::string& out) {
  expect(key, ValueKind::kText);
  return has(key) && read_text(ctx_, get(key), key_path(key), out);
}

bool MapReader::boolean(std::string_view key, bool& out) {
  expect(key, ValueKind::kBoolean);
  return has(key) && read_bool(ctx_, get(key), key_path(key), out);
}

bool MapReader::real(std::string_view key, double& out, RealRange range) {
  expect_made(key, [&] { return expected_real(range); });
  return has(key) && read_real(ctx_, get(key), key_path(key), range, out);
}

bool MapReader::bytes(std::string_view key, uint64_t& out, uint64_t min, uint64_t max) {
  expect_made(key, [&] { return expected_bytes(min, max); });
  return has(key) && read_bytes(ctx_, get(key), key_path(key), min, max, out);
}

bool MapReader::rate(std::string_view key, uint64_t& out, uint64_t min, uint64_t max) {
  expect_made(key, [&] { return expected_rate(min, max); });
  return has(key) && read_rate(ctx_, get(key), key_path(key), min, max, out);
}

bool MapReader::duration(std::string_view key, uint64_t& out, uint64_t min, uint64_t max) {
  expect_made(key, [&] { return expected_duration(min, max); });
  return has(key) && read_duration(ctx_, get(key), key_path(key), min, max, out);
}

MapReader MapReader::section(std::string_view key) {
  declare(key);
  return MapReader(ctx_, find(key), key_path(key));
}

std::vector<ListItem> MapReader::list(std::string_view key) {
  expect(key, ValueKind::kList);
  std::vector<ListItem> items;
  const YAML::Node value = present(key);
  if (value.IsNull()) return items;
  if (!value.IsSequence()) {
    ctx_.error(Problem::kWrongType, value, key_path(key),
               "expected a list, got " + describe_value(value));
    return items;
  }
  items.reserve(value.size());
  for (size_t i = 0; i < value.size(); ++i) {
    std::string path = element_path(key_path(key), i);
    const YAML::Node& view = value;
    YAML::Node element = view[i];
    ctx_.note(element, path);
    items.push_back({element, std::move(path)});
  }
  return items;
}

void MapReader::finish() {
  if (!node_.IsMap()) return;
  std::vector<std::string> known(known_.begin(), known_.end());
  for (const auto& entry : node_) {
    if (!entry.first.IsScalar()) continue;
    const std::string& key = entry.first.Scalar();
    if (known_.count(key) > 0) continue;
    std::string where = path_.empty() ? "at the top level" : "in " + path_;
    std::string hint = did_you_mean(key, known);
    if (hint.empty()) {
      hint = "; known keys:";
      for (const auto& name : known) hint += " " + name;
    }
    ctx_.error(Problem::kUnknownKey, entry.first, key_path(key),
               fmt::format("unknown key \"{}\" {}{}", key, where, hint));
  }
}

}  // namespace etwire::control
