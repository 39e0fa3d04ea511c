// `telemetry:` — where results go and what is recorded; the Prometheus metrics endpoint.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace etwire::config {

struct MetricsEndpoint {
  bool enabled = true;
  // Loopback only unless the config names another address: metrics expose lab topology.
  std::string address = "127.0.0.1";
  uint16_t port = 9464;
  uint64_t linger_ns = 0;   // keep serving this long after the run so the last values are scraped
  std::string pushgateway;  // "http://host:9091" to push at the end of short runs; "" = off
  bool per_qp = false;      // series per QP half (cardinality: two per connection)
};

struct RecordConfig {
  bool flows = true;        // flows.csv
  bool collectives = true;  // collectives.csv
  bool qps = true;          // qps.csv: one row per QP half
  // nodes.csv: one row per trace node that took time. Unset: on, except in a run split between
  // emulator processes, where it is not built.
  std::optional<bool> nodes;
  bool pcap = false;                      // capture/<port>.pcapng: every frame, both ways
  uint64_t queue_sample_interval_ns = 0;  // twin queue-depth samples; 0 = off
  // ports.csv: port counters over time; 0 = off. Unset: 20 us of virtual time on the fabric twin,
  // 10 ms on the wall clock (devices), a few hundred samples either way on a typical run.
  std::optional<uint64_t> port_sample_interval_ns;
};

// A switch port of the fabric twin whose frames record.pcap captures too.
struct CapturedSwitchPort {
  std::string name;      // as the twin names it: "leaf0/spine1", "spine0/leaf3", "leaf1/nic4"
  std::string key_path;  // "telemetry.capture.switch_ports[0]", for messages
};

// What record.pcap keeps: limits that keep a run from filling the disk, and the twin's switch
// ports captured besides the run's own ports.
struct CaptureConfig {
  uint64_t snap_length = 0;                      // bytes kept of each frame; 0: whole frames
  uint64_t max_bytes = 1ull << 30;               // of all capture files together; 0: no limit
  uint64_t max_packets = 0;                      // frames of all files together; 0: no limit
  std::vector<CapturedSwitchPort> switch_ports;  // capture/fabric/<switch>/<peer>.pcapng
};

struct TelemetryConfig {
  MetricsEndpoint metrics;
  // Results directory; relative paths are relative to the working directory of the run.
  std::string output_dir = "results";
  RecordConfig record;
  CaptureConfig capture;
};

}  // namespace etwire::config
