#include "cli/data_plane_choice.h"

#include "dataplane/dpdk/dpdk_data_plane.h"
#include "dataplane/loopback_data_plane.h"
#include "dataplane/verbs/verbs_backend.h"

namespace etwire::cli {

dataplane::DataPlaneFactory data_plane_factory(const config::RunConfig& config) {
  const config::Backend backend =
      config.ports.empty() ? config::Backend::kLoopback : config.ports.front().backend;
  switch (backend) {
    case config::Backend::kDpdk:
      return [](const config::RunConfig& c, transport::FlowObserver& observer) {
        return std::make_unique<dataplane::DpdkDataPlane>(c, observer);
      };
    case config::Backend::kVerbs:
      return dataplane::make_verbs_data_plane;
    case config::Backend::kLoopback:
      break;
  }
  return [](const config::RunConfig& c, transport::FlowObserver& observer) {
    return std::make_unique<dataplane::LoopbackDataPlane>(c, observer);
  };
}

}  // namespace etwire::cli
