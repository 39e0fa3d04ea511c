#include "control/check/twin_checks.h"

#include <fmt/format.h>

#include <string>
#include <string_view>

#include "common/rate.h"
#include "twin/layout/twin_partition.h"

namespace etwire::control {

namespace {

// fabric.partitions above 1: what a partitioned run cannot do yet, and whether the fabric can be
// cut that many ways.
void check_partitions(const config::RunConfig& config, const twin::FabricLayout& layout,
                      const SourceMap& where, Diagnostics& out) {
  const uint32_t partitions = config.fabric.partitions;
  const auto refuse = [&](const std::string& why) {
    out.add(where.make(Severity::kError, Problem::kInconsistent, "fabric.partitions", why));
  };
  const auto not_built = [&](std::string_view what) {
    refuse(
        fmt::format("{} partitions with {}: not built yet (a partitioned twin runs "
                    "without it; set fabric.partitions to 1)",
                    partitions, what));
  };
  const size_t errors = out.error_count();
  if (!config.emulators.empty()) not_built("emulators (a run across processes)");
  for (const config::PortConfig& port : config.ports) {
    if (port.backend != config::Backend::kLoopback) {
      not_built(fmt::format("{} ports (port \"{}\"): partitions are the loopback twin's",
                            config::backend_name(port.backend), port.name));
      break;
    }
  }
  if (out.error_count() > errors) return;
  try {
    twin::partition_lookahead(layout, twin::partition_fabric(layout, partitions));
  } catch (const twin::SetupError& e) {
    refuse("the twin cannot be cut: " + e.problem().why);
  }
}

}  // namespace

void check_twin(const config::RunConfig& config, const twin::ConfiguredTwin& twin,
                const SourceMap& where, Diagnostics& out) {
  if (config.ports.empty()) return;
  if (!twin.ports) {
    if (config.fabric.partitions > 1) {
      out.add(where.make(Severity::kError, Problem::kInconsistent, "fabric.partitions",
                         "fabric.partitions above 1 needs every port on the loopback twin"));
    }
    return;
  }
  if (const auto& problem = twin.problem) {
    out.add(where.make(Severity::kError, Problem::kInconsistent, problem->key,
                       "the fabric twin cannot be built: " + problem->why));
    return;
  }
  if (config.fabric.partitions > 1) check_partitions(config, *twin.layout, where, out);
}

void check_infragraph_ports(const config::RunConfig& config, const twin::ConfiguredTwin& twin,
                            const SourceMap& where, Diagnostics& out) {
  const std::vector<config::InfraGraphNic>& nics = config.fabric.infragraph_nics;
  if (nics.empty() || !twin.ports) return;
  const std::vector<twin::TwinPortSpec>& ports = *twin.ports;
  const auto refuse = [&](const std::string& why) {
    out.add(where.make(Severity::kError, Problem::kInconsistent, "fabric.infragraph", why));
  };
  if (ports.size() != nics.size()) {
    refuse(fmt::format(
        "the graph cables {} NIC{} of its hosts to switches ({} .. {}), and the run has {} "
        "port{} on the fabric twin: one port per host NIC, in the graph's order",
        nics.size(), nics.size() == 1 ? "" : "s", nics.front().name, nics.back().name, ports.size(),
        ports.size() == 1 ? "" : "s"));
    return;
  }
  for (size_t k = 0; k < nics.size(); ++k) {
    const config::InfraGraphNic& nic = nics[k];
    if (!nic.bandwidth_bps || *nic.bandwidth_bps == ports[k].speed_bps) continue;
    refuse(
        fmt::format("port \"{}\" runs at {}, but its NIC in the graph ({}) is cabled at {} "
                    "(link {}, {}): the port's speed and its link's bandwidth must agree",
                    ports[k].name, format_rate(ports[k].speed_bps), nic.name,
                    format_rate(*nic.bandwidth_bps), nic.link, nic.edge));
    return;
  }
}

}  // namespace etwire::control
