// QP numbers as a run uses them: only the QPs its traffic opens get one, so the 24-bit space
// holds the QPs in use, not every rank pair a job could connect.
//
// A QP is a rank's end towards a peer on a QP id (channel x qps_per_peer + piece, the collective
// program's qp field): the requester of the rank's connection to the peer and the responder of
// the peer's connection to it, as one RC QP serves both directions. The traffic plan names every
// connection that carries network traffic; each of its two ends is a QP. Numbers are given port
// by port, from the port's qpn_base, else right after the previous port's numbers (the first
// port starting at mapping.addressing.qpn_base), each port's QPs in (job, rank, peer, QP id)
// order: a port's numbers are contiguous, and so are a rank's. Every run (plan, validate, run,
// each process of a split run) derives the same numbers from the same plan.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "config/run_config.h"
#include "control/load/diagnostic.h"
#include "control/load/source_map.h"
#include "control/plan/addressing.h"
#include "control/plan/traffic_plan.h"

namespace etwire::control {

class QpNumbering {
 public:
  // The number of `rank`'s QP `qp` towards `peer` (ranks of `job`), or nullopt when the plan
  // opens no such QP.
  std::optional<uint32_t> find(size_t job, int32_t rank, int32_t peer, uint32_t qp) const;
  // A port's numbers (count 0: no QP on it).
  const PortQpnRange& port(size_t port) const { return ports_[port]; }
  // A rank's numbers, contiguous (count 0: it opens no QP).
  PortQpnRange rank(size_t job, int32_t rank) const;
  // Every QP numbered.
  uint64_t count() const { return count_; }
  // The first number after every numbered one: where a QP the plan did not foresee may start.
  uint64_t end() const { return end_; }

 private:
  friend QpNumbering number_qps(const config::RunConfig&, const AddressPlan&, const TrafficPlan&,
                                const SourceMap&, Diagnostics&);
  struct Entry {
    uint32_t job = 0;
    int32_t rank = 0;
    int32_t peer = 0;
    uint32_t qp = 0;
    auto operator<=>(const Entry&) const = default;
  };
  std::vector<std::vector<Entry>> by_port_;  // sorted; entry i has number ports_[p].first + i
  std::vector<PortQpnRange> ports_;
  std::vector<std::vector<uint32_t>> port_of_;  // [job][rank]
  uint64_t count_ = 0;
  uint64_t end_ = 0;
};

// Numbers the QPs `traffic`'s connections open. Reports, at the port's key, numbers that run past
// 24 bits and ports whose numbers overlap another's (explicit qpn_base values).
QpNumbering number_qps(const config::RunConfig& config, const AddressPlan& addresses,
                       const TrafficPlan& traffic, const SourceMap& where, Diagnostics& out);

}  // namespace etwire::control
