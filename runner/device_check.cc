#include "runner/device_check.h"

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>

#include "runner/data_plane_choice.h"
#include "runner/emulator_processes.h"
#include "transport/flow_record.h"

namespace etwire::runner {

namespace {

// A data plane set up only to be checked sees no traffic.
class NoFlows final : public transport::FlowObserver {
 public:
  void on_flow_delivered(const transport::FlowRecord&) override {}
  void on_flow_finished(const transport::FlowRecord&) override {}
};

}  // namespace

int check_devices(const cluster::Session& session, const control::RunPlan& plan) {
  const config::RunConfig& config = plan.config;
  NoFlows flows;
  std::unique_ptr<dataplane::DataPlane> data_plane;
  const int code = set_up_every_process(session, config, [&] {
    data_plane = data_plane_factory(plan)(config, flows);
    log_ports_set_up(config);
    for (const std::string& note : data_plane->notes()) std::cout << "  " << note << "\n";
    std::cout << fmt::format("devices: {} port{} set up and checked\n", data_plane->ports(),
                             data_plane->ports() == 1 ? "" : "s");
  });
  // Whether or not every process could, each releases what it set up, in turns.
  release_every_process(session, config, [&] { data_plane.reset(); });
  return code;
}

}  // namespace etwire::runner
