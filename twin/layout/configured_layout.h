// The fabric twin's hosts as a run configuration lists them: one per port, in order, then the
// switch's aggregation node when the run's all-reduce is CollNet (twin/fabric/setup_problems.h
// builds the rest once, for the checks and the plan of a run).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/run_config.h"
#include "twin/layout/fabric_layout.h"

namespace etwire::twin {

// CollNet (collectives.algorithms.all_reduce: collnet) reduces in the switches, as SHARP does.
// The twin models a switch's reduction as a host of its own behind one more switch port, after
// the run's ports: the aggregation node, which receives what the members send up and sends the
// sums back down (collectives/aggregation_tree.h). Its cable is as fast as the run's ports
// together, so that the switch's ports towards the members, not the node, set the pace. Runs
// take CollNet on a single-switch twin only (control/check/collnet_checks.h): one node.
// The aggregation hosts of the run's twin: 1 when its all-reduce is CollNet, else 0. They are
// hosts run_port_specs(config).size() - aggregation_hosts(config) onwards.
uint32_t aggregation_hosts(const config::RunConfig& config);
// Aggregation host k's addresses, which only its frames in a capture show: a locally administered
// MAC 02:00:5f:00:00:k, link-local 169.254.255.(k+1) and fe80::5f:k, outside what a port takes.
std::string aggregation_host_name(uint32_t k);  // "agg<k>"
config::MacAddress aggregation_host_mac(uint32_t k);
config::Ipv4Address aggregation_host_ipv4(uint32_t k);
config::Ipv6Address aggregation_host_ipv6(uint32_t k);

// The settings a twin host's NIC takes (QoS, frame format, VLAN, next hop): its run port's, and an
// aggregation host's the first run port's. `host` must be below run_port_specs(config).size().
const config::PortConfig& host_port_settings(const config::RunConfig& config, size_t host);

// The twin's port specs of the run's ports, in order: one host per port, with its name and speed,
// whatever the port's backend; then the aggregation hosts. The one place they are built, so that
// every twin of a run (the checks', the data planes', the software RNIC's) numbers and names its
// hosts alike.
std::vector<TwinPortSpec> run_port_specs(const config::RunConfig& config);

// The twin's port specs (name, speed) when every port of the run is on the fabric twin
// (config::on_fabric_twin); nullopt when a port is not.
std::optional<std::vector<TwinPortSpec>> configured_port_specs(const config::RunConfig& config);

}  // namespace etwire::twin
