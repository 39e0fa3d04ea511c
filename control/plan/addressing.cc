#include "control/plan/addressing.h"

#include <fmt/format.h>

#include <map>

#include "control/load/key_path.h"
#include "twin/layout/configured_layout.h"

namespace etwire::control {

uint16_t AddressPlan::udp_source_port(uint32_t qpn) const {
  return static_cast<uint16_t>(udp_base_ + qpn % udp_count_);
}

namespace {

// Who holds an address: a port (shared addressing) or one rank on it.
struct Holder {
  size_t port = 0;
  std::optional<std::pair<size_t, int32_t>> job_rank;
};

std::string describe(const config::RunConfig& config, const Holder& holder) {
  const config::PortConfig& port = config.ports[holder.port];
  if (!holder.job_rank) return fmt::format("port \"{}\"", port.name);
  return fmt::format("rank {} of job \"{}\" on port \"{}\"", holder.job_rank->second,
                     config.workload.jobs[holder.job_rank->first].name, port.name);
}

// Finds addresses held twice. Keyed by the address text, so one checker serves all families.
class AddressBook {
 public:
  AddressBook(const config::RunConfig& config, const SourceMap& where, Diagnostics& out,
              const char* kind, const char* key)
      : config_(config), where_(where), out_(out), kind_(kind), key_(key) {}

  void claim(const std::string& address, const Holder& holder) {
    auto [it, inserted] = holders_.emplace(address, holder);
    if (inserted || it->second.port == holder.port) return;  // one port may share its address
    // Two ports' own addresses are compared by the port checks, at the keys that set them.
    if (!holder.job_rank && !it->second.job_rank) return;
    const config::PortConfig& port = config_.ports[holder.port];
    out_.add(where_.make(Severity::kError, Problem::kDuplicate, child_path(port.key_path, key_),
                         fmt::format("{} {} of {} is also used by {}", kind_, address,
                                     describe(config_, holder), describe(config_, it->second))));
  }

 private:
  const config::RunConfig& config_;
  const SourceMap& where_;
  Diagnostics& out_;
  const char* kind_;
  const char* key_;
  std::map<std::string, Holder> holders_;
};

}  // namespace

AddressPlan assign_addresses(const config::RunConfig& config,
                             const std::vector<JobPlacement>& placements, const SourceMap& where,
                             Diagnostics& out) {
  const config::AddressingConfig& rules = config.mapping.addressing;
  AddressPlan plan;
  plan.udp_base_ = rules.udp_source_port_base;
  plan.udp_count_ = rules.udp_source_port_count;
  plan.jobs_.resize(placements.size());

  // Slots: ranks on each port in job order, then rank order.
  std::vector<std::vector<std::pair<size_t, int32_t>>> on_port(config.ports.size());
  for (size_t j = 0; j < placements.size(); ++j) {
    plan.jobs_[j].resize(static_cast<size_t>(placements[j].world_size));
    for (int32_t r = 0; r < placements[j].world_size; ++r) {
      on_port[placements[j].port(r)].emplace_back(j, r);
    }
  }

  AddressBook macs(config, where, out, "MAC address", "mac");
  AddressBook ipv4s(config, where, out, "IPv4 address", "ipv4");
  AddressBook ipv6s(config, where, out, "IPv6 address", "ipv6");
  for (size_t p = 0; p < config.ports.size(); ++p) {
    const config::PortConfig& port = config.ports[p];
    for (size_t slot = 0; slot < on_port[p].size(); ++slot) {
      auto [j, r] = on_port[p][slot];
      RankEndpoint& e = plan.jobs_[j][static_cast<size_t>(r)];
      e.port = p;
      e.slot = static_cast<uint32_t>(slot);
      e.host = placements[j].host(r);
      bool per_rank_mac = rules.mac == config::AddressSharing::kPerRank;
      bool per_rank_ip = rules.ip == config::AddressSharing::kPerRank;
      e.mac = per_rank_mac ? port.mac.plus(slot).value_or(port.mac) : port.mac;
      e.ipv4 = per_rank_ip ? port.ipv4.plus(slot).value_or(port.ipv4) : port.ipv4;
      if (port.ipv6) e.ipv6 = per_rank_ip ? port.ipv6->plus(slot).value_or(*port.ipv6) : *port.ipv6;

      Holder holder{p, std::nullopt};
      if (per_rank_mac) holder.job_rank = std::make_pair(j, r);
      macs.claim(e.mac.to_string(), holder);
      holder.job_rank.reset();
      if (per_rank_ip) holder.job_rank = std::make_pair(j, r);
      ipv4s.claim(e.ipv4.to_string(), holder);
      if (e.ipv6) ipv6s.claim(e.ipv6->to_string(), holder);
    }
  }
  // CollNet's aggregation nodes, after the ranks: the addresses of their twin hosts.
  for (size_t j = 0; j < placements.size(); ++j) {
    const auto& aggregators = placements[j].aggregator_ports;
    for (size_t k = 0; k < aggregators.size(); ++k) {
      const auto host = static_cast<uint32_t>(aggregators[k] - config.ports.size());
      plan.jobs_[j].push_back({aggregators[k], 0, -1, twin::aggregation_host_mac(host),
                               twin::aggregation_host_ipv4(host),
                               twin::aggregation_host_ipv6(host)});
    }
  }
  return plan;
}

}  // namespace etwire::control
