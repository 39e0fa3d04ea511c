// What the run engine drives: a clock, the transport on it and the ports under it. Two kinds
// exist: the loopback data plane (virtual clock, fabric twin) and packet backends on the wall
// clock (DPDK). The engine replays a trace the same way on either; only how time passes differs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clock/scheduler.h"
#include "config/addresses.h"
#include "config/run_config.h"
#include "dataplane/port_counters.h"
#include "dataplane/queue_row.h"
#include "dataplane/report_lanes.h"
#include "nic/frame/wire_route.h"
#include "transport/qp_counters.h"
#include "transport/transport.h"

namespace etwire::dataplane {

// One end of a connection as the wire sees it: the port it leaves or enters by, the rank's
// addresses and its QP numbers. The loopback data plane needs only the port; a packet backend puts
// the rest in frames.
struct WireEndpoint {
  uint32_t port = 0;
  config::MacAddress mac;
  config::Ipv4Address ipv4;
  std::optional<config::Ipv6Address> ipv6;
  uint32_t qpn = 0;       // the QP's run number, which the transport keys it by
  uint32_t wire_qpn = 0;  // its number on the wire, its port's own (0: the same as qpn)
};

// A connection the engine asks for: its two ends and its ECMP entropy.
struct WireConnection {
  WireEndpoint requester;  // the sending rank
  WireEndpoint responder;  // the receiving rank
  uint16_t udp_source_port = 0;
};

class DataPlane {
 public:
  virtual ~DataPlane() = default;

  // The clock the engine schedules its own events on.
  virtual clock::Scheduler& scheduler() = 0;
  virtual size_t ports() const = 0;

  // True for a virtual clock: time jumps to the next event, and no pending event means nothing
  // can happen any more. False for the wall clock: packets may be in flight while no event is
  // pending, and the data plane must be polled continuously.
  virtual bool virtual_time() const = 0;
  // Virtual time: when the earliest pending event is due. Wall clock: now.
  virtual clock::Nanos next_event_time() const = 0;
  // Runs what is due: events, and on a packet backend the frames waiting to leave or arrive.
  // Flow events reach the observer from in here.
  virtual void poll() = 0;
  // Called once when the run begins, before any event is scheduled: a wall clock counts the run's
  // time from here, not from the device setup.
  virtual void start() {}
  // Called once when the run ends, before the last port records are read: workers on other
  // cores stop, and their counters become final.
  virtual void finish() {}
  // Events run so far (the results' `events`).
  virtual uint64_t events_run() const = 0;

  // Opens a reliable connection: the transport that drives each end's port opens that half, with
  // the end's QP number. Returns the two QP numbers. Throws std::invalid_argument when the two
  // ports cannot reach each other (back-to-back ports reach only their peer) or a QP number is
  // taken.
  virtual transport::ConnectionId connect(const WireConnection& connection) = 0;
  // A run split between emulator processes: called on every process once the connections of
  // the traffic plan are opened, before the start barrier. A data plane whose connections need
  // what only another process knows (an RNIC's QP numbers and GIDs) exchanges it here and
  // completes them. Collective. Throws std::runtime_error when a connection cannot be completed.
  virtual void finish_connecting() {}
  // Whether the device numbers its QPs itself (an RNIC): its flow records then carry the device's
  // numbers, recorded_requester_qpn gives them, and it reports no QP statistics. Otherwise
  // records carry the plan's run numbers, which the engine shows as wire numbers.
  virtual bool numbers_its_qps() const { return false; }
  // The QP number this data plane's flow records carry for the requester the address plan
  // numbers `plan_qpn`: the plan's own, except on an RNIC.
  virtual uint32_t recorded_requester_qpn(uint32_t plan_qpn) const { return plan_qpn; }
  // Queues a message on a connection (transport::Transport::post).
  virtual void post(transport::ConnectionId connection, uint64_t bytes,
                    const transport::FlowTags& tags) = 0;
  // Flows posted and not yet finished.
  virtual uint32_t flows_in_progress() const = 0;
  // Whether this data plane runs the engine's work on its flow reports in lanes on its own
  // threads (report_lanes.h); if so it opens them here and uses them from its next poll on.
  // `lanes` must outlive the data plane.
  virtual bool run_report_lanes(ReportLanes& lanes) {
    (void)lanes;
    return false;
  }

  // Counters of port `port` so far, in the engine's terms.
  virtual PortRecord port_record(size_t port) const = 0;
  // Only the counters of port_record(port), read without allocating (the port time series reads
  // them every sample).
  virtual PortCounters port_counters(size_t port) const { return port_record(port); }
  // Brings the counters together where the data plane runs in several processes (the fabric
  // twin's partitions spread over an MPI session): port_counters(), port_record() and
  // paced_rates_bps() then read every process's, as of this call. Collective there, at the same
  // place of the run in every process (the port time series, before each sample); nothing to do
  // in one process.
  virtual void settle_counters() {}

  // Appends every QP half our transport holds on this process's ports, with its counters and
  // DCQCN rates as of now (qps.csv), and returns true; false, appending nothing, when the QPs are
  // not ours to count (an RNIC's). On the wall clock only after finish(), when the workers on
  // other cores have stopped.
  virtual bool append_qp_stats(std::vector<transport::QpStats>& out) {
    (void)out;
    return false;
  }

  // Per port: the sum of the DCQCN rates of its QPs with data to send, at most its line rate.
  virtual void paced_rates_bps(std::vector<double>& per_port) = 0;

  // Samples the fabric twin's switch egress queues into `sink` every `interval_ns` of virtual
  // time while anything else is pending (telemetry.record.queue_sample_interval). Before the run;
  // only the loopback data plane has the twin's queues (validate refuses the key elsewhere).
  virtual void sample_queues(QueueSink& sink, clock::Nanos interval_ns) {
    (void)sink;
    (void)interval_ns;
  }
  // The names of the twin's switch ports by index, as queue samples number them; empty without.
  virtual std::vector<std::string> switch_port_names() const { return {}; }

  // What the operator should know of the data plane's setup and devices (the GID an RNIC port
  // uses, how a rate limit is held, DCQCN settings, device errors), one sentence each; the run's
  // summary carries them.
  virtual std::vector<std::string> notes() const { return {}; }

  // telemetry.record.pcap: starts writing every port's frames to <dir>/capture/<port>.pcapng,
  // before the run. Throws std::runtime_error naming what cannot be created. A data plane whose
  // NICs build the frames themselves (verbs) captures nothing; validate says so.
  virtual void capture_frames(const std::string& dir) { (void)dir; }
};

// Builds the data plane a configuration asks for; `observer` gets the transport's flow events.
// Both must outlive the data plane.
using DataPlaneFactory =
    std::function<std::unique_ptr<DataPlane>(const config::RunConfig&, transport::FlowObserver&)>;

// The addresses of frames from `from` to `to`: their MACs and IPs, the run's IP version and the
// sending port's VLAN. The destination MAC is the sending port's next_hop_mac when it has one
// (a router under test), else `to`'s.
frame::FrameAddresses wire_addresses(const WireEndpoint& from, const WireEndpoint& to,
                                     const config::RunConfig& config);
// A connection's route with both ends on queue 0 (a backend with several queues sets them).
nic::WireRoute wire_route(const WireConnection& connection, const config::RunConfig& config);

// Payload bytes per second a port carries at full PMTU: pmtu / (pmtu + per-packet overhead) of
// its line rate.
double goodput_bytes_per_second(const config::RunConfig& config, size_t port);

}  // namespace etwire::dataplane
