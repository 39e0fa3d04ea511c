// Where a run can take CollNet (collectives.algorithms.all_reduce: collnet). Its reduction
// happens in the fabric's switches, which only the fabric twin models (twin::aggregation_hosts):
// etwire's frames carry no in-network reduction protocol, so DPDK and verbs ports (the software
// RNIC's too) cannot take part. Built so far: one switch, on one clock, in one process; a run that
// asks for more is refused with what is missing.
#pragma once

#include "config/run_config.h"
#include "control/load/diagnostic.h"
#include "control/load/source_map.h"

namespace etwire::control {

void check_collnet(const config::RunConfig& config, const SourceMap& where, Diagnostics& out);

}  // namespace etwire::control
