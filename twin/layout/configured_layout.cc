#include "twin/layout/configured_layout.h"

#include <exception>
#include <vector>

namespace etwire::twin {

std::vector<TwinPortSpec> run_port_specs(const config::RunConfig& config) {
  std::vector<TwinPortSpec> specs;
  for (const config::PortConfig& port : config.ports) specs.push_back({port.name, port.speed_bps});
  return specs;
}

std::optional<std::vector<TwinPortSpec>> configured_port_specs(const config::RunConfig& config) {
  for (const config::PortConfig& port : config.ports) {
    if (!config::on_fabric_twin(config, port)) return std::nullopt;
  }
  return run_port_specs(config);
}

}  // namespace etwire::twin
