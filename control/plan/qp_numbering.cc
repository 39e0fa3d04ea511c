#include "control/plan/qp_numbering.h"

#include <fmt/format.h>

#include <algorithm>

#include "control/load/key_path.h"
#include "twin/layout/configured_layout.h"

namespace etwire::control {

std::optional<uint32_t> QpNumbering::find(size_t job, int32_t rank, int32_t peer,
                                          uint32_t qp) const {
  if (job >= port_of_.size() || rank < 0 || static_cast<size_t>(rank) >= port_of_[job].size()) {
    return std::nullopt;
  }
  const uint32_t port = port_of_[job][static_cast<size_t>(rank)];
  const std::vector<Entry>& entries = by_port_[port];
  const Entry key{static_cast<uint32_t>(job), rank, peer, qp};
  const auto it = std::lower_bound(entries.begin(), entries.end(), key);
  if (it == entries.end() || *it != key) return std::nullopt;
  return ports_[port].first + static_cast<uint32_t>(it - entries.begin());
}

PortQpnRange QpNumbering::rank(size_t job, int32_t rank) const {
  if (job >= port_of_.size() || rank < 0 || static_cast<size_t>(rank) >= port_of_[job].size()) {
    return {};
  }
  const uint32_t port = port_of_[job][static_cast<size_t>(rank)];
  const std::vector<Entry>& entries = by_port_[port];
  const auto j = static_cast<uint32_t>(job);
  const auto begin = std::lower_bound(entries.begin(), entries.end(), Entry{j, rank, 0, 0});
  const auto end = std::lower_bound(entries.begin(), entries.end(), Entry{j, rank + 1, 0, 0});
  if (begin == end) return {};
  return {ports_[port].first + static_cast<uint32_t>(begin - entries.begin()),
          static_cast<uint32_t>(end - begin)};
}

PortQpnRange QpNumbering::wire_rank(size_t job, int32_t rank) const {
  const PortQpnRange numbers = this->rank(job, rank);
  if (numbers.count == 0) return numbers;
  const uint32_t port = port_of_[job][static_cast<size_t>(rank)];
  return {wire(port, numbers.first), numbers.count};
}

namespace {

void report_overflow(const config::PortConfig& port, uint64_t first, uint64_t end,
                     const SourceMap& where, Diagnostics& out) {
  out.add(where.make(Severity::kError, Problem::kOutOfRange,
                     port.qpn_base ? child_path(port.key_path, "qpn_base") : port.key_path,
                     fmt::format("QP numbers of port \"{}\" run from {} to {}, past the 24-bit "
                                 "limit {}: its ranks open {} QPs; lower collectives.qps_per_peer "
                                 "or collectives.channels, put fewer ranks on the port, or give it "
                                 "a lower qpn_base",
                                 port.name, first, end - 1, kQpnLimit - 1, end - first)));
}

}  // namespace

QpNumbering number_qps(const config::RunConfig& config, const AddressPlan& addresses,
                       const TrafficPlan& traffic, const SourceMap& where, Diagnostics& out) {
  QpNumbering numbering;
  // The run's ports, then any aggregation hosts (CollNet), numbered after them.
  size_t ports = config.ports.size();
  numbering.port_of_.resize(addresses.jobs());
  for (size_t j = 0; j < addresses.jobs(); ++j) {
    for (const RankEndpoint& e : addresses.job(j)) {
      numbering.port_of_[j].push_back(static_cast<uint32_t>(e.port));
      ports = std::max(ports, e.port + 1);
    }
  }
  numbering.by_port_.resize(ports);
  numbering.ports_.resize(ports);
  using Entry = QpNumbering::Entry;
  const size_t jobs = std::min(traffic.connections.size(), addresses.jobs());
  // A connection from the higher rank whose reverse the plan lists too names the same two QPs;
  // the reverse adds them (an all-to-all's would otherwise come twice).
  const auto named_by_reverse = [&](size_t j, bool sorted, const PlannedConnection& c) {
    const std::vector<PlannedConnection>& all = traffic.connections[j];
    return sorted && c.src > c.dst &&
           std::binary_search(all.begin(), all.end(), PlannedConnection{c.dst, c.src, c.qp});
  };
  // Counted first, so that each port's list is allocated once at its size (an all-to-all of 8192
  // ranks has 67 M QPs). The connections the reverse names are marked then, a bit each, so that
  // each is looked up once.
  std::vector<std::vector<bool>> by_reverse(jobs);
  std::vector<size_t> per_port(ports, 0);
  for (size_t j = 0; j < jobs; ++j) {
    const std::vector<PlannedConnection>& all = traffic.connections[j];
    const bool sorted = std::is_sorted(all.begin(), all.end());
    by_reverse[j].resize(all.size());
    for (size_t i = 0; i < all.size(); ++i) {
      const PlannedConnection& c = all[i];
      if (named_by_reverse(j, sorted, c)) {
        by_reverse[j][i] = true;
        continue;
      }
      ++per_port[numbering.port_of_[j][static_cast<size_t>(c.src)]];
      ++per_port[numbering.port_of_[j][static_cast<size_t>(c.dst)]];
    }
  }
  for (size_t p = 0; p < ports; ++p) numbering.by_port_[p].reserve(per_port[p]);
  for (size_t j = 0; j < jobs; ++j) {
    const auto job = static_cast<uint32_t>(j);
    const std::vector<PlannedConnection>& all = traffic.connections[j];
    for (size_t i = 0; i < all.size(); ++i) {
      if (by_reverse[j][i]) continue;
      const PlannedConnection& c = all[i];
      // The sender's QP towards the receiver, and the receiver's towards the sender.
      numbering.by_port_[numbering.port_of_[j][static_cast<size_t>(c.src)]].push_back(
          Entry{job, c.src, c.dst, c.qp});
      numbering.by_port_[numbering.port_of_[j][static_cast<size_t>(c.dst)]].push_back(
          Entry{job, c.dst, c.src, c.qp});
    }
  }
  // Run numbers follow each other over the ports; wire numbers start again on each port.
  uint64_t cursor = config.mapping.addressing.qpn_base;
  numbering.wire_first_.resize(ports);
  bool overflow = false;
  for (size_t p = 0; p < ports; ++p) {
    std::vector<Entry>& entries = numbering.by_port_[p];
    std::sort(entries.begin(), entries.end());
    entries.erase(std::unique(entries.begin(), entries.end()), entries.end());
    const config::PortConfig& port = twin::host_port_settings(config, p);
    const bool run_port = p < config.ports.size();
    const uint64_t wire_first = run_port
                                    ? port.qpn_base.value_or(config.mapping.addressing.qpn_base)
                                    : config.mapping.addressing.qpn_base;
    const uint64_t wire_end = wire_first + entries.size();
    if (wire_end > kQpnLimit && !overflow) {
      overflow = true;
      report_overflow(port, wire_first, wire_end, where, out);
    }
    if (cursor + entries.size() > kRunQpnLimit && !overflow) {
      overflow = true;
      out.add(where.make(Severity::kError, Problem::kOutOfRange, "mapping",
                         fmt::format("the run opens more than {} QPs; lower "
                                     "collectives.qps_per_peer or collectives.channels, or the "
                                     "ranks",
                                     kRunQpnLimit - config.mapping.addressing.qpn_base)));
    }
    numbering.count_ += entries.size();
    numbering.ports_[p] = {static_cast<uint32_t>(std::min<uint64_t>(cursor, kRunQpnLimit)),
                           static_cast<uint32_t>(std::min<uint64_t>(entries.size(), kQpnLimit))};
    numbering.wire_first_[p] = static_cast<uint32_t>(std::min<uint64_t>(wire_first, kQpnLimit));
    cursor += entries.size();
    numbering.end_ = std::max({numbering.end_, cursor, wire_end});
  }
  return numbering;
}

}  // namespace etwire::control
