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
// error. The graph's host NICs are checked against `twin_ports` (the ports cabled into the twin,
// in order: as many, at their links' bandwidth; unchecked when there are none). On success sets
// the shape fields of `out` (topology, leaf_spine's ports_per_leaf, spines, links and
// uplink_speed, three_tier, rails, and propagation_delay from the links' latency) and returns
// true. Problems inside the file are located there.
bool import_infragraph(MapReader& fabric, const std::string& config_dir,
                       const std::vector<const config::PortConfig*>& twin_ports,
                       config::FabricConfig& out);

}  // namespace etwire::control
