#include "control/check/collnet_checks.h"

#include <fmt/format.h>

#include <algorithm>

#include "twin/layout/configured_layout.h"

namespace etwire::control {

namespace {

constexpr const char* kKey = "collectives.algorithms.all_reduce";

}  // namespace

void check_collnet(const config::RunConfig& config, const SourceMap& where, Diagnostics& out) {
  if (config.collectives.algorithm_for(config::CollectiveType::kAllReduce) !=
      config::Algorithm::kCollNet) {
    return;
  }
  const auto refuse = [&](const std::string& why) {
    out.add(where.make(Severity::kError, Problem::kBackend, kKey, "collnet: " + why));
  };
  const auto off_twin = std::find_if(
      config.ports.begin(), config.ports.end(),
      [](const config::PortConfig& port) { return port.backend != config::Backend::kLoopback; });
  if (off_twin != config.ports.end()) {
    refuse(fmt::format(
        "the fabric twin's switch reduces, and etwire's frames carry no in-network reduction "
        "protocol for a device to act on, so CollNet runs on loopback ports only: port \"{}\" "
        "uses backend {}; pick another all_reduce algorithm for it",
        off_twin->name, config::backend_name(off_twin->backend)));
  }
  if (config.fabric.topology != config::Topology::kSingleSwitch) {
    refuse(
        fmt::format("runs on a single-switch twin so far (its one aggregation node); "
                    "fabric.topology {} would need a node on every switch, which is not built "
                    "yet",
                    config::topology_name(config.fabric.topology)));
  }
  if (config.fabric.partitions > 1) {
    refuse(fmt::format("runs on the whole twin on one clock so far; fabric.partitions is {}",
                       config.fabric.partitions));
  }
  if (config.emulators.size() > 1) {
    refuse(fmt::format("runs in one emulator process so far; the run is split between {}",
                       config.emulators.size()));
  }
  const std::string node = twin::aggregation_host_name(0);
  for (const config::PortConfig& port : config.ports) {
    if (port.name == node) {
      refuse(
          fmt::format("the twin names its aggregation node \"{}\", which port {} is named "
                      "too; rename the port",
                      node, port.key_path));
    }
  }
}

}  // namespace etwire::control
