#include "dataplane/twin_ports.h"

#include <fmt/format.h>

#include <stdexcept>

namespace etwire::dataplane {

std::vector<nic::loopback::TwinPortSpec> twin_ports(const config::RunConfig& config) {
  std::vector<nic::loopback::TwinPortSpec> specs;
  for (const config::PortConfig& port : config.ports) {
    if (port.backend != config::Backend::kLoopback) {
      throw std::invalid_argument(fmt::format(
          "{}: port \"{}\" ({}) uses the {} backend; a loopback run drives loopback ports only",
          config.source_file, port.name, port.key_path, config::backend_name(port.backend)));
    }
    specs.push_back({port.name, port.speed_bps});
  }
  return specs;
}

}  // namespace etwire::dataplane
