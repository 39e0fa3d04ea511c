// QP numbers as a run uses them: only the QPs its traffic opens get one.
//
// A QP is a rank's end towards a peer on a QP id (channel x qps_per_peer + piece, the collective
// program's qp field): the requester of the rank's connection to the peer and the responder of
// the peer's connection to it, as one RC QP serves both directions. The traffic plan names every
// connection that carries network traffic; each of its two ends is a QP.
//
// Each QP has two numbers. Its number on the wire is its device's (port's), as an RNIC numbers
// its own QPs: every port numbers its QPs from its qpn_base (else mapping.addressing.qpn_base), so
// the 24 bits bound the QPs of one port, not of the run, and a QP is named on the wire by its
// port and number. Its run number is unique in the run, 32 bits wide: the data planes, the
// transport and the engine key QPs by it, and records show the wire number (`wire`). Run numbers
// are given port by port from mapping.addressing.qpn_base, so on the first port both are equal.
// A port's QPs are numbered in (job, rank, peer, QP id) order either way: a port's numbers are
// contiguous, and so are a rank's. Every run (plan, validate, run, each process of a split run)
// derives the same numbers from the same plan.
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
  // The run number of `rank`'s QP `qp` towards `peer` (ranks of `job`), or nullopt when the plan
  // opens no such QP.
  std::optional<uint32_t> find(size_t job, int32_t rank, int32_t peer, uint32_t qp) const;
  // A port's run numbers (count 0: no QP on it).
  const PortQpnRange& port(size_t port) const { return ports_[port]; }
  // A rank's run numbers, contiguous (count 0: it opens no QP).
  PortQpnRange rank(size_t job, int32_t rank) const;
  // The same ranges as numbered on the wire by the port's device.
  PortQpnRange wire_port(size_t port) const { return {wire_first_[port], ports_[port].count}; }
  PortQpnRange wire_rank(size_t job, int32_t rank) const;
  // The wire number of the QP of run number `number` on `port`. A number the plan did not give
  // (past end()) is its own wire number.
  uint32_t wire(size_t port, uint32_t number) const {
    if (port >= ports_.size() || number < ports_[port].first ||
        number - ports_[port].first >= ports_[port].count) {
      return number;
    }
    return wire_first_[port] + (number - ports_[port].first);
  }
  // Every QP numbered.
  uint64_t count() const { return count_; }
  // The first number after every numbered one, run or wire: where a QP the plan did not foresee
  // may start.
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
  std::vector<uint32_t> wire_first_;            // per port
  std::vector<std::vector<uint32_t>> port_of_;  // [job][rank]
  uint64_t count_ = 0;
  uint64_t end_ = 0;
};

// Numbers the QPs `traffic`'s connections open. Reports, at the port's key, a port whose wire
// numbers run past 24 bits, and a run whose run numbers pass 32.
QpNumbering number_qps(const config::RunConfig& config, const AddressPlan& addresses,
                       const TrafficPlan& traffic, const SourceMap& where, Diagnostics& out);

}  // namespace etwire::control
