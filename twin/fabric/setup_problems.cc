#include "twin/fabric/setup_problems.h"

#include <algorithm>
#include <string>
#include <tuple>

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
  // Link faults by cable, kind and start: one that starts before an earlier one of its kind on
  // its cable ends would be undone when that one ends, which restores the cable as configured.
  std::vector<std::tuple<size_t, config::FaultKind, uint64_t, const config::FabricFault*>> spans;
  for (const config::FabricFault& fault : faults) {
    if (fault.kind == config::FaultKind::kPfcStorm) {
      if (!layout.host_named(fault.port)) {
        return SetupProblem{fault.key_path, "no port \"" + fault.port + "\" on the twin"};
      }
      if (fault.until_ns == 0) {
        return SetupProblem{fault.key_path, "a PFC storm needs an end (until)"};
      }
      continue;
    }
    const std::optional<size_t> cable = layout.cable_named(fault.link);
    if (!cable) return SetupProblem{fault.key_path, "no link \"" + fault.link + "\" on the twin"};
    spans.emplace_back(*cable, fault.kind, fault.at_ns, &fault);
  }
  std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a), std::get<2>(a)) <
           std::tie(std::get<0>(b), std::get<1>(b), std::get<2>(b));
  });
  for (size_t i = 1; i < spans.size(); ++i) {
    const auto& [cable, kind, at, fault] = spans[i];
    const config::FabricFault& earlier = *std::get<3>(spans[i - 1]);
    if (std::get<0>(spans[i - 1]) != cable || std::get<1>(spans[i - 1]) != kind) continue;
    if (earlier.until_ns != 0 && earlier.until_ns <= at) continue;
    return SetupProblem{
        fault->key_path,
        "it overlaps " + earlier.key_path + " on the same link (" + fault->link + " and " +
            earlier.link +
            "), a fault of the same kind: the first to end would restore the "
            "link while the other still claims it; give them times that do not overlap"};
  }
  return std::nullopt;
}

}  // namespace etwire::twin
