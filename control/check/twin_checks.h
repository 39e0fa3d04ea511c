// What the fabric twin refuses when it is built, found before the run: when every port of the run
// is on the twin, its problem as configure_twin found it (its layout, links, switch ports,
// buffers and fault targets) and whether it can be cut into fabric.partitions, so validate
// refuses every twin run refuses.
#pragma once

#include "config/run_config.h"
#include "control/load/diagnostic.h"
#include "control/load/source_map.h"
#include "twin/fabric/setup_problems.h"

namespace etwire::control {

// `twin`: the twin of `config` (twin::configure_twin), built once for every check.
void check_twin(const config::RunConfig& config, const twin::ConfiguredTwin& twin,
                const SourceMap& where, Diagnostics& out);

// fabric.infragraph's host NICs against the twin's ports: as many, in order, each port at its
// NIC's link bandwidth. Nothing to check without the graph or without every port on the twin.
void check_infragraph_ports(const config::RunConfig& config, const twin::ConfiguredTwin& twin,
                            const SourceMap& where, Diagnostics& out);

}  // namespace etwire::control
