#include "control/check/twin_checks.h"

#include <fmt/format.h>

#include <exception>
#include <string>
#include <string_view>

#include "clock/virtual_clock.h"
#include "twin/fabric/fabric_twin.h"
#include "twin/layout/configured_layout.h"
#include "twin/layout/twin_partition.h"

namespace etwire::control {

namespace {

// The twin's messages read "fabric twin: fabric.buffer.ingress_reserve: why" when one setting is
// to blame: that key is where the error belongs; otherwise the fabric section is.
struct Blame {
  std::string key = "fabric";
  std::string why;
};

Blame blame(std::string_view message) {
  constexpr std::string_view kPrefix = "fabric twin: ";
  if (message.starts_with(kPrefix)) message.remove_prefix(kPrefix.size());
  Blame blame;
  const size_t end = message.find(": ");
  if (message.starts_with("fabric.") && end != std::string_view::npos &&
      message.substr(0, end).find(' ') == std::string_view::npos) {
    blame.key = message.substr(0, end);
    message.remove_prefix(end + 2);
  }
  blame.why = "the fabric twin cannot be built: " + std::string(message);
  return blame;
}

// fabric.partitions above 1: what a partitioned run cannot do yet, and whether the fabric can be
// cut that many ways.
void check_partitions(const config::RunConfig& config, const std::vector<twin::TwinPortSpec>& specs,
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
    const twin::FabricLayout layout(config.fabric, specs);
    twin::partition_lookahead(layout, twin::partition_fabric(layout, partitions));
  } catch (const std::invalid_argument& e) {
    std::string_view why = e.what();
    constexpr std::string_view kPrefix = "fabric twin: ";
    if (why.starts_with(kPrefix)) why.remove_prefix(kPrefix.size());
    refuse("the twin cannot be cut: " + std::string(why));
  }
}

}  // namespace

void check_twin(const config::RunConfig& config, const SourceMap& where, Diagnostics& out) {
  if (config.ports.empty()) return;
  const auto specs = twin::configured_port_specs(config);
  if (!specs) {
    if (config.fabric.partitions > 1) {
      out.add(where.make(Severity::kError, Problem::kInconsistent, "fabric.partitions",
                         "fabric.partitions above 1 needs every port on the loopback twin"));
    }
    return;
  }
  try {
    clock::VirtualClock clock;
    twin::FabricTwin twin(config.fabric, *specs, clock, config.run.seed);
  } catch (const std::exception& e) {
    const Blame b = blame(e.what());
    out.add(where.make(Severity::kError, Problem::kInconsistent, b.key, b.why));
    return;
  }
  if (config.fabric.partitions > 1) check_partitions(config, *specs, where, out);
}

}  // namespace etwire::control
