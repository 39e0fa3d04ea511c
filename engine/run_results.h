// What a run produced, as plain data: the run's outcome, every collective instance, every
// iteration of every job, the counters of every port and the flow completion times. The run
// engine fills it; the result files (summary.json, collectives.csv) and the console report read
// it. Flow records themselves are streamed to flows.csv as flows finish and are not held here.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clock/time.h"
#include "collectives/algorithm.h"
#include "config/protocol.h"
#include "dataplane/port_counters.h"
#include "transport/flow_record.h"
#include "transport/qp_counters.h"

namespace etwire::engine {

enum class RunStatus : uint8_t {
  kCompleted,    // every rank of every job replayed every iteration
  kFlowsFailed,  // completed, but some flows exhausted their retries (counted per port and flow)
  kStuck,        // the watchdog stopped a run that made no progress; see RunResults::diagnosis
  kInterrupted,  // SIGINT/SIGTERM/SIGHUP: stopped early, results so far written
  kFailed,       // an error in a trace (found while replaying it) stopped the run
};
// "completed", "flows-failed", "stuck", "interrupted", "failed"
std::string_view run_status_name(RunStatus status);
// The inverse of run_status_name; nullopt for a name no status has.
std::optional<RunStatus> run_status_named(std::string_view name);

// "ALL_REDUCE" and the other schema names in diagnoses; "SEND/RECV" for point-to-point.
std::string kind_label(collectives::CollectiveKind kind);

// Process-group id of point-to-point instances (a SEND matched with its RECV); collectives use the
// control library's group keys (a comm-group id, or -1 for the all-ranks group).
inline constexpr int64_t kPointToPointGroup = -2;

// One collective instance: the members of one process group joining their n-th collective, or
// one SEND matched with its RECV.
struct CollectiveRecord {
  uint64_t instance = 0;  // unique in the run, numbered in order of first arrival
  uint32_t job = 0;
  collectives::CollectiveKind kind;  // nullopt: point-to-point send/recv
  collectives::Algorithm algorithm = collectives::Algorithm::kRing;
  config::Protocol protocol = config::Protocol::kSimple;  // how its transfers went on the wire
  int64_t group = 0;      // group key; kPointToPointGroup for send/recv
  uint64_t sequence = 0;  // n-th collective of the group (p2p: n-th send of the pair and tag)
  uint32_t group_size = 0;
  int32_t tag = 0;  // p2p only
  // Point-to-point only: the sender and receiver ranks.
  int32_t src = 0;
  int32_t dst = 0;
  uint64_t trace_bytes = 0;        // comm_size as the trace states it
  uint64_t algbw_bytes = 0;        // the bytes algbw counts (nccl-tests convention)
  uint64_t wire_bytes = 0;         // payload bytes every member sent over the network (in the
                                   // protocol's lines), summed
  uint32_t iteration = 0;          // of the job, counting warm-up iterations from 0
  bool warmup = false;             // in a warm-up iteration: not in the reported statistics
  clock::Nanos first_arrival = 0;  // the first member reached the node
  // The last member reached it: the collective can run fully. Point-to-point: the SEND was issued
  // (sends are eager, the RECV may come later).
  clock::Nanos last_arrival = 0;
  clock::Nanos end = 0;  // the last member's part completed
  uint64_t flows = 0;
  uint64_t failed_flows = 0;

  // Collective completion time: from the last arrival to the end. Arrival skew (compute imbalance
  // between ranks) is last_arrival - first_arrival and is not network time.
  clock::Nanos cct() const { return end - last_arrival; }
  double algbw_bytes_per_second() const;
  double busbw_bytes_per_second() const;

  bool operator==(const CollectiveRecord&) const = default;
};

// One rank in one iteration: where its time went. Busy times are unions of intervals, so
// overlapping nodes of one kind count once.
struct RankIteration {
  clock::Nanos start = 0;
  clock::Nanos end = 0;
  clock::Nanos compute_ns = 0;       // a compute or memory node was running
  clock::Nanos comm_ns = 0;          // a communication node was running
  clock::Nanos exposed_comm_ns = 0;  // communication ran and no compute did

  bool operator==(const RankIteration&) const = default;
};

struct IterationRecord {
  uint32_t job = 0;
  uint32_t iteration = 0;  // counting warm-up iterations from 0
  bool warmup = false;
  clock::Nanos start = 0;            // the first rank began it
  clock::Nanos end = 0;              // the last rank finished it
  std::vector<RankIteration> ranks;  // by rank

  clock::Nanos jct() const { return end - start; }
  // The largest exposed communication of any rank: the communication time the job waited for.
  clock::Nanos max_exposed_comm() const;

  bool operator==(const IterationRecord&) const = default;
};

using dataplane::PortQueueRecord;
using dataplane::PortRecord;

// Flow completion time percentiles of one kind of collective (measured iterations only).
struct FctPercentiles {
  collectives::CollectiveKind kind;
  uint64_t flows = 0;
  clock::Nanos p50 = 0;
  clock::Nanos p90 = 0;
  clock::Nanos p99 = 0;
  clock::Nanos p999 = 0;
  clock::Nanos max = 0;

  bool operator==(const FctPercentiles&) const = default;
};

// One QP half of our transport over the run (qps.csv): what the transport counted, and the
// connection it belongs to as the engine opened it.
struct QpRecord {
  transport::QpStats stats;
  // The engine opened the connection (job and ranks are set); false for a half the engine did
  // not open, which a data plane should not have.
  bool known = false;
  uint32_t job = 0;
  int32_t rank =
      0;  // the rank on the QP's port: the sender of a requester, the receiver of a responder
  int32_t peer = 0;       // the rank at the other end
  uint32_t qp_index = 0;  // which of the QPs between the two ranks (collectives.qps_per_peer)

  bool operator==(const QpRecord&) const = default;
};

struct JobSummary {
  std::string name;
  std::string trace;
  int32_t world_size = 0;
  uint32_t iterations = 0;
  uint32_t warmup_iterations = 0;
  uint64_t nodes_issued = 0;

  bool operator==(const JobSummary&) const = default;
};

struct RunResults {
  RunStatus status = RunStatus::kCompleted;
  std::string diagnosis;  // stuck or interrupted: what waited on what; empty otherwise
  std::string run_name;
  std::string config_file;
  std::string
      config_digest;  // "fnv1a64:<16 hex digits>" of the config file's bytes and --set overrides
  uint64_t seed = 0;
  std::string topology;
  int32_t world_size = 0;     // ranks over every job
  clock::Nanos end_time = 0;  // data-plane time when the run stopped
  bool wall_clock = false;    // the data plane ran on the wall clock (else virtual time)
  double wall_seconds = 0;
  uint64_t events = 0;  // scheduler events processed
  // Payload rate of the slowest port at full PMTU: payload / (payload + overhead) x line rate.
  // The reference for ideal %.
  double goodput_bytes_per_second = 0;
  std::vector<JobSummary> jobs;
  std::vector<CollectiveRecord> collectives;  // completed instances, in order of completion
  std::vector<IterationRecord> iterations;    // completed iterations, by job then iteration
  std::vector<PortRecord> ports;
  // The fabric twin's aggregation hosts (CollNet, twin::aggregation_hosts), which are no run
  // port: qps.csv and flows.csv number them after the ports.
  std::vector<std::string> aggregation_hosts;
  std::vector<FctPercentiles> fct;  // one per collective kind that moved flows
  // Every QP half on the ports of the run, when its data plane runs our transport (qps_counted);
  // an RNIC's QPs are not ours to count, and are absent rather than zero.
  bool qps_counted = false;
  std::vector<QpRecord> qps;
  uint64_t flows = 0;
  uint64_t failed_flows = 0;
  // Flows by how they ended (transport::FlowStatus): which errors the failed ones met.
  std::array<uint64_t, transport::kFlowStatusCount> flows_by_status{};
  // What the data plane reported of its setup and its devices: the GID each RNIC port uses, how
  // rate limits are held, DCQCN settings read back or applied, device errors.
  std::vector<std::string> notes;

  // Member by member, as every record here: what a record read back from summary.json or from a
  // partial result's bytes is held to.
  bool operator==(const RunResults&) const = default;
};

}  // namespace etwire::engine
