// The checks of one port entry against its backend: the backend's own settings (DPDK queues and
// lcores, net_memif buffers, PFC thresholds, a next hop, verbs devices), and the speeds and MTUs
// the backend can run. Internal to control/.
#pragma once

#include <string>

#include "config/run_config.h"
#include "control/load/diagnostic.h"
#include "control/load/source_map.h"

namespace etwire::control {

// `name` names the entry's ports ("port \"a\"", "ports \"a\" to \"d\"") in messages.
void check_port_backend(const config::RunConfig& config, const config::PortConfig& port,
                        const std::string& name, const SourceMap& where, Diagnostics& out);

}  // namespace etwire::control
