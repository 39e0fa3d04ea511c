#include "twin/layout/configured_layout.h"

#include <exception>
#include <vector>

namespace etwire::twin {

uint32_t aggregation_hosts(const config::RunConfig& config) {
  const auto all_reduce = config.collectives.algorithm_for(config::CollectiveType::kAllReduce);
  return all_reduce == config::Algorithm::kCollNet && !config.ports.empty() ? 1 : 0;
}

std::string aggregation_host_name(uint32_t k) {
  return "agg" + std::to_string(k);
}

config::MacAddress aggregation_host_mac(uint32_t k) {
  return config::MacAddress{{0x02, 0x00, 0x5f, 0x00, 0x00, static_cast<uint8_t>(k)}};
}

config::Ipv4Address aggregation_host_ipv4(uint32_t k) {
  return config::Ipv4Address{0xA9FEFF00u + ((k + 1) & 0xFFu)};
}

config::Ipv6Address aggregation_host_ipv6(uint32_t k) {
  config::Ipv6Address address;
  address.bytes[0] = 0xfe;
  address.bytes[1] = 0x80;
  address.bytes[13] = 0x5f;
  address.bytes[15] = static_cast<uint8_t>(k);
  return address;
}

const config::PortConfig& host_port_settings(const config::RunConfig& config, size_t host) {
  return host < config.ports.size() ? config.ports[host] : config.ports.front();
}

std::vector<TwinPortSpec> run_port_specs(const config::RunConfig& config) {
  std::vector<TwinPortSpec> specs;
  uint64_t total_bps = 0;
  for (const config::PortConfig& port : config.ports) {
    specs.push_back({port.name, port.speed_bps});
    total_bps += port.speed_bps;
  }
  for (uint32_t k = 0; k < aggregation_hosts(config); ++k) {
    specs.push_back({aggregation_host_name(k), total_bps});
  }
  return specs;
}

std::optional<std::vector<TwinPortSpec>> configured_port_specs(const config::RunConfig& config) {
  for (const config::PortConfig& port : config.ports) {
    if (!config::on_fabric_twin(config, port)) return std::nullopt;
  }
  return run_port_specs(config);
}

}  // namespace etwire::twin
