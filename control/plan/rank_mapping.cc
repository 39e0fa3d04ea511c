#include "control/plan/rank_mapping.h"

#include <fmt/format.h>

#include <map>

#include "control/load/key_path.h"
#include "control/load/nearest_name.h"
#include "twin/layout/configured_layout.h"

namespace etwire::control {

namespace {

std::vector<std::string> port_names(const config::RunConfig& config) {
  std::vector<std::string> names;
  for (const auto& port : config.ports) names.push_back(port.name);
  return names;
}

std::optional<size_t> port_index(const config::RunConfig& config, const std::string& name) {
  for (size_t i = 0; i < config.ports.size(); ++i) {
    if (config.ports[i].name == name) return i;
  }
  return std::nullopt;
}

struct Placer {
  const config::RunConfig& config;
  const config::JobMapping& mapping;
  int32_t world;
  const SourceMap& where;
  Diagnostics& out;
  bool failed = false;

  void error(Problem problem, const std::string& path, std::string message) {
    out.add(where.make(Severity::kError, problem, path, std::move(message)));
    failed = true;
  }

  // Resolves a list of port names, reporting unknown and repeated ones.
  std::vector<size_t> resolve(const std::vector<std::string>& names, const std::string& list_path,
                              bool allow_repeats) {
    std::vector<size_t> indexes;
    std::map<std::string, size_t> seen;
    for (size_t i = 0; i < names.size(); ++i) {
      std::string path = element_path(list_path, i);
      auto index = port_index(config, names[i]);
      if (!index) {
        error(Problem::kBadReference, path,
              fmt::format("no port named \"{}\" in ports{}", names[i],
                          did_you_mean(names[i], port_names(config))));
        continue;
      }
      if (!allow_repeats && !seen.emplace(names[i], i).second) {
        error(Problem::kDuplicate, path,
              fmt::format("port \"{}\" is listed twice (also {})", names[i],
                          element_path(list_path, seen[names[i]])));
        continue;
      }
      indexes.push_back(*index);
    }
    return indexes;
  }

  std::string ranks_text() const {
    return world == 1 ? "1 rank" : fmt::format("{} ranks (0..{})", world, world - 1);
  }
};

// Rail placement: host h's rank on GPU k goes to the h-th server's NIC k, or with a topology to
// the NIC nearest GPU k (several GPUs may share one).
bool place_on_rails(Placer& placer, const std::vector<size_t>& ports, JobPlacement& placement) {
  const config::JobMapping& mapping = placer.mapping;
  const std::string& base = mapping.key_path;
  const auto world = static_cast<size_t>(placer.world);
  const size_t per_host = mapping.hosts.ranks_per_host;
  const config::ServerTopology* topology = mapping.hosts.topology.get();
  const uint32_t rails = placer.config.fabric.rails.nics_per_host;
  const size_t nics = rails > 0 ? rails : topology ? topology->nics() : per_host;
  if (topology && topology->nics() != nics) {
    placer.error(Problem::kInconsistent, child_path(base, "hosts.topology"),
                 fmt::format("{}: {} NICs per server, but fabric.rails.nics_per_host is {}",
                             mapping.hosts.topology_file, topology->nics(), nics));
    return false;
  }
  if (!topology && per_host > nics) {
    placer.error(Problem::kInconsistent, child_path(base, "hosts.ranks_per_host"),
                 fmt::format("rail placement puts each host's ranks on the NICs of one "
                             "server, but a host has {} ranks and a server {} NICs "
                             "(fabric.rails.nics_per_host; a topology, hosts.topology, may "
                             "put several GPUs on one NIC)",
                             per_host, nics));
    return false;
  }
  const auto nic_of = [&](size_t local) { return topology ? topology->nic_of_gpu[local] : local; };
  const size_t hosts = (world + per_host - 1) / per_host;
  size_t last_nic = 0;  // the highest NIC the last host uses
  for (size_t local = 0; local < world - (hosts - 1) * per_host; ++local) {
    last_nic = std::max(last_nic, nic_of(local));
  }
  const size_t needed = (hosts - 1) * nics + last_nic + 1;
  if (needed > ports.size()) {
    placer.error(
        Problem::kTraceMismatch, child_path(base, "placement"),
        fmt::format("rail placement needs {} servers of {} NICs ({} ports) for job "
                    "\"{}\"'s {} ({} per host), but it has {} ports",
                    hosts, nics, needed, mapping.job, placer.ranks_text(), per_host, ports.size()));
    return false;
  }
  for (size_t r = 0; r < world; ++r) {
    placement.port_of_rank.push_back(ports[r / per_host * nics + nic_of(r % per_host)]);
  }
  return true;
}

}  // namespace

std::optional<JobPlacement> place_ranks(const config::RunConfig& config,
                                        const config::JobMapping& mapping, int32_t world_size,
                                        const SourceMap& where, Diagnostics& out) {
  Placer placer{config, mapping, world_size, where, out};
  JobPlacement placement;
  placement.job = mapping.job;
  placement.world_size = world_size;
  placement.ranks_per_host = mapping.hosts.ranks_per_host;
  const std::string& base = mapping.key_path;
  auto world = static_cast<size_t>(world_size);

  if (mapping.placement == config::Placement::kExplicit) {
    std::string list_path = child_path(base, "rank_ports");
    auto ports = placer.resolve(mapping.rank_ports, list_path, /*allow_repeats=*/true);
    if (placer.failed) return std::nullopt;
    if (ports.size() != world) {
      placer.error(Problem::kTraceMismatch, list_path,
                   fmt::format("maps {} ranks, but job \"{}\" has {} in its trace set",
                               ports.size(), mapping.job, placer.ranks_text()));
      return std::nullopt;
    }
    placement.port_of_rank = std::move(ports);
  } else {
    std::vector<size_t> ports;
    if (mapping.ports.empty()) {
      for (size_t i = 0; i < config.ports.size(); ++i) ports.push_back(i);
    } else {
      ports = placer.resolve(mapping.ports, child_path(base, "ports"), /*allow_repeats=*/false);
    }
    if (placer.failed || ports.empty()) return std::nullopt;
    size_t count = ports.size();
    if (mapping.placement == config::Placement::kBlock) {
      size_t per_port = mapping.ranks_per_port.value_or((world + count - 1) / count);
      if (per_port * count < world) {
        placer.error(
            Problem::kTraceMismatch, child_path(base, "ranks_per_port"),
            fmt::format("block placement holds {} ports x {} = {} ranks, but job "
                        "\"{}\" has {}",
                        count, per_port, per_port * count, mapping.job, placer.ranks_text()));
        return std::nullopt;
      }
      for (size_t r = 0; r < world; ++r) placement.port_of_rank.push_back(ports[r / per_port]);
    } else if (mapping.placement == config::Placement::kRail) {
      if (!place_on_rails(placer, ports, placement)) return std::nullopt;
    } else {
      if (mapping.ranks_per_port && *mapping.ranks_per_port * count < world) {
        placer.error(Problem::kTraceMismatch, child_path(base, "ranks_per_port"),
                     fmt::format("round-robin placement holds {} ports x {} = {} ranks, but "
                                 "job \"{}\" has {}",
                                 count, *mapping.ranks_per_port, *mapping.ranks_per_port * count,
                                 mapping.job, placer.ranks_text()));
        return std::nullopt;
      }
      for (size_t r = 0; r < world; ++r) placement.port_of_rank.push_back(ports[r % count]);
    }
  }

  if (mapping.placement == config::Placement::kExplicit && mapping.ranks_per_port) {
    std::map<size_t, uint32_t> load;
    for (size_t port : placement.port_of_rank) ++load[port];
    for (const auto& [port, ranks] : load) {
      if (ranks > *mapping.ranks_per_port) {
        placer.error(Problem::kInconsistent, child_path(base, "rank_ports"),
                     fmt::format("port \"{}\" gets {} ranks, above ranks_per_port ({})",
                                 config.ports[port].name, ranks, *mapping.ranks_per_port));
      }
    }
    if (placer.failed) return std::nullopt;
  }
  for (uint32_t k = 0; k < twin::aggregation_hosts(config); ++k) {
    placement.aggregator_ports.push_back(config.ports.size() + k);
  }
  if (world % mapping.hosts.ranks_per_host != 0) {
    out.add(where.make(Severity::kWarning, Problem::kTraceMismatch,
                       child_path(base, "hosts.ranks_per_host"),
                       fmt::format("job \"{}\" has {} ranks, not a multiple of {}: the last host "
                                   "is partly filled",
                                   mapping.job, world, mapping.hosts.ranks_per_host)));
  }
  return placement;
}

}  // namespace etwire::control
