// Values the loader fills in when the file leaves them out and they follow from other settings:
// port addresses, the automatic path MTU, and the leaf-spine uplink speed. Rules are documented
// in docs/configuration.md. Internal to control/.
#pragma once

#include "config/run_config.h"
#include "control/load/diagnostic.h"
#include "control/load/source_map.h"

namespace etwire::control {

// Port i (0-based, after `count` expansion) without explicit addresses gets IPv4
// 10.<i / 256>.<i % 256>.1 (a /24 per port, so per-rank addresses .1, .2, ... never reach the next
// port's), MAC 02:00 followed by its IPv4 address's four bytes, and, when transport.ip_version is
// 6, IPv6 fd00:0:0:<i>::1.
void derive_port_addresses(config::RunConfig& config);

// transport.pmtu auto: the largest RoCE path MTU that every port's MTU carries.
void derive_path_mtu(config::RunConfig& config);

// transport.port_receivers from ports[].receiver: filled (every run port's receiver) when a port
// names one other than transport.receiver, cleared otherwise.
void derive_port_receivers(config::RunConfig& config);

// Leaf-spine and three-tier: each tier's uplink speed from its oversubscription, or (when the file
// gives uplink_speed) the oversubscription from it, using the fastest loopback port's speed
// (config/fabric_shape.h).
void derive_leaf_spine(config::RunConfig& config);

}  // namespace etwire::control
