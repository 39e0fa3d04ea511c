#include "control/load/overrides.h"

#include <fmt/format.h>

#include "control/load/key_path.h"

namespace etwire::control {

void AppliedOverrides::add_value(std::string path, std::string argument) {
  values_.emplace_back(std::move(path), std::move(argument));
}

void AppliedOverrides::add_created(std::string path, std::string argument) {
  created_.emplace_back(std::move(path), std::move(argument));
}

std::optional<std::string> AppliedOverrides::origin_of(std::string_view path) const {
  for (auto it = values_.rbegin(); it != values_.rend(); ++it) {
    if (path_within(path, it->first)) return it->second;
  }
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    if (path == it->first) return it->second;
  }
  return std::nullopt;
}

namespace {

struct OverrideTarget {
  const std::string& argument;
  const std::vector<PathStep>& steps;
  AppliedOverrides& applied;
  Diagnostics& out;
};

void reject(OverrideTarget& target, const std::string& path, std::string message) {
  Diagnostic d;
  d.problem = Problem::kBadOverride;
  d.where.override_text = target.argument;
  d.key_path = path;
  d.message = std::move(message);
  target.out.add(std::move(d));
}

std::string_view kind_of(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a section";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a value";
    default:
      return "empty";
  }
}

// Walks to steps[i] below `node` (whose own path is `path`) and stores `value` there. `node` is a
// handle by value: yaml-cpp's Node assignment rebinds shared storage, so the walk never assigns
// one handle to another.
bool place(OverrideTarget& target, YAML::Node node, const std::string& path, size_t i,
           const YAML::Node& value) {
  const PathStep& step = target.steps[i];
  bool last = i + 1 == target.steps.size();
  if (step.is_index()) {
    std::string here = element_path(path, *step.index);
    if (!node.IsSequence()) {
      reject(target, here,
             node.IsDefined() && !node.IsNull()
                 ? fmt::format("{} is {}, not a list", path, kind_of(node))
                 : fmt::format("there is no {} list to index", path));
      return false;
    }
    if (*step.index >= node.size()) {
      reject(target, here,
             node.size() == 0   ? fmt::format("{} is an empty list", path)
             : node.size() == 1 ? fmt::format("{} has 1 entry ({}[0])", path, path)
                                : fmt::format("{} has {} entries ({}[0] to {}[{}])", path,
                                              node.size(), path, path, node.size() - 1));
      return false;
    }
    if (last) {
      node[*step.index] = value;
      target.applied.add_value(here, target.argument);
      return true;
    }
    return place(target, node[*step.index], here, i + 1, value);
  }

  std::string here = child_path(path, step.key);
  if (node.IsDefined() && !node.IsNull() && !node.IsMap()) {
    reject(target, here,
           path.empty() ? "the document is not a map of sections"
           : node.IsSequence()
               ? fmt::format("{} is a list: name an element, as in {}[0].{}", path, path, step.key)
               : fmt::format("{} is {}, not a section with keys", path, kind_of(node)));
    return false;
  }
  if (last) {
    node[step.key] = value;
    target.applied.add_value(here, target.argument);
    return true;
  }
  const YAML::Node& view = node;
  if (!view[step.key] || view[step.key].IsNull()) {
    // Only a section can be created on the way; a list index below a missing key has nothing to
    // index into.
    if (target.steps[i + 1].is_index()) {
      reject(target, element_path(here, *target.steps[i + 1].index),
             fmt::format("there is no {} list to index", here));
      return false;
    }
    node[step.key] = YAML::Node(YAML::NodeType::Map);
    target.applied.add_created(here, target.argument);
  }
  return place(target, node[step.key], here, i + 1, value);
}

}  // namespace

void apply_overrides(YAML::Node& root, const std::vector<std::string>& arguments,
                     AppliedOverrides& applied, Diagnostics& out) {
  for (const auto& argument : arguments) {
    std::vector<PathStep> none;
    OverrideTarget target{argument, none, applied, out};
    size_t equals = argument.find('=');
    if (equals == std::string::npos) {
      reject(target, "", "expected KEY=VALUE, e.g. ports[0].mtu=9000");
      continue;
    }
    std::string path_text = argument.substr(0, equals);
    auto steps = parse_key_path(path_text);
    if (!steps || (*steps)[0].is_index()) {
      reject(
          target, "",
          fmt::format("\"{}\" is not a key path like transport.pmtu or ports[1].mtu", path_text));
      continue;
    }
    std::string text = argument.substr(equals + 1);
    YAML::Node value;
    if (text.empty()) {
      value = YAML::Node(YAML::NodeType::Null);  // unset: the key takes its default
    } else {
      try {
        value = YAML::Load(text);
      } catch (const YAML::Exception& e) {
        reject(target, path_text, fmt::format("the value is not valid YAML: {}", e.msg));
        continue;
      }
    }
    OverrideTarget walk{argument, *steps, applied, out};
    if (root.IsNull() || !root.IsDefined()) root = YAML::Node(YAML::NodeType::Map);
    place(walk, root, "", 0, value);
  }
}

}  // namespace etwire::control
