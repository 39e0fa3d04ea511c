#include "control/plan/twin_layout.h"

#include <exception>
#include <vector>

namespace etwire::control {

std::optional<nic::loopback::FabricLayout> twin_layout(const config::RunConfig& config,
                                                       std::string* why) {
  std::vector<nic::loopback::TwinPortSpec> specs;
  for (const config::PortConfig& port : config.ports) {
    if (!config::on_fabric_twin(config, port)) return std::nullopt;
    specs.push_back({port.name, port.speed_bps});
  }
  try {
    return nic::loopback::FabricLayout(config.fabric, specs);
  } catch (const std::exception& e) {
    if (why != nullptr) *why = e.what();
    return std::nullopt;
  }
}

}  // namespace etwire::control
