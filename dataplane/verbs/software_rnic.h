// A software RNIC behind the verbs seam (nic/verbs/verbs_api.h), for machines without an RDMA
// device: CI, laptops, and checking a lab configuration before the lab. It serves the same calls
// a real RNIC does and behaves like one where the backend could tell the difference:
//   - queue pairs follow the RC state machine (RESET -> INIT -> RTR -> RTS, any -> ERR/RESET)
//     with the attributes each transition requires, and fail a wrong transition with EINVAL;
//   - posting a send in a state before RTS, or a receive in RESET, fails with EINVAL; beyond the
//     queue's depth, with ENOMEM; in ERR, work requests complete at once, flushed;
//   - queue pairs and completion queues are refused (EINVAL) beyond the device's limits
//     (SoftwareRnicOptions: max_qp_wr, max_sge, max_cqe);
//   - completion queues hold as many entries as they were created with; one more overruns the
//     queue: polling it fails from then on, and, as a device does on IBV_EVENT_CQ_ERR, every
//     queue pair sending or receiving through it moves to ERR, its outstanding work flushed
//     (IBV_WC_WR_FLUSH_ERR) into whichever of its completion queues still has room;
//   - the retry count and retransmission timeout are the QPs' own (retry_cnt and timeout, as
//     4.096 us x 2^timeout, of the RTS transition);
//   - work completions carry the statuses a device gives: IBV_WC_RETRY_EXC_ERR when the fabric
//     loses a packet retry_cnt + 1 times, IBV_WC_REM_ACCESS_ERR for a bad rkey or range,
//     IBV_WC_RNR_RETRY_EXC_ERR when no receive waits (with rnr_retry below 7),
//     IBV_WC_WR_FLUSH_ERR for what was queued behind an error.
// The bytes move for real, from the sender's registered buffer into the receiver's, and they are
// timed by etwire's own RoCEv2 transport (pacing, ACKs, go-back-N, DCQCN) over the fabric twin
// on a virtual clock: a run on the software RNIC is paced, congested and deterministic.
//
// Each port named by a verbs port of the configuration is one twin port with a worker of its own
// (dataplane/worker.h, one transport), so each device port holds only its halves of a
// connection, as a real RNIC does. The twin and its virtual clock are the loopback data plane's
// rig (TwinRig), built from the same port list (twin::run_port_specs). Its GID table is what
// mlx5 shows for a netdev with one IPv4 (and maybe one IPv6) address: 0/1 the link-local address
// as RoCE v1/v2, 2/3 the IPv4 address, 4/5 the IPv6 address.
//
// Split between emulator processes (mpirun, an emulators section), each process's RNIC holds the
// devices of its own ports, their workers on the wall clock, and cables them to the other
// processes' by datagrams on 127.0.0.1 (datagram_cables.h) instead of the twin: no twin rig
// there, since the twin lives in one process and the datagrams arrive in real time, whenever the
// other process sends them. The processes' QPs connect with the QP numbers and GIDs the verbs
// data plane exchanges over MPI, and the transport's packets cross between them. Across
// processes the RNIC is simpler still: the responder's buffer is not written (the bytes stay
// where they were; their length and the immediate travel); a bad rkey or a missing receive is
// not refused: a message finding no receive waits for one at the responder while the
// requester's work completes on its acknowledgement; the receive completion's byte_len is 0; and
// an immediate of 0 does not travel (the responder reports none).
//
// Where it is simpler than a device: the transport's PMTU is the run's transport section for
// every QP; one worker per port times all its QPs, so the first QP moved to RTS on a port sets
// the port's retry count and timeout, and a later QP there asking other values is refused with
// EINVAL (the backend gives every QP the same); timeout 0 (a device's "wait for ever") is taken
// as 2^62 ns; one QP number space spans all devices; RDMA READ and atomics are not served (EINVAL);
// after an error the transport did not cause itself (a remote access error), the messages it
// already carries still cross the twin, though their completions are flushed.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "clock/virtual_clock.h"
#include "clock/wall_clock.h"
#include "cluster/session.h"
#include "config/run_config.h"
#include "dataplane/loopback/twin_rig.h"
#include "nic/verbs/verbs_api.h"
#include "twin/fabric/fabric_twin.h"

namespace etwire::dataplane {

struct SoftwareRnicOptions {
  // Whether the devices have per-QP rate limiters (ibv_modify_qp_rate_limit); without, the call
  // fails with EOPNOTSUPP, as on a device without packet pacing.
  bool rate_limiter = true;
  uint32_t max_qp_wr = 32768;     // the largest queue a QP may ask for
  uint32_t max_sge = 16;          // scatter/gather entries per work request
  int max_cqe = 4 * 1024 * 1024;  // the largest completion queue
  // The emulator processes of the run; with more than one (and an emulators section), this
  // process's RNIC holds only its own ports, cabled to the others' (datagram_cables.h).
  const cluster::Session* processes = nullptr;
  // The twin's layout as the plan of the run laid it out from the same configuration, which the
  // RNIC's twin in one process keeps a copy of; nullptr: laid out here.
  const twin::FabricLayout* layout = nullptr;
};

class DatagramCables;

class SoftwareRnic final : public nic::verbs::VerbsProvider, private clock::EventHandler {
 public:
  // Builds the devices of the configuration's verbs ports and the fabric twin they are cabled
  // into. Throws std::invalid_argument when the twin cannot model the fabric.
  explicit SoftwareRnic(const config::RunConfig& config, SoftwareRnicOptions options = {});
  ~SoftwareRnic() override;
  SoftwareRnic(const SoftwareRnic&) = delete;
  SoftwareRnic& operator=(const SoftwareRnic&) = delete;

  // Throws nic::verbs::VerbsError (ENODEV) for a name no verbs port uses. The device must not
  // outlive the RNIC.
  std::unique_ptr<nic::verbs::VerbsDevice> open(const std::string& name) override;

  // Whether its ports are cabled to other processes' on the wall clock (no twin); then polling
  // a completion queue moves the RNIC on, as a device works on its own.
  bool across_processes() const { return cables_ != nullptr; }
  // The clock everything on the RNIC happens on, and the twin its ports are cabled into: on one
  // process only (not across_processes()). Whoever drives the RNIC runs the clock. Across
  // processes the RNIC keeps its own wall clock.
  clock::VirtualClock& clock() { return rig_->clock(); }
  twin::FabricTwin& twin() { return rig_->twin(); }

  // For tests and what-if runs: what query_port reports for run port `port`.
  void set_port_state(size_t port, ibv_port_state state);
  void set_active_mtu(size_t port, ibv_mtu mtu);
  // For tests: the device's memory regions lose remote write access, as if re-registered
  // without it; writes into them fail with IBV_WC_REM_ACCESS_ERR from then on.
  void revoke_remote_write(const std::string& device);

  // Internals, declared here so that its files' classes can name them (software_rnic_internal.h).
  struct Port;
  struct Region;
  struct Queue;
  class Device;
  class Cq;
  class Qp;
  class PortObserver;

 private:
  friend class Device;
  friend class Cq;
  friend class Qp;
  friend class PortObserver;

  // `cq` overran: its QPs move to ERR when the RNIC handles the event, at this same instant (the
  // device's asynchronous IBV_EVENT_CQ_ERR), outside whatever completion was being written.
  void overran(Cq& cq);
  void on_event(uint64_t cq_id, clock::Nanos now) override;
  // Across processes: runs the events that are due and takes what the cables brought.
  void progress();
  // The next message from requester `requester_qpn` reached port `port`'s transport, with its
  // last packet's `immediate` (0 for none).
  void arrived(size_t port, uint32_t requester_qpn, uint32_t immediate);
  // Across processes: a message from a requester elsewhere reached `responder`.
  void arrived_from_elsewhere(Queue& responder, uint32_t immediate);
  // Completes the receives of `responder` that messages from elsewhere are waiting for.
  void hand_arrivals(Queue& responder);
  // A message of requester `requester_qpn` reached its responder (deliveries come in posting
  // order), or its transport finished it.
  void delivered(uint32_t requester_qpn);
  void finished(uint32_t requester_qpn, uint8_t status);
  Queue* queue(uint32_t qpn);
  // The run port whose GID table holds `gid`, or -1.
  int port_of_gid(const ibv_gid& gid) const;
  const Region* region(uint32_t key) const;

  const config::RunConfig& config_;
  SoftwareRnicOptions options_;
  std::unique_ptr<TwinRig> rig_;              // on one process
  std::unique_ptr<clock::WallClock> wall_;    // across processes, instead of the rig's clock
  std::unique_ptr<DatagramCables> cables_;    // across processes, instead of the rig's twin
  clock::Scheduler* scheduler_ = nullptr;     // the one in use
  std::vector<std::unique_ptr<Port>> ports_;  // by run port
  std::unordered_map<uint32_t, std::unique_ptr<Region>> regions_;  // by key (lkey = rkey)
  std::unordered_map<uint32_t, std::unique_ptr<Queue>> queues_;    // by QP number
  std::unordered_map<uint64_t, Cq*> cqs_;                          // live ones, by id
  // Responder QPs by (run port << 32 | their requester's QP number), once in RTR.
  std::unordered_map<uint64_t, uint32_t> responder_of_requester_;
  uint64_t next_cq_id_ = 1;
  uint32_t next_qpn_ = 0x800;  // as devices do, not from 0
  uint32_t next_key_ = 0x1000;
};

}  // namespace etwire::dataplane
