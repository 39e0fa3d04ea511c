// What a run will put on each port: from every job's trace (the collectives and point-to-point
// operations each rank issues, with their process groups and sizes) and the collective programs
// the configured algorithms generate, the bytes each port sends and receives in one iteration,
// the peers and QPs each rank connects, and the busiest port. This is `etwire plan`'s arithmetic;
// no timing is modelled beyond a line-rate lower bound.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collectives/collective_spec.h"
#include "config/run_config.h"
#include "control/load/diagnostic.h"
#include "control/plan/collective_choice.h"

namespace etwire::control {

struct RunPlan;

struct RankTrafficPlan {
  uint64_t network_bytes_sent = 0;      // to ranks on other hosts: crosses the rank's port
  uint64_t network_bytes_received = 0;  // from ranks on other hosts
  uint64_t scale_up_bytes_sent = 0;     // to ranks on the same host: local interconnect
  uint32_t peers = 0;  // ranks it exchanges data with (either direction), local ones included
  uint32_t qps = 0;    // QPs over those connections: per peer, the QP ids either side sends on
  // The most switches of the fabric twin a network message of the rank (either direction)
  // crosses: its path length there. 0 when none of its traffic crosses its port, or when the
  // ports are cabled to a device under test, whose paths etwire does not know.
  uint32_t max_switches = 0;
};

struct PortTrafficPlan {
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
  // Lower bound on the time to move the larger direction at the port's line rate, counting
  // RoCEv2 framing per PMTU packet (headers, ICRC, FCS, preamble and gap).
  uint64_t line_time_ns = 0;
  uint32_t ranks = 0;
};

// What the fabric twin's aggregation host k (CollNet, twin::aggregation_hosts) receives from the
// ranks and sends back to them, in one iteration of every job.
struct AggregationHostTraffic {
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
};

// A direction of a connection that carries network traffic: rank `src` sends to rank `dst` (on
// another host) on QP id `qp`.
struct PlannedConnection {
  int32_t src = 0;
  int32_t dst = 0;
  uint16_t qp = 0;
  auto operator<=>(const PlannedConnection&) const = default;
};

// Ranks of a job that exchange traffic across planes of a multi-plane twin, which no path joins:
// the first such connection, the planes of its ends, and how many connections cross.
struct PlaneCrossing {
  PlannedConnection first;
  uint32_t src_plane = 0;
  uint32_t dst_plane = 0;
  size_t connections = 0;
};

// What the tuner (`auto` in collectives.protocol or collectives.algorithms) picked for one
// distinct collective of a job.
struct TunerPick {
  size_t job = 0;
  trace::CollectiveType type = trace::CollectiveType::kAllReduce;
  int64_t group = 0;
  uint32_t ranks = 0;
  uint64_t bytes = 0;  // comm_size as the trace states it
  collectives::Algorithm algorithm = collectives::Algorithm::kRing;
  CollectiveChoice choice;
};

struct TrafficPlan {
  std::vector<std::vector<RankTrafficPlan>> jobs;  // [job][rank], one iteration of the job
  // [job]: every direction of a connection that carries network traffic, sorted. A run split
  // between emulator processes opens the receiving halves of these before any traffic.
  std::vector<std::vector<PlannedConnection>> connections;
  std::vector<PortTrafficPlan> ports;                     // one iteration of every job
  std::vector<AggregationHostTraffic> aggregation_hosts;  // after the ports, likewise
  std::optional<size_t> busiest_port;  // most bytes in one direction; none if idle
  uint64_t programs_generated = 0;     // distinct collectives turned into programs
  uint32_t max_qps_per_peer = 0;       // most QPs any rank pair uses
  std::vector<std::optional<PlaneCrossing>> plane_crossings;  // [job]
  std::vector<TunerPick> tuner_choices;  // collectives tuned (an `auto`) only, in plan order
};

// The generation choices every collective of job `job` shares (chunking, QPs per peer, byte
// convention, hosts, barrier size); the caller adds the collective, its ranks, size and algorithm.
collectives::CollectiveSpec base_collective_spec(const config::RunConfig& config, size_t job);

// Needs a loaded config without errors, with traces read and addresses assigned. Problems the
// generator finds (a collective it cannot build) are added to `out` as errors.
TrafficPlan plan_traffic(const RunPlan& loaded, Diagnostics& out);

// On a multi-plane twin (fabric.rails.planes > 1): an error for each job whose ranks exchange
// traffic across planes, which no path joins, as the plan's traffic (RunPlan::traffic) shows.
void check_plane_crossings(const RunPlan& loaded, Diagnostics& out);

}  // namespace etwire::control
