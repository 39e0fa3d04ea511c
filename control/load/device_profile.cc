#include "control/load/device_profile.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <string_view>

namespace etwire::control {

namespace {

std::string where(const std::string& path, const YAML::Mark& mark) {
  return mark.is_null() ? path : fmt::format("{}:{}:{}", path, mark.line + 1, mark.column + 1);
}

}  // namespace

bool profile_may_set(const std::string& key) {
  // A profile naming another would make the settings depend on which file names which.
  if (key == "fabric.profile") return false;
  if (key.rfind("fabric.", 0) == 0) return true;
  // ports[N].speed
  constexpr std::string_view kOpen = "ports[";
  constexpr std::string_view kClose = "].speed";
  const std::string_view text = key;
  if (text.size() <= kOpen.size() + kClose.size() || !text.starts_with(kOpen) ||
      !text.ends_with(kClose)) {
    return false;
  }
  const std::string_view index =
      text.substr(kOpen.size(), text.size() - kOpen.size() - kClose.size());
  return std::all_of(index.begin(), index.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string> read_device_profile(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw DeviceProfileError(fmt::format("{}: cannot read the device profile", path));
  } catch (const YAML::Exception& e) {
    throw DeviceProfileError(fmt::format("{}: {}", where(path, e.mark), e.msg));
  }
  if (!root.IsMap() || !root["set"]) {
    throw DeviceProfileError(fmt::format(
        "{}: not a device profile: it has no `set` list of overrides (etwire calibrate writes "
        "one)",
        path));
  }
  const YAML::Node set = root["set"];
  if (!set.IsSequence()) {
    throw DeviceProfileError(fmt::format("{}: `set` must be a list of KEY.PATH=VALUE overrides",
                                         where(path, set.Mark())));
  }
  std::vector<std::string> overrides;
  for (const YAML::Node& entry : set) {
    const std::string text = entry.IsScalar() ? entry.Scalar() : "";
    const size_t equals = text.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw DeviceProfileError(
          fmt::format("{}: not a KEY.PATH=VALUE override", where(path, entry.Mark())));
    }
    const std::string key = text.substr(0, equals);
    if (!profile_may_set(key)) {
      throw DeviceProfileError(fmt::format(
          "{}: {}: a device profile sets the twin's model only (keys under fabric. other than "
          "fabric.profile, and ports[N].speed)",
          where(path, entry.Mark()), key));
    }
    overrides.push_back(text);
  }
  return overrides;
}

}  // namespace etwire::control
