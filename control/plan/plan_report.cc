#include "control/plan/plan_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <vector>

#include "common/duration.h"
#include "common/rate.h"
#include "common/text_table.h"
#include "common/units.h"
#include "config/enum_names.h"
#include "control/plan/config_summary.h"
#include "control/plan/tuner_report.h"
#include "twin/layout/configured_layout.h"

namespace etwire::control {

namespace {

std::string qpn_range(uint32_t first, uint32_t count) {
  return count == 0 ? "-" : fmt::format("{}..{}", first, first + count - 1);
}

std::string bytes_or_dash(uint64_t bytes) {
  return bytes == 0 ? "-" : format_bytes(bytes);
}

std::string headline(const RunPlan& loaded, const TrafficPlan& plan) {
  const config::RunConfig& c = loaded.config;
  return fmt::format(
      "Plan for {}: {} job{}, {} port{}, PMTU {}, {}; QPs per peer: {} configured per channel, "
      "{} used at most (collectives.channels sets the ring's and the tree's channels; unset, "
      "a server of several NICs runs one per NIC)\n",
      c.source_file, c.workload.jobs.size(), c.workload.jobs.size() == 1 ? "" : "s", c.ports.size(),
      c.ports.size() == 1 ? "" : "s", c.transport.pmtu, config::rdma_op_name(c.transport.op),
      c.collectives.qps_per_peer, plan.max_qps_per_peer);
}

// The fabric the loopback ports are cabled to, when any is.
std::string fabric_line(const RunPlan& loaded) {
  for (const config::PortConfig& port : loaded.config.ports) {
    if (port.backend == config::Backend::kLoopback) {
      return "Fabric: " + describe_fabric(loaded) + "\n";
    }
  }
  return {};
}

// The UDP source ports of a rank's QPs (of their run numbers): a range, unless it wraps around the
// pool.
std::string sport_range(const AddressPlan& addresses, const PortQpnRange& qpns) {
  if (qpns.count == 0) return "-";
  uint16_t first = addresses.udp_source_port(qpns.first);
  uint16_t last = addresses.udp_source_port(qpns.first + qpns.count - 1);
  if (last >= first && last - first + 1u == qpns.count) return fmt::format("{}..{}", first, last);
  return fmt::format("{}.. (wraps)", first);
}

// A rank's QP numbers on the wire, or a port's: none without the traffic's numbering.
PortQpnRange rank_qpns(const RunPlan& loaded, size_t job, int32_t rank) {
  return loaded.qp_numbers ? loaded.qp_numbers->wire_rank(job, rank) : PortQpnRange{};
}

PortQpnRange port_qpns(const RunPlan& loaded, size_t port) {
  return loaded.qp_numbers ? loaded.qp_numbers->wire_port(port) : PortQpnRange{};
}

// A rank's run numbers, which its UDP source ports follow.
PortQpnRange rank_run_qpns(const RunPlan& loaded, size_t job, int32_t rank) {
  return loaded.qp_numbers ? loaded.qp_numbers->rank(job, rank) : PortQpnRange{};
}

std::string ranks_table(const RunPlan& loaded, const TrafficPlan& plan) {
  const config::RunConfig& c = loaded.config;
  const AddressPlan& addresses = *loaded.addresses;
  bool ipv6 = c.transport.ip_version == 6;
  TextTable table({"job", "rank", "port", "host", ipv6 ? "ipv6" : "ipv4", "mac", "qpns",
                   "udp sport", "peers", "qps", "switches", "sent", "received", "scale-up"});
  for (size_t j = 0; j < c.workload.jobs.size(); ++j) {
    for (int32_t r = 0; r < loaded.placements[j]->world_size; ++r) {
      const RankEndpoint& e = addresses.endpoint(j, r);
      const RankTrafficPlan& t = plan.jobs[j][static_cast<size_t>(r)];
      const PortQpnRange qpns = rank_qpns(loaded, j, r);
      table.add_row(
          {c.workload.jobs[j].name, std::to_string(r), c.ports[e.port].name, std::to_string(e.host),
           ipv6 && e.ipv6 ? e.ipv6->to_string() : e.ipv4.to_string(), e.mac.to_string(),
           qpn_range(qpns.first, qpns.count), sport_range(addresses, rank_run_qpns(loaded, j, r)),
           std::to_string(t.peers), std::to_string(t.qps),
           t.max_switches == 0 ? "-" : std::to_string(t.max_switches),
           bytes_or_dash(t.network_bytes_sent), bytes_or_dash(t.network_bytes_received),
           bytes_or_dash(t.scale_up_bytes_sent)});
    }
  }
  return table.render();
}

std::string ports_table(const RunPlan& loaded, const TrafficPlan& plan) {
  const config::RunConfig& c = loaded.config;
  TextTable table(
      {"port", "backend", "speed", "mtu", "ranks", "qpns", "sent", "received", "line-rate time"});
  for (size_t p = 0; p < c.ports.size(); ++p) {
    const config::PortConfig& port = c.ports[p];
    const PortTrafficPlan& t = plan.ports[p];
    const PortQpnRange qpns = port_qpns(loaded, p);
    table.add_row({port.name, std::string(config::backend_name(port.backend)),
                   format_rate(port.speed_bps), std::to_string(port.mtu), std::to_string(t.ranks),
                   qpn_range(qpns.first, qpns.count), bytes_or_dash(t.bytes_sent),
                   bytes_or_dash(t.bytes_received),
                   t.line_time_ns == 0 ? "-" : format_duration_ns(t.line_time_ns)});
  }
  return table.render();
}

// CollNet: what the twin's aggregation hosts receive and send back, which no run port carries.
std::string aggregation_host_lines(const RunPlan& loaded, const TrafficPlan& plan) {
  std::string text;
  for (size_t k = 0; k < plan.aggregation_hosts.size(); ++k) {
    const AggregationHostTraffic& t = plan.aggregation_hosts[k];
    const std::string name = twin::aggregation_host_name(static_cast<uint32_t>(k));
    const PortQpnRange qpns = port_qpns(loaded, loaded.config.ports.size() + k);
    text += fmt::format(
        "Aggregation node {} (CollNet: the switch's reduction, a twin host behind switch/{}; "
        "QPs {}): receives {}, sends {} per iteration\n",
        name, name, qpn_range(qpns.first, qpns.count), bytes_or_dash(t.bytes_received),
        bytes_or_dash(t.bytes_sent));
  }
  return text;
}

// Per rail of a rail-optimized fabric (port i is NIC i mod nics_per_host of its server, on rail i
// mod nics_per_host, in plane rail mod planes): the bytes its NICs send and receive, and the least
// and most one of its NICs sends, so an uneven spread over rails or over one rail's NICs shows.
struct RailTraffic {
  uint32_t ports = 0;
  uint64_t sent = 0;
  uint64_t received = 0;
  uint64_t nic_sent_min = UINT64_MAX;
  uint64_t nic_sent_max = 0;
};

std::vector<RailTraffic> rail_traffic(const RunPlan& loaded, const TrafficPlan& plan) {
  const uint32_t nics = loaded.config.fabric.rails.nics_per_host;
  std::vector<RailTraffic> rails(nics);
  for (size_t p = 0; p < plan.ports.size() && nics > 0; ++p) {
    RailTraffic& rail = rails[p % nics];
    ++rail.ports;
    rail.sent += plan.ports[p].bytes_sent;
    rail.received += plan.ports[p].bytes_received;
    rail.nic_sent_min = std::min(rail.nic_sent_min, plan.ports[p].bytes_sent);
    rail.nic_sent_max = std::max(rail.nic_sent_max, plan.ports[p].bytes_sent);
  }
  return rails;
}

std::string rails_table(const RunPlan& loaded, const TrafficPlan& plan) {
  const std::vector<RailTraffic> rails = rail_traffic(loaded, plan);
  if (rails.empty()) return {};
  const uint32_t planes = loaded.config.fabric.rails.planes;
  TextTable table({"rail", "plane", "nics", "sent", "received", "per-NIC sent"});
  for (uint32_t r = 0; r < rails.size(); ++r) {
    const RailTraffic& t = rails[r];
    if (t.ports == 0) continue;
    table.add_row({std::to_string(r), std::to_string(r % planes), std::to_string(t.ports),
                   bytes_or_dash(t.sent), bytes_or_dash(t.received),
                   t.nic_sent_min == t.nic_sent_max
                       ? bytes_or_dash(t.nic_sent_max)
                       : fmt::format("{} .. {}", bytes_or_dash(t.nic_sent_min),
                                     bytes_or_dash(t.nic_sent_max))});
  }
  return "\nRails (fabric.rails: NIC i of every server on rail i, rail i in plane i mod planes; "
         "per iteration)\n" +
         table.render();
}

std::string_view topology_path_name(config::TopologyPath path) {
  return config::name_of(config::topology_path_names(), path);
}

// Each job whose servers have a topology (hosts.topology): the NIC each GPU's rank leaves by.
std::string topology_lines(const RunPlan& loaded) {
  std::string text;
  for (const config::JobMapping& mapping : loaded.config.mapping.jobs) {
    const config::ServerTopology* topology = mapping.hosts.topology.get();
    if (topology == nullptr) continue;
    TextTable table({"gpu", "nic", "name", "meets at"});
    for (uint32_t g = 0; g < topology->gpus(); ++g) {
      const uint32_t nic = topology->nic_of_gpu[g];
      table.add_row({std::to_string(g), std::to_string(nic), topology->nic_names[nic],
                     std::string(topology_path_name(topology->path_of_gpu[g]))});
    }
    text += fmt::format(
        "\nTopology of job \"{}\"'s servers ({}): host h's rank on GPU g sends by NIC n of "
        "server h\n",
        mapping.job, mapping.hosts.topology_file);
    text += table.render();
  }
  return text;
}

nlohmann::ordered_json topology_json(const config::HostsConfig& hosts) {
  const config::ServerTopology* topology = hosts.topology.get();
  if (topology == nullptr) return nullptr;
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  for (uint32_t g = 0; g < topology->gpus(); ++g) {
    const uint32_t nic = topology->nic_of_gpu[g];
    gpus.push_back({{"gpu", g},
                    {"nic", nic},
                    {"nic_name", topology->nic_names[nic]},
                    {"meets_at", topology_path_name(topology->path_of_gpu[g])}});
  }
  return {{"file", hosts.topology_file}, {"gpus", std::move(gpus)}};
}

std::string busiest_line(const RunPlan& loaded, const TrafficPlan& plan) {
  if (!plan.busiest_port) return "Busiest port: none (no traffic crosses a port)\n";
  const config::PortConfig& port = loaded.config.ports[*plan.busiest_port];
  const PortTrafficPlan& t = plan.ports[*plan.busiest_port];
  return fmt::format(
      "Busiest port: {}: sends {}, receives {} per iteration; at least {} per iteration at {} "
      "line rate\n",
      port.name, format_bytes(t.bytes_sent), format_bytes(t.bytes_received),
      format_duration_ns(t.line_time_ns), format_rate(port.speed_bps));
}

nlohmann::ordered_json port_json(const RunPlan& loaded, const TrafficPlan& plan, size_t p) {
  const config::PortConfig& port = loaded.config.ports[p];
  const PortTrafficPlan& t = plan.ports[p];
  const PortQpnRange qpns = port_qpns(loaded, p);
  nlohmann::ordered_json j;
  j["name"] = port.name;
  j["backend"] = config::backend_name(port.backend);
  j["speed_bps"] = port.speed_bps;
  j["mtu"] = port.mtu;
  j["mac"] = port.mac.to_string();
  j["ipv4"] = port.ipv4.to_string();
  if (port.ipv6) j["ipv6"] = port.ipv6->to_string();
  j["qpn_first"] = qpns.first;
  j["qpn_count"] = qpns.count;
  j["ranks"] = t.ranks;
  j["bytes_sent"] = t.bytes_sent;
  j["bytes_received"] = t.bytes_received;
  j["line_time_ns"] = t.line_time_ns;
  if (port.verbs.rate_limit_bps) j["rate_limit_bps"] = *port.verbs.rate_limit_bps;
  return j;
}

// How the verbs ports will run: which RNIC, how messages become work requests, and who holds each
// per-QP rate limit (known only once the devices answer: the summary says which held).
std::string verbs_lines(const config::RunConfig& c) {
  if (c.ports.empty() || c.ports.front().backend != config::Backend::kVerbs) return "";
  const config::VerbsConfig& v = c.verbs;
  std::string text = fmt::format(
      "Verbs: {}; messages posted as work requests of at most {}, {} outstanding per QP{}\n",
      v.rnic == config::RnicKind::kSoftware ? "the software RNIC over the fabric twin"
                                            : "the machine's RDMA devices (libibverbs)",
      format_bytes(v.max_message), v.queue_depth,
      c.transport.op == config::RdmaOp::kWrite ? "" : ", receives posted ahead");
  // Ports of one limit on one line.
  std::map<uint64_t, std::vector<std::string>> limited;
  for (const config::PortConfig& port : c.ports) {
    if (port.verbs.rate_limit_bps) limited[*port.verbs.rate_limit_bps].push_back(port.name);
  }
  for (const auto& [rate, names] : limited) {
    const std::string which = names.size() <= 3 ? fmt::format("{}", fmt::join(names, ", "))
                                                : fmt::format("{} .. {} ({} ports)", names.front(),
                                                              names.back(), names.size());
    text += fmt::format(
        "Per-QP rate limit {} on {}: by the RNIC's per-QP limiter where the device has one, else "
        "by paced posting of work requests (the run's summary says which held)\n",
        format_rate(rate), which);
  }
  return text;
}

}  // namespace

std::string plan_to_text(const RunPlan& loaded, const TrafficPlan& plan) {
  std::string text = headline(loaded, plan) + fabric_line(loaded);
  text +=
      "\nRanks (sent/received: bytes crossing the rank's port per iteration; scale-up: "
      "bytes to ranks on the same host; switches: the most the rank's messages cross on the "
      "fabric twin)\n";
  text += ranks_table(loaded, plan);
  text += "\nPorts (per iteration of every job; line-rate time counts RoCEv2 framing)\n";
  text += ports_table(loaded, plan);
  text += aggregation_host_lines(loaded, plan);
  text += rails_table(loaded, plan);
  text += topology_lines(loaded);
  text += "\n";
  text += busiest_line(loaded, plan);
  text += protocol_lines(loaded, plan);
  text += algorithm_lines(loaded, plan);
  text += verbs_lines(loaded.config);
  return text;
}

nlohmann::ordered_json plan_to_json(const RunPlan& loaded, const TrafficPlan& plan) {
  const config::RunConfig& c = loaded.config;
  const AddressPlan& addresses = *loaded.addresses;
  nlohmann::ordered_json root;
  root["config"] = c.source_file;
  root["pmtu"] = c.transport.pmtu;
  root["ip_version"] = c.transport.ip_version;
  root["rdma_op"] = config::rdma_op_name(c.transport.op);
  root["qps_per_peer"] = c.collectives.qps_per_peer;
  root["max_qps_per_peer_used"] = plan.max_qps_per_peer;
  root["programs_generated"] = plan.programs_generated;
  root["protocol"] = protocol_json(loaded, plan);
  if (loaded.config.collectives.any_algorithm_tuned()) {
    root["algorithm_choices"] = algorithm_choices_json(loaded, plan);
  }
  nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
  for (size_t j = 0; j < c.workload.jobs.size(); ++j) {
    const config::JobConfig& job = c.workload.jobs[j];
    nlohmann::ordered_json entry;
    entry["name"] = job.name;
    entry["trace"] = job.trace;
    entry["world_size"] = loaded.placements[j]->world_size;
    entry["iterations"] = job.iterations;
    entry["warmup_iterations"] = job.warmup_iterations;
    entry["placement"] = config::placement_name(c.mapping.jobs[j].placement);
    entry["ranks_per_host"] = c.mapping.jobs[j].hosts.ranks_per_host;
    entry["topology"] = topology_json(c.mapping.jobs[j].hosts);
    nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
    for (int32_t r = 0; r < loaded.placements[j]->world_size; ++r) {
      const RankEndpoint& e = addresses.endpoint(j, r);
      const RankTrafficPlan& t = plan.jobs[j][static_cast<size_t>(r)];
      nlohmann::ordered_json rank;
      rank["rank"] = r;
      rank["port"] = c.ports[e.port].name;
      rank["slot"] = e.slot;
      rank["host"] = e.host;
      rank["mac"] = e.mac.to_string();
      rank["ipv4"] = e.ipv4.to_string();
      if (e.ipv6) rank["ipv6"] = e.ipv6->to_string();
      const PortQpnRange qpns = rank_qpns(loaded, j, r);
      rank["qpn_first"] = qpns.first;
      rank["qpn_count"] = qpns.count;
      rank["udp_source_port_first"] = addresses.udp_source_port(rank_run_qpns(loaded, j, r).first);
      rank["peers"] = t.peers;
      rank["qps"] = t.qps;
      rank["max_switches"] = t.max_switches;
      rank["network_bytes_sent"] = t.network_bytes_sent;
      rank["network_bytes_received"] = t.network_bytes_received;
      rank["scale_up_bytes_sent"] = t.scale_up_bytes_sent;
      ranks.push_back(std::move(rank));
    }
    entry["ranks"] = std::move(ranks);
    jobs.push_back(std::move(entry));
  }
  root["jobs"] = std::move(jobs);
  nlohmann::ordered_json ports = nlohmann::ordered_json::array();
  for (size_t p = 0; p < c.ports.size(); ++p) ports.push_back(port_json(loaded, plan, p));
  root["ports"] = std::move(ports);
  nlohmann::ordered_json hosts = nlohmann::ordered_json::array();
  for (size_t k = 0; k < plan.aggregation_hosts.size(); ++k) {
    const AggregationHostTraffic& t = plan.aggregation_hosts[k];
    const PortQpnRange qpns = port_qpns(loaded, c.ports.size() + k);
    hosts.push_back({{"name", twin::aggregation_host_name(static_cast<uint32_t>(k))},
                     {"qpn_first", qpns.first},
                     {"qpn_count", qpns.count},
                     {"bytes_sent", t.bytes_sent},
                     {"bytes_received", t.bytes_received}});
  }
  root["aggregation_hosts"] = std::move(hosts);
  nlohmann::ordered_json rails = nlohmann::ordered_json::array();
  const std::vector<RailTraffic> rail_totals = rail_traffic(loaded, plan);
  for (uint32_t r = 0; r < rail_totals.size(); ++r) {
    const RailTraffic& t = rail_totals[r];
    if (t.ports == 0) continue;
    rails.push_back({{"rail", r},
                     {"plane", r % c.fabric.rails.planes},
                     {"nics", t.ports},
                     {"bytes_sent", t.sent},
                     {"bytes_received", t.received},
                     {"nic_bytes_sent_min", t.nic_sent_min},
                     {"nic_bytes_sent_max", t.nic_sent_max}});
  }
  root["rails"] = std::move(rails);
  if (plan.busiest_port) {
    root["busiest_port"] = port_json(loaded, plan, *plan.busiest_port);
  } else {
    root["busiest_port"] = nullptr;
  }
  return root;
}

}  // namespace etwire::control
