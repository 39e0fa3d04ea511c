#include "control/run_config.h"

namespace etwire::control {

const PortConfig* RunConfig::find_port(std::string_view name) const {
  for (const auto& port : ports) {
    if (port.name == name) return &port;
  }
  return nullptr;
}

const JobConfig* RunConfig::find_job(std::string_view name) const {
  for (const auto& job : workload.jobs) {
    if (job.name == name) return &job;
  }
  return nullptr;
}

}  // namespace etwire::control
