// `--set key.path=value` overrides, applied to the YAML tree before it is read, so that the
// schema checks every overridden value exactly as if it were in the file and every message can
// name the argument it came from. Internal to control/.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "control/load/diagnostic.h"

namespace etwire::control {

class AppliedOverrides {
 public:
  // The --set argument that produced the value at `path` (or a value above it, or the section
  // created to hold it); nullopt for values from the file. The last argument wins.
  std::optional<std::string> origin_of(std::string_view path) const;

  void add_value(std::string path, std::string argument);
  void add_created(std::string path, std::string argument);
  size_t size() const { return values_.size(); }

 private:
  std::vector<std::pair<std::string, std::string>> values_;
  std::vector<std::pair<std::string, std::string>> created_;
};

// Applies each "path=value" in order. The value is read as YAML ("9000", "[0, 1]", "{kmin: 1K}");
// an empty value unsets the key, so it takes its default. Sections along the path that do not exist
// are created; list elements must exist. Problems are added to `out` as bad-override errors, and
// that argument is skipped.
void apply_overrides(YAML::Node& root, const std::vector<std::string>& arguments,
                     AppliedOverrides& applied, Diagnostics& out);

}  // namespace etwire::control
