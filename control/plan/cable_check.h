// Ports a run reaches only through their cable: a DPDK port cabled back to back (dpdk.peer)
// reaches its peer and nothing else, and a ring device without a peer reaches only itself. The
// traffic plan shows which ports a job's connections join, so `validate` refuses a mapping that
// sends where no cable goes, as a run would at its first connection. Internal to control/.
#pragma once

#include "control/load/diagnostic.h"

namespace etwire::control {

struct RunPlan;

// An error for each port whose planned connections (RunPlan::traffic) leave it for a port its
// cable does not join: the first such connection and how many more.
void check_cables(const RunPlan& loaded, Diagnostics& out);

}  // namespace etwire::control
