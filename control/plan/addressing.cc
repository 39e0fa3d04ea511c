#include "control/plan/addressing.h"

#include <fmt/format.h>

#include <map>

#include "control/load/key_path.h"

namespace etwire::control {

uint32_t AddressPlan::qpn(size_t job, int32_t rank, int32_t peer, uint32_t qp) const {
  const RankEndpoint& e = endpoint(job, rank);
  return e.first_qpn + static_cast<uint32_t>(peer) * qp_channels_ * qps_per_peer_ + qp;
}

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
  plan.qps_per_peer_ = config.collectives.qps_per_peer;
  plan.qp_channels_ = config.collectives.qp_channels();
  plan.udp_base_ = rules.udp_source_port_base;
  plan.udp_count_ = rules.udp_source_port_count;
  plan.jobs_.resize(placements.size());
  plan.port_qpns_.resize(config.ports.size());

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
  uint64_t cursor = rules.qpn_base;
  std::vector<std::pair<uint64_t, uint64_t>> taken;  // [first, end) per port, for overlaps
  bool qpn_overflow = false;
  for (size_t p = 0; p < config.ports.size(); ++p) {
    const config::PortConfig& port = config.ports[p];
    uint64_t first = port.qpn_base.value_or(static_cast<uint32_t>(cursor));
    uint64_t next = first;
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
      uint64_t count = static_cast<uint64_t>(placements[j].world_size) *
                       config.collectives.qp_channels() * config.collectives.qps_per_peer;
      e.first_qpn = static_cast<uint32_t>(std::min<uint64_t>(next, kQpnLimit));
      e.qpn_count = static_cast<uint32_t>(std::min<uint64_t>(count, kQpnLimit));
      next += count;

      Holder holder{p, std::nullopt};
      if (per_rank_mac) holder.job_rank = std::make_pair(j, r);
      macs.claim(e.mac.to_string(), holder);
      holder.job_rank.reset();
      if (per_rank_ip) holder.job_rank = std::make_pair(j, r);
      ipv4s.claim(e.ipv4.to_string(), holder);
      if (e.ipv6) ipv6s.claim(e.ipv6->to_string(), holder);
    }
    plan.port_qpns_[p] = {static_cast<uint32_t>(std::min<uint64_t>(first, kQpnLimit)),
                          static_cast<uint32_t>(std::min<uint64_t>(next - first, kQpnLimit))};
    if (next > kQpnLimit && !qpn_overflow) {
      qpn_overflow = true;
      out.add(where.make(Severity::kError, Problem::kOutOfRange,
                         port.qpn_base ? child_path(port.key_path, "qpn_base") : port.key_path,
                         fmt::format("QP numbers of port \"{}\" run to {}, past the 24-bit limit "
                                     "{}: lower collectives.qps_per_peer or spread ranks over "
                                     "fewer ports' ranges",
                                     port.name, next - 1, kQpnLimit - 1)));
    }
    if (next > first) {
      for (size_t q = 0; q < taken.size(); ++q) {
        auto [other_first, other_end] = taken[q];
        if (other_first < next && first < other_end) {
          out.add(where.make(
              Severity::kError, Problem::kDuplicate, child_path(port.key_path, "qpn_base"),
              fmt::format("QP numbers {}..{} of port \"{}\" overlap {}..{} of another port; QP "
                          "numbers must be unique in a run",
                          first, next - 1, port.name, other_first, other_end - 1)));
          break;
        }
      }
      taken.emplace_back(first, next);
    }
    cursor = std::max(cursor, next);
  }
  return plan;
}

}  // namespace etwire::control
