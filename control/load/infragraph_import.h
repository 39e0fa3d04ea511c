// `fabric.infragraph`: the twin's topology imported from an InfraGraph file rather than given by
// the topology keys. The graph must be a shape the twin builds (one switch, leaf-spine,
// three-tier, with or without rails and planes); anything else is refused, naming the device,
// instance, link or edge the twin cannot model. Internal to control/.
#pragma once

#include <string>
#include <vector>

#include "config/fabric_config.h"
#include "config/port_config.h"
#include "control/load/map_reader.h"

namespace etwire::control {

// Reads fabric.infragraph when `fabric` has it (a path relative to the configuration file's
// directory). Given with topology, three_tier, rails or a leaf_spine key of the shape, it is an
// error. On success sets the shape fields of `out` (topology, leaf_spine's ports_per_leaf,
// spines, links and uplink_speed, three_tier, rails, and propagation_delay from the links'
// latency) and its host NICs (infragraph_nics, which the checks hold the run's twin ports
// against), and returns true. Problems inside the file are located there.
bool import_infragraph(MapReader& fabric, const std::string& config_dir, config::FabricConfig& out);

}  // namespace etwire::control
