// The verbs data plane a configuration asks for: on the machine's RDMA devices through
// libibverbs (verbs.rnic: hardware), or on the software RNIC over the fabric twin
// (verbs.rnic: software).
#pragma once

#include <memory>

#include "config/run_config.h"
#include "dataplane/data_plane.h"
#include "twin/layout/fabric_layout.h"

namespace etwire::dataplane {

// Throws as VerbsDataPlane's constructor does; nic::verbs::NoRdmaDevice when the machine has no
// RDMA device at all.
std::unique_ptr<DataPlane> make_verbs_data_plane(const config::RunConfig& config,
                                                 transport::FlowObserver& observer);

// The same as a factory for the engine's RunOptions: the software RNIC in one process stands on
// `layout` when given (the twin's, laid out by the plan of the run; it must outlive the data
// plane) instead of laying it out again.
DataPlaneFactory verbs_data_plane_factory(const twin::FabricLayout* layout);

}  // namespace etwire::dataplane
