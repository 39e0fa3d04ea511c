#include "dataplane/verbs/verbs_backend.h"

#include "dataplane/verbs/software_rnic.h"
#include "dataplane/verbs/verbs_data_plane.h"
#include "nic/verbs/libibverbs_api.h"

namespace etwire::dataplane {

std::unique_ptr<DataPlane> make_verbs_data_plane(const config::RunConfig& config,
                                                 transport::FlowObserver& observer) {
  if (config.verbs.rnic == config::RnicKind::kSoftware) {
    auto rnic = std::make_unique<SoftwareRnic>(config);
    clock::VirtualClock* clock = &rnic->clock();
    return std::make_unique<VerbsDataPlane>(config, observer, std::move(rnic), clock);
  }
  return std::make_unique<VerbsDataPlane>(
      config, observer, std::make_unique<nic::verbs::LibibverbsProvider>(), nullptr);
}

}  // namespace etwire::dataplane
