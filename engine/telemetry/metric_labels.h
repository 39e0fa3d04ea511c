// The names behind the indexes in telemetry records, fixed when a run starts: the run, the host,
// its jobs and its ports. They become the low-cardinality labels of every metric (run, host, job,
// port); flow and QP ids never do.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace etwire::telemetry {

struct JobLabel {
  std::string name;
  uint32_t iterations = 0;  // planned: warm-up + measured
  uint64_t nodes = 0;       // trace nodes to replay over the whole run (every rank and iteration)
};

struct PortLabel {
  std::string name;
  uint64_t speed_bps = 0;
  uint32_t absent = 0;  // counters the port's device does not count (PortRecord::absent)
};

struct MetricLabels {
  std::string run;
  // The emulator host this process runs on. A run split between processes on several hosts has
  // one endpoint per process, and this label tells their series apart; empty means this machine's
  // host name (filled in by the exporter).
  std::string host;
  std::string topology;
  std::string config_digest;
  std::vector<JobLabel> jobs;
  std::vector<PortLabel> ports;
  // The fabric twin's switch ports ("leaf0/spine1"), by global index, when its queues are
  // sampled (telemetry.record.queue_sample_interval); empty otherwise.
  std::vector<std::string> switch_ports;
  // telemetry.metrics.per_qp: QP records become series labelled by QP (else they are ignored).
  bool per_qp = false;
};

}  // namespace etwire::telemetry
