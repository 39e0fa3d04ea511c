#include "twin/fabric/setup_problems.h"

#include <string>

#include "twin/layout/configured_layout.h"
#include "twin/layout/setup_checks.h"

namespace etwire::twin {

namespace {

// Builds `layout` (when the settings allow it) and returns the first problem on the way.
std::optional<SetupProblem> lay_out(const config::FabricConfig& config,
                                    std::span<const TwinPortSpec> ports,
                                    std::optional<FabricLayout>& layout) {
  if (auto problem = fabric_settings_problem(config)) return problem;
  try {
    layout.emplace(config, ports);
  } catch (const SetupError& e) {
    return e.problem();
  }
  if (auto problem = buffer_problem(config.buffer, *layout)) return problem;
  return fault_problem(config.faults, *layout);
}

}  // namespace

std::optional<SetupProblem> find_setup_problem(const config::FabricConfig& config,
                                               std::span<const TwinPortSpec> ports) {
  std::optional<FabricLayout> layout;
  return lay_out(config, ports, layout);
}

ConfiguredTwin configure_twin(const config::RunConfig& config) {
  ConfiguredTwin twin;
  twin.ports = configured_port_specs(config);
  return twin;
}

void lay_out_twin(ConfiguredTwin& twin, const config::FabricConfig& fabric) {
  if (twin.ports) twin.problem = lay_out(fabric, *twin.ports, twin.layout);
}

std::optional<SetupProblem> buffer_problem(const config::SwitchBuffer& buffer,
                                           const FabricLayout& layout) {
  for (size_t index = 0; index < layout.switches(); ++index) {
    const SwitchInfo& info = layout.switch_info(index);
    if (buffer.ingress_reserve_bytes * info.ports >= buffer.size_bytes) {
      return SetupProblem{
          "fabric.buffer.ingress_reserve",
          std::to_string(info.ports) + " ports x " + std::to_string(buffer.ingress_reserve_bytes) +
              " B of reserve leave nothing of the " + std::to_string(buffer.size_bytes) +
              " B buffer of switch \"" + info.name +
              "\" to share; lower the reserve or raise fabric.buffer.size"};
    }
  }
  return std::nullopt;
}

std::optional<SetupProblem> fault_problem(const std::vector<config::FabricFault>& faults,
                                          const FabricLayout& layout) {
  for (const config::FabricFault& fault : faults) {
    if (fault.kind == config::FaultKind::kPfcStorm) {
      if (!layout.host_named(fault.port)) {
        return SetupProblem{fault.key_path, "no port \"" + fault.port + "\" on the twin"};
      }
      if (fault.until_ns == 0) {
        return SetupProblem{fault.key_path, "a PFC storm needs an end (until)"};
      }
    } else if (!layout.cable_named(fault.link)) {
      return SetupProblem{fault.key_path, "no link \"" + fault.link + "\" on the twin"};
    }
  }
  return std::nullopt;
}

}  // namespace etwire::twin
