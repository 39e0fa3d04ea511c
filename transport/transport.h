// The software RoCEv2 reliable-connected transport: queue pairs between ports, messages cut into
// PMTU packets, in-order acceptance with coalesced ACKs, NAK and go-back-N, a retransmission
// timer with a retry limit, ECN notification (CNPs) and the DCQCN reaction point, per-QP pacing
// and per-port line-rate serialization. Written once against clock::Scheduler and nic::Port, it
// runs unchanged on the virtual clock with the fabric twin and on the wall clock with packet
// backends. Single-threaded: one Transport per worker, touching only its own ports.
//
// A transport opens only the local half of a connection: the requester on the port that sends,
// the responder on the port that receives. Each half has a QP number, and packets address the
// other half by its port and QP number, as frames do on a wire; whatever joins the two halves
// (the fabric twin, a DPDK device, another worker, another host) is outside the transport. When
// both halves are in one transport, a delivery updates the requester's flow record directly.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "clock/scheduler.h"
#include "common/ring_queue.h"
#include "config/qos_config.h"
#include "config/transport_config.h"
#include "nic/frame_size.h"
#include "nic/port.h"
#include "transport/flow_pool.h"
#include "transport/flow_record.h"
#include "transport/qp_counters.h"
#include "transport/queue_pair.h"
#include "transport/reorder_window.h"
#include "transport/transport_port.h"

namespace etwire::transport {

struct ConnectionId {
  uint32_t requester = 0;  // QP number of the requester (sending) half
  uint32_t responder = 0;  // QP number of the responder (receiving) half
};

struct TransportTotals {
  uint64_t flows_posted = 0;
  uint64_t flows_completed = 0;
  uint64_t flows_failed = 0;  // retry exceeded or flushed
};

class Transport final : public clock::EventHandler {
 public:
  // `config` and `observer` must outlive the transport.
  Transport(const config::TransportConfig& config, clock::Scheduler& scheduler,
            FlowObserver& observer);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // Adds a port and returns its index in this transport (for port_counters, set_catch_up and
  // the open_* calls). `id` is how packets name it (Packet::src_port / dst_port), the index its
  // backend uses for it; by default, the index here.
  uint32_t add_port(nic::Port& port, const config::PortQos& qos, const nic::FrameFormat& format);
  uint32_t add_port(nic::Port& port, const config::PortQos& qos, const nic::FrameFormat& format,
                    uint32_t id);

  // Wall clock only. An event runs when the loop gets to it, a little after its time; counting
  // each packet from that moment would lose the lateness for good and send below the rate. With
  // a catch-up, a packet that was due earlier (its port's wire was free, or its QP's pacer let it
  // go, at a time already past) counts as starting when it was due, up to `catch_up` before the
  // moment it is handed to the NIC: a late loop sends what it owes in a burst of at most
  // `catch_up` worth of bytes, and a longer stall is lost. Nothing is owed for time nothing was
  // waiting: an idle port or QP starts afresh. 0, the default, is exact timing, right for the
  // virtual clock, where events run on time.
  void set_catch_up(uint32_t port, clock::Nanos catch_up) { ports_[port].catch_up = catch_up; }

  // The half of a connection on local port `port` (an index here): the requester that sends to
  // the responder `remote_qpn` on port `remote_port` (as packets name it), or the responder that
  // receives from the requester `remote_qpn` there. `qpn` is the half's own QP number, below
  // 2^24 and not used twice in the same role; `udp_source_port` is the connection's ECMP entropy.
  // Throws std::invalid_argument for a port that was not added or a QP number out of range or
  // taken.
  void open_requester(uint32_t port, uint32_t qpn, uint32_t remote_port, uint32_t remote_qpn,
                      uint16_t udp_source_port);
  void open_responder(uint32_t port, uint32_t qpn, uint32_t remote_port, uint32_t remote_qpn,
                      uint16_t udp_source_port);

  // Caps the requester `requester_qpn` (opened here, with nothing sent yet) at `rate_bps`, as an
  // RNIC's per-QP rate limiter does: its pacer and DCQCN's ceiling become the lower of that and
  // the port's line rate.
  void set_rate_limit(uint32_t requester_qpn, uint64_t rate_bps);

  // Opens both halves of a connection between two ports of this transport (the same port is
  // allowed: traffic then leaves and re-enters through the fabric), numbering both halves with
  // the next free number (0, 1, ...). For a transport that drives every port and has no QP
  // numbers of its own to keep.
  ConnectionId connect(uint32_t src_port, uint32_t dst_port, uint16_t udp_source_port);

  // Queues a message of `bytes` on the requester with QP number `requester_qpn` (opened here);
  // returns its flow id. The message is sent after the ones posted before it on the same QP.
  uint64_t post(uint32_t requester_qpn, uint64_t bytes, const FlowTags& tags);
  uint64_t post(ConnectionId connection, uint64_t bytes, const FlowTags& tags) {
    return post(connection.requester, bytes, tags);
  }

  void on_event(uint64_t tag, clock::Nanos now) override;

  size_t ports() const { return ports_.size(); }
  const TransportPortCounters& port_counters(uint32_t port) const { return ports_[port].counters; }
  // The requester with QP number `qpn`, opened here.
  const RequesterQp& requester(uint32_t qpn) const {
    return requesters_[requester_by_qpn_.at(qpn)];
  }
  const TransportTotals& totals() const { return totals_; }
  // Appends every QP half opened here (requesters, then responders, in opening order) with its
  // counters and, for requesters, DCQCN rate figures as of `now` (qp_counters.h). Reads each
  // reaction point up to `now`, which changes nothing it will do. Not for the hot path: one
  // pass over every QP.
  void append_qp_stats(std::vector<QpStats>& out, clock::Nanos now);
  uint32_t flows_in_progress() const { return flows_.in_use(); }
  // Per port of this transport, what its QPs that have data to send are allowed now: the sum of
  // their DCQCN rates (as of each QP's last packet), at most the line rate. For telemetry: one
  // pass over every QP.
  void paced_rates_bps(std::vector<double>& per_port) const;
  // Bytes of transport state per connection and per flow in progress, for the memory benchmark.
  static constexpr size_t connection_state_bytes() {
    return sizeof(RequesterQp) + sizeof(ResponderQp);
  }
  static constexpr size_t flow_state_bytes() { return sizeof(FlowSlot); }

 private:
  class PortReceiver;

  // Port scheduling (transport_port.cc).
  // `due`: since when what prompted the look has been owed (a scheduled kick's or a pacer's time;
  // `now` when it was prompted by something that just happened). A packet sent counts as starting
  // at max(due, now - catch_up), or when the wire frees if later: see set_catch_up.
  void kick(uint32_t port, clock::Nanos now, clock::Nanos due);
  void kick(uint32_t port, clock::Nanos now) { kick(port, now, now); }
  void schedule_kick(uint32_t port, clock::Nanos when);
  bool send_control(TransportPort& port, clock::Nanos now, clock::Nanos start);
  bool send_data(uint32_t port_index, clock::Nanos now, clock::Nanos start);
  void make_ready(uint32_t requester, clock::Nanos now, clock::Nanos due);
  void make_ready(uint32_t requester, clock::Nanos now) { make_ready(requester, now, now); }
  void retime_pacer(RequesterQp& qp, clock::Nanos now);
  void receive(uint32_t port, const nic::Packet& packet, clock::Nanos now);
  void on_pause_frame(uint32_t port, const nic::Packet& packet, clock::Nanos now);

  // Requester (requester.cc).
  nic::Packet next_data_packet(uint32_t requester, clock::Nanos now);
  void on_acknowledge(uint32_t requester, const nic::Packet& packet, clock::Nanos now);
  void acknowledge_through(RequesterQp& qp, uint64_t psn, clock::Nanos now);
  void go_back_to(RequesterQp& qp, uint64_t psn);
  // Out-of-order receivers: a NAK names one lost PSN, which alone is sent again.
  void resend_one(uint32_t requester, uint64_t psn, clock::Nanos now);
  nic::Packet resend_packet(uint32_t requester, clock::Nanos now);
  // Drops queued resends the requester no longer owes (acknowledged, or left to a go-back).
  void prune_resends(uint32_t requester);
  void on_cnp(uint32_t requester, clock::Nanos now);
  void on_retransmit_timer(uint32_t requester, clock::Nanos now);
  void arm_retransmit_timer(uint32_t requester, clock::Nanos now);
  void fail_connection(uint32_t requester, clock::Nanos now);
  // Whether a timeout, or a NAK, without progress ends the connection (transport.retransmission).
  bool retries_exhausted(RequesterQp& qp, clock::Nanos now);
  bool nak_exhausts_retries(RequesterQp& qp, clock::Nanos now);
  void finish_flow(uint32_t slot, const RequesterQp& qp, FlowStatus status, clock::Nanos now);
  // The record of a flow of `qp` as the observer gets it: the slot's fields and the QP's ports
  // and QP numbers.
  FlowRecord record_of(const FlowSlot& flow, const RequesterQp& qp) const;
  // Starts or ends the QP's time with messages outstanding (the mean rate's weight): start when
  // a post finds nothing outstanding, end when the last is acknowledged or the QP fails.
  void start_busy(RequesterQp& qp, clock::Nanos now);
  void end_busy(RequesterQp& qp, clock::Nanos now);

  // Responder (responder.cc).
  void on_data(uint32_t responder, const nic::Packet& packet, clock::Nanos now);
  // The out-of-order receiver's on_data (transport.receiver: out-of-order).
  void place_out_of_order(uint32_t responder, const nic::Packet& packet, uint64_t psn,
                          bool ack_requested, clock::Nanos now);
  // NAKs every PSN still missing `loss_after` behind the one that just `arrived`, once each.
  void report_losses(ResponderQp& qp, ReorderWindow& window, uint64_t arrived);
  // Go-back-N: PSNs from the expected one up to `gap_end` (not included) are missing, seen as
  // `arrived` came; one NAK per pass of the requester.
  void report_gap(ResponderQp& qp, uint64_t gap_end, uint64_t arrived);
  void count_reordered(ResponderQp& qp);
  // A message the responder took in full: to its requester's flow record when the requester is
  // here, else to the observer with the message's immediate.
  void complete_message(ResponderQp& qp, uint32_t immediate, clock::Nanos now);
  void queue_acknowledge(ResponderQp& qp, uint8_t syndrome, uint64_t psn);
  void queue_cnp(ResponderQp& qp, clock::Nanos now);
  void deliver_flow(RequesterQp& requester, clock::Nanos now);
  nic::Packet control_packet(const ResponderQp& qp,
                             const config::TrafficClass& traffic_class) const;
  // Checks that a new half on local port `port` may take QP number `qpn` in `by_qpn` (the port
  // was added, the number fits and is free in that role); throws std::invalid_argument if not.
  void claim_qpn(uint32_t port, std::vector<uint32_t>& by_qpn, uint32_t qpn, const char* role);

  const config::TransportConfig& config_;
  clock::Scheduler& scheduler_;
  FlowObserver& observer_;
  std::vector<TransportPort> ports_;
  std::vector<std::unique_ptr<PortReceiver>> receivers_;
  // Halves by slot (events and the ready lists name slots), and slots by QP number.
  std::vector<RequesterQp> requesters_;
  std::vector<ResponderQp> responders_;
  std::vector<uint32_t> requester_by_qpn_;
  std::vector<uint32_t> responder_by_qpn_;
  // With an out-of-order receiver on any port only, by slot: each requester's PSNs to send
  // again, each responder's window (empty on a go-back-N port).
  bool any_out_of_order_ = false;
  std::vector<RingQueue<uint64_t>> resends_;
  std::vector<ReorderWindow> windows_;
  // Sprayed entropy only (transport.entropy.mode: spray), by requester slot: its data packets
  // sent on a source port other than its own. Kept apart so that a QP that never sprays pays
  // nothing for it.
  std::vector<uint64_t> sprayed_;
  FlowPool flows_;
  TransportTotals totals_;
  uint64_t next_flow_id_ = 0;
};

}  // namespace etwire::transport
