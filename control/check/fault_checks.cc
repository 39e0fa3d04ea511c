#include "control/check/fault_checks.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "control/load/key_path.h"
#include "control/load/nearest_name.h"

namespace etwire::control {

void check_faults(const config::RunConfig& config, const twin::ConfiguredTwin& twin,
                  const SourceMap& where, Diagnostics& out) {
  const std::vector<config::FabricFault>& faults = config.fabric.faults;
  if (faults.empty()) return;
  const auto error = [&](const std::string& path, const std::string& message) {
    out.add(where.make(Severity::kError, Problem::kInconsistent, path, message));
  };
  const std::optional<twin::FabricLayout>& layout = twin.layout;
  if (!layout) {
    const std::string why = twin.ports && twin.problem ? twin.problem->message() : "";
    error("fabric.faults",
          why.empty() ? "faults are injected by the fabric twin, and this run has ports that are "
                        "not on it (only loopback ports, or software RNIC ports in one process, "
                        "are)"
                      : fmt::format("faults need the fabric twin, which cannot be built: {}", why));
    return;
  }
  std::vector<std::string> links;
  for (size_t h = 0; h < layout->hosts(); ++h) links.push_back(layout->host_name(h));
  std::vector<std::string> hosts = links;
  for (size_t p = 0; p < layout->switch_ports(); ++p) links.push_back(layout->switch_port(p).name);
  for (const config::FabricFault& fault : faults) {
    if (fault.kind == config::FaultKind::kPfcStorm) {
      if (!fault.port.empty() && !layout->host_named(fault.port)) {
        error(child_path(fault.key_path, "port"),
              fmt::format("no port \"{}\" on the fabric twin{}", fault.port,
                          did_you_mean(fault.port, hosts)));
      }
      continue;
    }
    if (fault.link.empty()) continue;  // reported as missing
    const std::optional<size_t> cable = layout->cable_named(fault.link);
    if (!cable) {
      error(child_path(fault.key_path, "link"),
            fmt::format("no link \"{}\": name a port or a switch port of the twin (such as "
                        "\"{}\"){}",
                        fault.link, links.back(), did_you_mean(fault.link, links)));
      continue;
    }
    const uint64_t speed = layout->cable(*cable).speed_bps;
    if (fault.kind == config::FaultKind::kDegrade && fault.speed_bps >= speed) {
      error(child_path(fault.key_path, "speed"),
            fmt::format("a degraded link runs below its own speed ({} b/s), not at {} b/s", speed,
                        fault.speed_bps));
    }
  }
}

}  // namespace etwire::control
