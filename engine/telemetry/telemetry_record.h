// What the data plane tells telemetry: fixed-size records without strings or pointers, so a
// worker hands one over by copying a few words into its ring (record_ring.h) and never waits for
// the exporter. Jobs, ports and collective types are indexes into the MetricLabels the exporter
// was built with. Counters travel as running totals (a snapshot), so a lost record loses no
// counts; samples (a flow's FCT, a collective's CCT) travel one per record.
#pragma once

#include <array>
#include <cstdint>
#include <type_traits>

#include "dataplane/port_counters.h"
#include "transport/qp_counters.h"

namespace etwire::telemetry {

// Collective types use trace::CollectiveType's values; point-to-point SEND/RECV is one past them.
inline constexpr uint8_t kSendRecvKind = 10;
inline constexpr uint8_t kKindCount = kSendRecvKind + 1;

// Where a run stands; the values of etwire_run_state's `state` label, in this order.
enum class RunState : uint8_t { kRunning, kCompleted, kFlowsFailed, kStuck, kInterrupted, kFailed };
inline constexpr int kRunStateCount = 6;

enum class RecordType : uint8_t {
  kFlow,
  kCollective,
  kIteration,
  kJobProgress,
  kPort,
  kRun,
  kQueue,
  kQp
};

// One flow (message) of a measured iteration finished.
struct FlowSample {
  uint32_t job;
  uint8_t kind;
  uint8_t algorithm;  // collectives::Algorithm
  bool failed;        // retries exhausted or flushed: counted, not in the FCT histogram
  int64_t fct_ns;
};

// One collective instance (or SEND/RECV pair) of a measured iteration completed.
struct CollectiveSample {
  uint32_t job;
  uint8_t kind;
  uint8_t algorithm;
  int64_t cct_ns;
  double algbw_bytes_per_second;
  double busbw_bytes_per_second;
};

// Every rank of a job finished one iteration.
struct IterationSample {
  uint32_t job;
  uint32_t iteration;  // counting warm-up iterations from 0
  bool warmup;
  int64_t jct_ns;
  int64_t max_exposed_comm_ns;
};

// A job's running totals.
struct JobProgress {
  uint32_t job;
  uint32_t iterations_completed;  // warm-up included
  uint64_t nodes_completed;       // over every rank and iteration so far
};

// A port's running totals (the run's PortRecord counters, in dataplane::kPortCounterFields'
// order) and its paced rate now.
struct PortSample {
  uint32_t port;
  std::array<uint64_t, dataplane::kPortCounterFields.size()> counters;
  double paced_rate_bytes_per_second;
};

// A sample of one of the fabric twin's switch egress queues (telemetry.record
// .queue_sample_interval): its depth, and its link's utilization over the interval before.
struct QueueDepthSample {
  uint32_t switch_port;  // an index into MetricLabels::switch_ports
  uint8_t priority;
  uint64_t depth_bytes;
  double utilization;
};

// A QP half's running totals (transport::kQpCounterFields' order) and its DCQCN rate now; only
// with telemetry.metrics.per_qp. Named by numbers, which the exporter turns into labels: the run
// port of each end, the role and the QP number on the wire.
struct QpSample {
  uint32_t port;
  uint32_t remote_port;
  uint32_t qpn;
  transport::QpRole role;
  std::array<uint64_t, transport::kQpCounterFields.size()> counters;
  uint64_t rate_cuts;
  double rate_bytes_per_second;
};

// The run's state and its data plane's clock.
struct RunSample {
  RunState state;
  int64_t virtual_time_ns;
};

struct Record {
  RecordType type;
  union {
    FlowSample flow;
    CollectiveSample collective;
    IterationSample iteration;
    JobProgress job;
    PortSample port;
    RunSample run;
    QueueDepthSample queue;
    QpSample qp;
  };

  static Record of(const FlowSample& s) { return make(RecordType::kFlow, &Record::flow, s); }
  static Record of(const CollectiveSample& s) {
    return make(RecordType::kCollective, &Record::collective, s);
  }
  static Record of(const IterationSample& s) {
    return make(RecordType::kIteration, &Record::iteration, s);
  }
  static Record of(const JobProgress& s) { return make(RecordType::kJobProgress, &Record::job, s); }
  static Record of(const PortSample& s) { return make(RecordType::kPort, &Record::port, s); }
  static Record of(const RunSample& s) { return make(RecordType::kRun, &Record::run, s); }
  static Record of(const QueueDepthSample& s) {
    return make(RecordType::kQueue, &Record::queue, s);
  }
  static Record of(const QpSample& s) { return make(RecordType::kQp, &Record::qp, s); }

 private:
  template <typename T>
  static Record make(RecordType type, T Record::*member, const T& sample) {
    Record record;
    record.type = type;
    record.*member = sample;
    return record;
  }
};

static_assert(std::is_trivially_copyable_v<Record>, "records are copied into rings as bytes");
// A QP's record is no larger than a port's: per-QP series do not make every record bigger.
static_assert(sizeof(QpSample) <= sizeof(PortSample));

}  // namespace etwire::telemetry
