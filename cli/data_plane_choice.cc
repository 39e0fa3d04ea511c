#include "cli/data_plane_choice.h"

#include <fmt/format.h>

#include <iostream>
#include <stdexcept>

#include "cli/exit_codes.h"
#include "cluster/session.h"

#include "dataplane/dpdk/dpdk_data_plane.h"
#include "dataplane/loopback_data_plane.h"
#include "dataplane/verbs/verbs_backend.h"
#include "nic/verbs/rdma_devices.h"

namespace etwire::cli {

dataplane::DataPlaneFactory data_plane_factory(const config::RunConfig& config) {
  const config::Backend backend =
      config.ports.empty() ? config::Backend::kLoopback : config.ports.front().backend;
  switch (backend) {
    case config::Backend::kDpdk: {
      // Under MPI, this process's emulator's ports.
      const auto emulator = static_cast<uint32_t>(cluster::Session::current().rank());
      return [emulator](const config::RunConfig& c, transport::FlowObserver& observer) {
        return std::make_unique<dataplane::DpdkDataPlane>(c, observer, emulator);
      };
    }
    case config::Backend::kVerbs:
      return dataplane::make_verbs_data_plane;
    case config::Backend::kLoopback:
      break;
  }
  return [](const config::RunConfig& c, transport::FlowObserver& observer) {
    return std::make_unique<dataplane::LoopbackDataPlane>(c, observer);
  };
}

int set_up(const std::function<void()>& setup) {
  try {
    setup();
    return kExitOk;
  } catch (const std::invalid_argument& e) {
    std::cerr << fmt::format("error: {}\n", e.what());
    return kExitBadInput;
  } catch (const nic::verbs::NoRdmaDevice& e) {
    // Verbs ports on a machine without such a device: nothing to run them on.
    std::cerr << fmt::format("error: {}\n", e.what());
    return kExitBadInput;
  } catch (const std::runtime_error& e) {
    // A device that cannot be set up: the environment, not the configuration.
    std::cerr << fmt::format("error: {}\n", e.what());
    return kExitFailure;
  }
}

}  // namespace etwire::cli
