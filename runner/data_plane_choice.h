// Which data plane drives a run: the backend of its ports (validation makes sure they share one).
#pragma once

#include <cstdint>
#include <functional>

#include "config/run_config.h"
#include "control/plan/run_plan.h"
#include "dataplane/data_plane.h"
#include "dataplane/loopback/partitioned_data_plane.h"

namespace etwire::runner {

// Builds the loopback (partitioned with fabric.partitions above 1, run on `threads` threads, 0
// for one per core), DPDK or verbs data plane of the plan's configuration; what it throws is each
// data plane's (a verbs run on a machine without RDMA devices: nic::verbs::NoRdmaDevice). A data
// plane on the fabric twin stands on the twin's layout the plan laid out; the plan must outlive
// the data plane.
// `spread`: the processes a partitioned twin is spread over (twin_spread_over), and the stop they
// agree on; none by default.
dataplane::DataPlaneFactory data_plane_factory(const control::RunPlan& plan, uint32_t threads = 0,
                                               dataplane::SpreadOver spread = {});

// With -v, one debug line per port this process drives: backend, speed, MTU and device. Called
// once the data plane is set up, so the lines say what was opened.
void log_ports_set_up(const config::RunConfig& config);

// Runs `setup` (building a data plane, or what builds one) and reports what it throws as `run`
// does: "error: ..." on stderr and the exit code, 2 for the configuration or a machine without
// RDMA devices, 1 for a device that cannot be set up; kExitOk when nothing was thrown.
int set_up(const std::function<void()>& setup);

}  // namespace etwire::runner
