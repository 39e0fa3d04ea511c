#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "control/load/nccl_topology.h"
#include "control/load/section_parsers.h"

namespace etwire::control {

namespace {

void parse_addressing(MapReader& section, config::AddressingConfig& out) {
  DocumentContext& ctx = section.context();
  section.choice("ip", out.ip, config::address_sharing_names());
  section.choice("mac", out.mac, config::address_sharing_names());
  section.integer("qpn_base", out.qpn_base, 2, kMaxQpn);
  MapReader udp = section.section("udp_source_ports");
  udp.integer("base", out.udp_source_port_base, 1, 65535);
  udp.integer("count", out.udp_source_port_count, 1, 65536);
  uint64_t last = uint64_t{out.udp_source_port_base} + out.udp_source_port_count - 1;
  if (last > 65535) {
    ctx.error(Problem::kInconsistent, udp.get("count"), udp.key_path("count"),
              fmt::format("ports {} to {} run past 65535: lower base or count",
                          out.udp_source_port_base, last));
  }
  udp.finish();
  section.finish();
}

// hosts.topology: NCCL's topology dump of the servers; its GPUs are the host's ranks.
void read_topology(MapReader& section, const std::string& config_dir, config::HostsConfig& out) {
  out.topology = read_nccl_dump_key<config::ServerTopology>(section, "topology", config_dir,
                                                            out.topology_file, read_nccl_topology);
  if (!out.topology) return;
  DocumentContext& ctx = section.context();
  if (out.topology->gpus() != out.ranks_per_host) {
    ctx.error(Problem::kInconsistent, section.get("topology"), section.key_path("topology"),
              fmt::format("{}: {} GPUs per server, but ranks_per_host is {}: each GPU of the "
                          "topology holds one rank of a host",
                          out.topology_file, out.topology->gpus(), out.ranks_per_host));
    out.topology.reset();  // placed without it, so that this is the one error
  }
}

void parse_hosts(MapReader& section, const std::string& config_dir, config::HostsConfig& out) {
  section.integer("ranks_per_host", out.ranks_per_host, 1, 1 << 16);
  section.rate("bandwidth", out.bandwidth_bps, 1'000'000, 1'000'000'000'000'000ull);
  section.duration("latency", out.latency_ns, 0, 1'000'000'000);
  if (out.ranks_per_host > 1 && out.bandwidth_bps == 0) {
    section.require("bandwidth",
                    "the per-rank bandwidth of the hosts' local interconnect (e.g. 3600Gbps), "
                    "needed when ranks_per_host > 1");
  }
  read_topology(section, config_dir, out);
  section.finish();
}

void parse_job_mapping(MapReader& section, const std::string& config_dir, config::JobMapping& out) {
  DocumentContext& ctx = section.context();
  out.key_path = section.path();
  section.choice("placement", out.placement, config::placement_names());
  for (const auto& item : section.list("ports")) {
    std::string name;
    if (read_text(ctx, item.node, item.path, name)) out.ports.push_back(name);
  }
  uint32_t per_port = 0;
  if (section.integer("ranks_per_port", per_port, 1, 1 << 16)) out.ranks_per_port = per_port;
  auto rank_ports = section.list("rank_ports");
  for (const auto& item : rank_ports) {
    std::string name;
    if (read_text(ctx, item.node, item.path, name)) out.rank_ports.push_back(name);
  }
  if (out.placement == config::Placement::kExplicit) {
    section.require("rank_ports", "the port of each rank, in rank order ([p0, p0, p1, ...])");
  } else if (!rank_ports.empty()) {
    ctx.error(Problem::kInconsistent, section.get("rank_ports"), section.key_path("rank_ports"),
              fmt::format("rank_ports is used only with placement: explicit (this entry uses "
                          "placement: {})",
                          config::placement_name(out.placement)));
  }
  if (out.placement == config::Placement::kExplicit && !out.ports.empty()) {
    ctx.warning(Problem::kInconsistent, section.get("ports"), section.key_path("ports"),
                "ignored with placement: explicit (rank_ports names every port)");
  }
  if (out.placement == config::Placement::kRail && out.ranks_per_port) {
    ctx.error(Problem::kInconsistent, section.get("ranks_per_port"),
              section.key_path("ranks_per_port"),
              "placement rail gives each rank a NIC of its own: ranks_per_port does not apply");
  }
  MapReader hosts = section.section("hosts");
  parse_hosts(hosts, config_dir, out.hosts);
  if (out.hosts.topology && out.placement != config::Placement::kRail) {
    ctx.error(Problem::kInconsistent, hosts.get("topology"), hosts.key_path("topology"),
              fmt::format("a topology places each GPU's rank on its NIC, which placement: rail "
                          "does; this entry uses placement: {}",
                          config::placement_name(out.placement)));
  }
}

std::vector<std::string> job_names(const config::WorkloadConfig& workload) {
  std::vector<std::string> names;
  for (const auto& job : workload.jobs) names.push_back(job.name);
  return names;
}

}  // namespace

void parse_mapping(MapReader& section, const config::WorkloadConfig& workload,
                   const std::string& config_dir, config::MappingConfig& out) {
  DocumentContext& ctx = section.context();
  MapReader addressing = section.section("addressing");
  parse_addressing(addressing, out.addressing);

  std::vector<std::string> names = job_names(workload);
  std::map<std::string, config::JobMapping> given;
  for (const auto& item : section.list("jobs")) {
    MapReader entry(ctx, item.node, item.path);
    config::JobMapping mapping;
    std::string job;
    if (entry.text("job", job)) {
      if (std::find(names.begin(), names.end(), job) == names.end()) {
        ctx.error(
            Problem::kBadReference, entry.get("job"), entry.key_path("job"),
            fmt::format("no job named \"{}\" in workload.jobs{}", job, did_you_mean(job, names)));
        job.clear();
      }
    } else if (names.size() == 1) {
      job = names.front();  // one job: the entry needs no name
    } else if (!names.empty()) {
      entry.require("job", "the workload job this entry maps (there are several)");
    }
    parse_job_mapping(entry, config_dir, mapping);
    entry.finish();
    if (job.empty()) continue;
    mapping.job = job;
    if (given.count(job) > 0) {
      ctx.error(Problem::kDuplicate, entry.node(), entry.path(),
                fmt::format("job \"{}\" is already mapped by {}", job, given[job].key_path));
      continue;
    }
    given.emplace(job, std::move(mapping));
  }
  section.finish();

  // Every job gets a mapping, in workload order: its entry, or the default (block over every
  // port), located at the mapping section.
  for (const auto& name : names) {
    auto it = given.find(name);
    if (it != given.end()) {
      out.jobs.push_back(std::move(it->second));
      continue;
    }
    config::JobMapping fallback;
    fallback.job = name;
    fallback.key_path = "mapping";
    out.jobs.push_back(std::move(fallback));
  }
}

}  // namespace etwire::control
