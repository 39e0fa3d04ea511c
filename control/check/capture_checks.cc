#include "control/check/capture_checks.h"

#include <fmt/format.h>

#include <set>
#include <string>
#include <vector>

#include "control/load/nearest_name.h"

namespace etwire::control {

void check_capture(const config::RunConfig& config, const twin::ConfiguredTwin& twin,
                   const SourceMap& where, Diagnostics& out) {
  const std::vector<config::CapturedSwitchPort>& ports = config.telemetry.capture.switch_ports;
  if (ports.empty()) return;
  const auto error = [&](const std::string& path, const std::string& message) {
    out.add(where.make(Severity::kError, Problem::kInconsistent, path, message));
  };
  const std::string key = "telemetry.capture.switch_ports";
  if (config.emulators.size() > 1) {
    error(key,
          "capturing the twin's switch ports is not built for a run split between emulator "
          "processes; leave switch_ports out");
    return;
  }
  const std::optional<twin::FabricLayout>& layout = twin.layout;
  if (!layout) {
    const std::string why = twin.ports && twin.problem ? twin.problem->message() : "";
    error(key, why.empty() ? "switch ports are the fabric twin's, and this run has ports that are "
                             "not on it (only loopback ports are)"
                           : fmt::format("switch ports are the fabric twin's, which cannot be "
                                         "built: {}",
                                         why));
    return;
  }
  std::vector<std::string> names;
  for (size_t p = 0; p < layout->switch_ports(); ++p) names.push_back(layout->switch_port(p).name);
  const std::set<std::string, std::less<>> known(names.begin(), names.end());
  std::set<std::string, std::less<>> seen;
  for (const config::CapturedSwitchPort& port : ports) {
    if (known.count(port.name) == 0) {
      // A run port's name is the peer of the switch port facing it: "p2" means "leaf0/p2".
      std::string hint = did_you_mean(port.name, names);
      for (const std::string& name : names) {
        if (name.ends_with("/" + port.name)) hint = fmt::format(" (did you mean \"{}\"?)", name);
      }
      error(port.key_path, fmt::format("no switch port \"{}\" on the fabric twin (its ports are "
                                       "named <switch>/<peer>, such as \"{}\"){}",
                                       port.name, names.front(), hint));
    } else if (!seen.insert(port.name).second) {
      error(port.key_path, fmt::format("switch port \"{}\" is named twice", port.name));
    }
  }
}

}  // namespace etwire::control
