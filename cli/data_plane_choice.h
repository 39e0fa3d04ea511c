// Which data plane drives a run: the backend of its ports (validation makes sure they share one).
#pragma once

#include "config/run_config.h"
#include "dataplane/data_plane.h"

namespace etwire::cli {

// Builds the loopback, DPDK or verbs data plane; what it throws is each data plane's (a verbs
// run on a machine without RDMA devices: nic::verbs::NoRdmaDevice).
dataplane::DataPlaneFactory data_plane_factory(const config::RunConfig& config);

}  // namespace etwire::cli
