#include "dataplane/loopback/twin_ports.h"

#include <fmt/format.h>

#include <stdexcept>

#include "twin/layout/configured_layout.h"

namespace etwire::dataplane {

std::vector<twin::TwinPortSpec> twin_ports(const config::RunConfig& config) {
  for (const config::PortConfig& port : config.ports) {
    if (port.backend != config::Backend::kLoopback) {
      throw std::invalid_argument(fmt::format(
          "{}: port \"{}\" ({}) uses the {} backend; a loopback run drives loopback ports only",
          config.source_file, port.name, port.key_path, config::backend_name(port.backend)));
    }
  }
  return twin::run_port_specs(config);
}

PortRecord twin_port_record(const twin::TwinPortSpec& spec, const PortCounters& counters) {
  PortRecord record;
  static_cast<PortCounters&>(record) = counters;
  record.name = spec.name;
  record.speed_bps = spec.speed_bps;
  return record;
}

std::vector<std::string> twin_switch_port_names(const twin::FabricLayout& layout) {
  std::vector<std::string> names;
  for (size_t p = 0; p < layout.switch_ports(); ++p) names.push_back(layout.switch_port(p).name);
  return names;
}

}  // namespace etwire::dataplane
