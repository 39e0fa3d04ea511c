// A quoted value whose quote never closes. yaml-cpp reads a double- or single-quoted scalar that
// runs to the end of the file as if it were closed there, so the keys after the quote vanish into
// the value and the schema then reports them as missing, far from the mistake. Found here instead,
// at the quote that opens it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>

namespace etwire::control {

// Where the first quoted scalar of `root` (parsed from `text`) opens without a closing quote.
std::optional<YAML::Mark> unclosed_quote(const YAML::Node& root, const std::string& text);

}  // namespace etwire::control
