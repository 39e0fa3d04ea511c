// Key paths name a value in the configuration the way users type them in --set and read them in
// messages: "transport.dcqcn.min_rate", "ports[1].mtu", "workload.jobs[0].filter.node_types[2]".
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etwire::control {

// One step of a path: a map key, or a list index.
struct PathStep {
  std::string key;              // empty for an index step
  std::optional<size_t> index;  // set for an index step
  bool is_index() const { return index.has_value(); }
};

// Parses "a.b[2].c". nullopt for an empty path, an empty key ("a..b"), a bad index ("a[x]",
// "a[-1]") or characters other than letters, digits, '_' and '-' in a key.
std::optional<std::vector<PathStep>> parse_key_path(std::string_view text);

// Paths built while walking the document.
std::string child_path(std::string_view parent, std::string_view key);
std::string element_path(std::string_view parent, size_t index);

// True when `path` is `prefix` or lies below it ("ports[1]" is a prefix of "ports[1].mtu" but not
// of "ports[10]").
bool path_within(std::string_view path, std::string_view prefix);

}  // namespace etwire::control
