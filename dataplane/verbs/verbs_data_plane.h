// The data plane of a run whose ports are verbs ports: RC queue pairs on RDMA NICs, through the
// verbs seam (nic/verbs/verbs_api.h). The NIC runs the transport here (segmentation, ACKs,
// retransmission, DCQCN), so this data plane has no transport or worker loop of its own: it
// implements DataPlane itself, with device ports, its clock, and a poll() that drains the
// completion queues (posting the work they make room for), and it reports through the same flow
// join and port-counter table as the other backends.
//
// Per device: one protection domain, one registered buffer that every work request reads from and
// writes into, one completion queue for the sends and receives of its queue pairs. Per connection
// of the plan: a requester QP on the sending port's device and a responder QP on the receiving
// port's, moved RESET -> INIT -> RTR -> RTS with the run's PSN, path MTU, timeout, retry and RNR
// counts, the port's traffic class and priority, and the peer's GID and QP number. A message is
// posted as work requests of at most verbs.max_message bytes (transport.op: WRITE, WRITE WITH
// IMMEDIATE on the last, or SENDs); receives are posted ahead for WITH IMMEDIATE and SEND. A work
// completion with an error fails its message with the status (flow record and summary) and, as on
// the device, puts the QP in error: what follows on it is flushed. A device error during the run
// (a refused post, a completion queue that overran) fails the flows of the connections it
// touches the same way (device-error, then flushed) and says so in a note; the run goes on.
//
// One thread drives every device: the NIC does the per-packet work, and at 1 MiB per work
// request a 400 Gb/s port needs fewer than 50,000 posts a second.
//
// On a real RNIC the clock is the wall clock; on the software RNIC it is that RNIC's virtual
// clock, which the engine runs like the loopback data plane's.
//
// Split between emulator processes, each process opens only the devices of its own ports and
// creates only its halves of the connections: a connection between ports of two processes has
// its requester QP in one and its responder QP in the other. What only the devices know (QP
// numbers, GIDs, starting PSNs, the responder buffer's address and rkey) is exchanged over MPI
// once every planned connection is opened (finish_connecting); then each process moves its QPs
// to RTR and RTS with its peers' facts. From then on, the processes meet only on the wire.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "clock/scheduler.h"
#include "clock/virtual_clock.h"
#include "clock/wall_clock.h"
#include "cluster/session.h"
#include "common/ring_queue.h"
#include "config/run_config.h"
#include "dataplane/data_plane.h"
#include "dataplane/flow_join.h"
#include "nic/verbs/verbs_api.h"

namespace etwire::dataplane {

// Where the host keeps what the RNICs expose besides verbs: their counters and DCQCN settings.
struct RnicHostPaths {
  std::string infiniband = "/sys/class/infiniband";
  std::string net = "/sys/class/net";
};

class VerbsDataPlane final : public DataPlane, private clock::EventHandler {
 public:
  // Opens the devices of every port through `provider` (which it keeps), checks each port (up,
  // Ethernet, active MTU, the GID of its address), registers the buffers and creates the completion
  // queues. `virtual_clock`: the software RNIC's clock, which the RNIC's events are on; nullptr for
  // the wall clock (a real RNIC, or the software RNIC across processes). `processes`: the run's
  // emulator processes; with more than one (and an emulators section), only this process's ports.
  // With a real RNIC, the DCQCN settings are read back from the device and, with verbs.dcqcn:
  // apply, written first. Throws std::invalid_argument when a port is not a verbs port,
  // std::runtime_error (the device's words) when a device or port cannot be used. `config` and
  // `observer` must outlive the data plane.
  VerbsDataPlane(const config::RunConfig& config, transport::FlowObserver& observer,
                 std::unique_ptr<nic::verbs::VerbsProvider> provider,
                 clock::VirtualClock* virtual_clock, RnicHostPaths paths = {},
                 const cluster::Session* processes = nullptr);
  ~VerbsDataPlane() override;

  clock::Scheduler& scheduler() override { return *clock_; }
  size_t ports() const override { return ports_.size(); }
  bool virtual_time() const override { return wall_ == nullptr; }
  clock::Nanos next_event_time() const override;
  void poll() override;
  void start() override;
  uint64_t events_run() const override { return events_; }
  // Creates and connects the connection's two QPs. Throws std::runtime_error naming the device,
  // port, QP (once it has a number), connection and failed call, with the device's words, when a
  // QP cannot be created or moved to RTS, or its receives or rate limit are refused. Split: a
  // connection with one end elsewhere gets its QP here created and in INIT; finish_connecting()
  // completes it.
  transport::ConnectionId connect(const WireConnection& connection) override;
  void finish_connecting() override;
  bool numbers_its_qps() const override { return true; }
  uint32_t recorded_requester_qpn(uint32_t plan_qpn) const override;
  void post(transport::ConnectionId connection, uint64_t bytes,
            const transport::FlowTags& tags) override;
  uint32_t flows_in_progress() const override { return static_cast<uint32_t>(join_.in_progress()); }
  // The device's counters since start(); those it does not expose are marked absent.
  PortRecord port_record(size_t port) const override;
  // Per port: the per-QP rate limits of its connections with work outstanding, at most its line
  // rate; 0 where no limit is set (the NIC's DCQCN rates are not visible through verbs).
  void paced_rates_bps(std::vector<double>& per_port) override;
  std::vector<std::string> notes() const override;
  // Adds the notes `source` gives at the end of the run to this data plane's own (the software
  // RNIC's twin: what its faults did). `source` must outlive the data plane.
  void add_note_source(std::function<std::vector<std::string>()> source) {
    note_sources_.push_back(std::move(source));
  }

  struct Device;
  struct Port;
  struct Connection;

 private:
  // The engine sees the device's QP numbers in flow records; the join knows the plan's.
  class DeviceQpNumbers;

  void on_event(uint64_t tag, clock::Nanos now) override;
  void post_work(Connection& c);
  // Takes every completion the device has; returns how many.
  size_t poll_device(Device& device);
  void on_send_completion(Connection& c, const ibv_wc& wc);
  void on_receive_completion(Connection& c, const ibv_wc& wc);
  // The device's completion queue overran: every connection with a QP on it fails.
  void on_cq_overrun(Device& device);
  // What becomes of the requester QP's outstanding work when its connection fails.
  enum class QpAfterFailure {
    kLeave,        // it completes as the device says (a refused post leaves the QP as it was)
    kMoveToError,  // the QP is moved to ERR, so that it comes back flushed
    kWriteOff,     // its completion queue is gone: nothing will come back
  };
  // A device error on the connection (a refused post, a lost completion queue): it takes no more
  // work; message `first_failed` (an index in its queue) fails as device-error and those behind
  // it as flushed, unless a completion already failed them.
  void fail_connection(Connection& c, size_t first_failed, QpAfterFailure qp);
  // Whether one more failure may be quoted in the notes (the summary counts the rest).
  bool quote_failure();
  void settle(Connection& c);
  void check_dcqcn(const config::PortConfig& port, const Port& p);
  // Moves the connection's QPs here to RTR and RTS with their peers' facts, posts its receives
  // and sets its rate limit.
  struct PeerFacts;
  PeerFacts local_facts(const Connection& c, bool requester) const;
  void complete_connection(Connection& c, const PeerFacts& requester, const PeerFacts& responder);
  // The device of a port this process drives; nullptr for another process's.
  Device* device_of(size_t port) const;
  // "ports "a" -> "b"": how messages name a connection.
  std::string ports_between(uint32_t from, uint32_t to) const;
  // A refused QP transition to `state`, in words naming the device, port, QP and connection.
  std::runtime_error modify_failed(const nic::verbs::VerbsQp& qp, const Port& port,
                                   const char* state, int error, const Connection& c) const;
  void apply_rate_limit(Connection& c, Port& port);
  Connection& connection_of(uint32_t requester_qpn);

  const config::RunConfig& config_;
  // First in, last out: every device, queue and clock event below belongs to it.
  std::unique_ptr<nic::verbs::VerbsProvider> provider_;
  std::unique_ptr<DeviceQpNumbers> numbers_;
  FlowJoin join_;
  std::unique_ptr<clock::WallClock> wall_;  // a real RNIC's clock
  clock::Scheduler* clock_ = nullptr;
  clock::VirtualClock* virtual_clock_ = nullptr;  // the software RNIC's
  RnicHostPaths paths_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::vector<std::unique_ptr<Port>> ports_;
  const cluster::Session* processes_ = nullptr;  // set when the run is split
  std::vector<bool> here_;                       // by run port: driven by this process
  std::vector<uint32_t> unfinished_;             // connections waiting for finish_connecting
  bool finished_connecting_ = false;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::vector<uint32_t> connection_of_requester_;  // by the plan's requester QP number
  std::vector<ibv_wc> completions_;                // one poll's burst
  std::vector<std::string> notes_;
  std::vector<std::function<std::vector<std::string>()>> note_sources_;
  size_t quoted_failures_ = 0;
  uint64_t events_ = 0;
};

}  // namespace etwire::dataplane
