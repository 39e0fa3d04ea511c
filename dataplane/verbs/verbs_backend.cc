#include "dataplane/verbs/verbs_backend.h"

#include "cluster/session.h"
#include "dataplane/verbs/software_rnic.h"
#include "dataplane/verbs/verbs_data_plane.h"
#include "nic/verbs/libibverbs_api.h"

namespace etwire::dataplane {

namespace {

std::unique_ptr<DataPlane> verbs_data_plane(const config::RunConfig& config,
                                            transport::FlowObserver& observer,
                                            const twin::FabricLayout* layout) {
  // Under MPI, this process's emulator's ports.
  const cluster::Session& processes = cluster::Session::current();
  if (config.verbs.rnic == config::RnicKind::kSoftware) {
    SoftwareRnicOptions options;
    options.processes = &processes;
    options.layout = layout;
    auto rnic = std::make_unique<SoftwareRnic>(config, options);
    // Across processes the RNIC keeps its own wall clock and moves on when polled.
    clock::VirtualClock* clock = rnic->across_processes() ? nullptr : &rnic->clock();
    const twin::FabricTwin* twin = rnic->across_processes() ? nullptr : &rnic->twin();
    auto plane = std::make_unique<VerbsDataPlane>(config, observer, std::move(rnic), clock,
                                                  RnicHostPaths{}, &processes);
    // The twin lives as long as the RNIC, which the data plane owns.
    if (twin != nullptr) plane->add_note_source([twin] { return twin->fault_report(); });
    return plane;
  }
  return std::make_unique<VerbsDataPlane>(config, observer,
                                          std::make_unique<nic::verbs::LibibverbsProvider>(),
                                          nullptr, RnicHostPaths{}, &processes);
}

}  // namespace

std::unique_ptr<DataPlane> make_verbs_data_plane(const config::RunConfig& config,
                                                 transport::FlowObserver& observer) {
  return verbs_data_plane(config, observer, nullptr);
}

DataPlaneFactory verbs_data_plane_factory(const twin::FabricLayout* layout) {
  return [layout](const config::RunConfig& config, transport::FlowObserver& observer) {
    return verbs_data_plane(config, observer, layout);
  };
}

}  // namespace etwire::dataplane
