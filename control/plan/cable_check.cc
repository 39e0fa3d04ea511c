#include "control/plan/cable_check.h"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "control/plan/run_plan.h"

namespace etwire::control {

namespace {

// The port `port` may send to, when its cable allows only one: its back-to-back peer, or itself
// for a ring device with none.
std::optional<size_t> only_reachable(const config::RunConfig& config,
                                     const std::unordered_map<std::string, size_t>& by_name,
                                     size_t port) {
  const config::PortConfig& p = config.ports[port];
  if (p.backend != config::Backend::kDpdk) return std::nullopt;
  if (!p.dpdk.peer.empty()) {
    const auto peer = by_name.find(p.dpdk.peer);
    if (peer == by_name.end()) return std::nullopt;  // an unknown peer is the port checks' error
    return peer->second;
  }
  if (config::is_ring_device(p.dpdk)) return port;
  return std::nullopt;
}

struct StrayTraffic {
  size_t job = 0;
  PlannedConnection first;
  size_t dst_port = 0;
  size_t connections = 0;
};

}  // namespace

void check_cables(const RunPlan& loaded, Diagnostics& out) {
  if (!loaded.traffic) return;
  const config::RunConfig& config = loaded.config;
  std::unordered_map<std::string, size_t> by_name;
  for (size_t p = 0; p < config.ports.size(); ++p) by_name.emplace(config.ports[p].name, p);
  std::vector<std::optional<size_t>> reach(config.ports.size());
  for (size_t p = 0; p < config.ports.size(); ++p) reach[p] = only_reachable(config, by_name, p);
  std::vector<std::optional<StrayTraffic>> stray(config.ports.size());  // [sending port]
  const TrafficPlan& plan = *loaded.traffic;
  for (size_t j = 0; j < plan.connections.size() && j < loaded.placements.size(); ++j) {
    if (!loaded.placements[j]) continue;
    const auto& placement = *loaded.placements[j];
    for (const PlannedConnection& c : plan.connections[j]) {
      const size_t src = placement.port(c.src);
      const size_t dst = placement.port(c.dst);
      // An aggregation host's cable is the twin's (CollNet runs on the twin only).
      if (src >= reach.size() || !reach[src] || *reach[src] == dst) continue;
      if (!stray[src]) stray[src] = StrayTraffic{j, c, dst, 0};
      ++stray[src]->connections;
    }
  }
  for (size_t p = 0; p < stray.size(); ++p) {
    if (!stray[p]) continue;
    const StrayTraffic& s = *stray[p];
    const config::PortConfig& port = config.ports[p];
    const std::string cable =
        port.dpdk.peer.empty()
            ? fmt::format("\"{}\" is a ring device looped to itself (no dpdk.peer)", port.name)
            : fmt::format(
                  "\"{}\" is cabled back to back to \"{}\" (dpdk.peer) and reaches "
                  "nothing else",
                  port.name, port.dpdk.peer);
    const size_t more = s.connections - 1;
    // Servers of several NICs run a ring per NIC unless collectives.channels says otherwise.
    const bool channels_by_default =
        !config.collectives.channels && config.mapping.jobs[s.job].hosts.ranks_per_host > 1;
    out.add(loaded.source_map.make(
        Severity::kError, Problem::kInconsistent,
        fmt::format("ports[{}].dpdk.{}", p, port.dpdk.peer.empty() ? "vdev" : "peer"),
        fmt::format("job \"{}\": rank {} on port \"{}\" sends to rank {} on port \"{}\"{}, but {}; "
                    "map the job so that its traffic crosses the cables only "
                    "(hosts.ranks_per_host keeps traffic within a host off the ports{})",
                    config.workload.jobs[s.job].name, s.first.src, port.name, s.first.dst,
                    config.ports[s.dst_port].name,
                    more == 0   ? ""
                    : more == 1 ? ", as 1 more connection does"
                                : fmt::format(", as {} more connections do", more),
                    cable,
                    channels_by_default ? "; collectives.channels: 0 runs one ring in group "
                                          "order instead of a ring per NIC of the server"
                                        : "")));
  }
}

}  // namespace etwire::control
