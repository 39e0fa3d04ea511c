// Private to the software RNIC's own files: its ports, memory regions, queue pairs and completion
// queues as they are kept, and the work requests a queue pair holds. Its parts by concern:
//   software_rnic.cc         the RNIC: its ports, their workers and GID tables, cabled to the
//                            twin or to other processes; lookups; a completion queue's overrun
//                            as a device event
//   software_rnic_device.cc  a device: opening it, port queries, memory, queues, counters
//   software_rnic_qp.cc      a queue pair's RC state machine, its attributes, its rate limit
//   software_rnic_work.cc    work requests from posting to completion, moved by the workers'
//                            reports (delivered, finished, arrived from another process)
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/ring_queue.h"
#include "config/run_config.h"
#include "dataplane/verbs/software_rnic.h"
#include "dataplane/worker.h"
#include "transport/transport.h"

namespace etwire::dataplane {

namespace software_rnic_internal {

constexpr size_t kMaxSge = 16;

struct SendWork {
  uint64_t wr_id = 0;
  ibv_wr_opcode opcode = IBV_WR_RDMA_WRITE;
  uint64_t length = 0;
  bool signaled = false;
  uint32_t imm = 0;
  uint64_t remote_address = 0;
  uint32_t rkey = 0;
  uint32_t sges = 0;
  std::array<ibv_sge, kMaxSge> sge{};
  // On the transport as its flow number `sequence` of this QP; not when it failed on posting.
  bool in_transport = false;
  uint64_t sequence = 0;
  bool delivered = false;  // the transport delivered it to the responder
  bool placed = false;     // its effect there is done (or failed: `effect`)
  bool finished = false;   // the transport finished it (`transport_status`)
  transport::FlowStatus transport_status = transport::FlowStatus::kCompleted;
  ibv_wc_status effect = IBV_WC_SUCCESS;
};

struct ReceiveWork {
  uint64_t wr_id = 0;
  uint32_t sges = 0;
  std::array<ibv_sge, kMaxSge> sge{};
};

}  // namespace software_rnic_internal

struct SoftwareRnic::Port {
  size_t index = 0;  // run port = twin port
  bool here = true;  // driven by this process (across processes, only some are)
  const config::PortConfig* config = nullptr;
  std::string device;
  uint8_t number = 1;
  ibv_port_state state = IBV_PORT_ACTIVE;
  ibv_mtu active_mtu = IBV_MTU_4096;
  std::vector<ibv_gid_entry> gids;
  std::unique_ptr<PortObserver> observer;
  // The run's transport section, with the retry count and timeout of the port's QPs once the
  // first of them is in RTS (the transport reads them when it retransmits, not before).
  config::TransportConfig transport_config;
  bool qp_timing_set = false;
  // Drives this port only, as run port `index` on queue 0, on `transport_config`: a worker per
  // port, since each port's QPs may ask for their own timing. None for a port another process
  // drives.
  std::unique_ptr<Worker> worker;
  // This port's end of a connection half, as the worker places it.
  HalfPlace place(uint32_t qpn) const { return {static_cast<uint32_t>(index), 0, qpn}; }
  const transport::TransportPortCounters& transport_counters() const {
    return worker->counters(static_cast<uint32_t>(index));
  }
};

struct SoftwareRnic::Region {
  uint64_t address = 0;
  uint64_t length = 0;
  int access = 0;
  std::string device;
  bool covers(uint64_t at, uint64_t bytes) const {
    return at >= address && bytes <= length && at - address <= length - bytes;
  }
};

// A QP's state; the VerbsQp handle the user holds points here.
struct SoftwareRnic::Queue {
  uint32_t qpn = 0;
  std::string device;
  Cq* send_cq = nullptr;
  Cq* recv_cq = nullptr;
  ibv_qp_cap caps{};
  ibv_qp_state state = IBV_QPS_RESET;
  int port = -1;  // run port, from INIT
  int access = 0;
  ibv_mtu path_mtu = IBV_MTU_1024;
  uint32_t dest_qpn = 0;
  int remote_port = -1;
  bool remote_here = true;  // the peer's port is this process's
  uint8_t rnr_retry = 7;
  uint16_t udp_source_port = 0;
  bool requester_open = false;  // its halves on the port's transport (they stay open)
  bool responder_open = false;
  RingQueue<software_rnic_internal::SendWork> sends;  // posted, not yet completed, oldest first
  RingQueue<software_rnic_internal::ReceiveWork> receives;
  // Across processes: immediates of messages from elsewhere that found no receive yet.
  RingQueue<uint32_t> arrivals;
  // Requesters whose next message waits here for a receive (RNR NAKs retried forever).
  RingQueue<uint32_t> waiting_senders;
  bool waiting_for_receive = false;  // as a requester, registered in its responder's list
  uint64_t transport_posted = 0;     // flows handed to the transport
  uint64_t transport_delivered = 0;  // its delivery reports so far
  uint64_t transport_finished = 0;   // its finish reports so far
};

class SoftwareRnic::Cq final : public nic::verbs::VerbsCq {
 public:
  Cq(SoftwareRnic& rnic, std::string device, int entries)
      : rnic_(rnic), id_(rnic.next_cq_id_++), device_(std::move(device)), entries_(entries) {
    rnic_.cqs_[id_] = this;
  }
  ~Cq() override { rnic_.cqs_.erase(id_); }
  Cq(const Cq&) = delete;
  Cq& operator=(const Cq&) = delete;
  int poll(int entries, ibv_wc* wc) override {
    if (rnic_.across_processes()) rnic_.progress();
    if (overrun_) return -1;
    int n = 0;
    while (n < entries && !queue_.empty()) wc[n++] = queue_.pop_front();
    return n;
  }
  int capacity() const override { return entries_; }
  const std::string& device() const { return device_; }
  uint64_t id() const { return id_; }
  bool overrun() const { return overrun_; }
  // False when the queue is full: it is overrun from then on, the entry is lost, and the RNIC
  // puts the queue's QPs in error.
  bool push(const ibv_wc& wc) {
    if (overrun_) return false;
    if (queue_.size() >= static_cast<size_t>(entries_)) {
      overrun_ = true;
      rnic_.overran(*this);
      return false;
    }
    queue_.push_back(wc);
    return true;
  }

 private:
  SoftwareRnic& rnic_;
  uint64_t id_;
  std::string device_;
  int entries_;
  RingQueue<ibv_wc> queue_;
  bool overrun_ = false;
};

// Hands the port worker's reports to the RNIC.
class SoftwareRnic::PortObserver final : public transport::FlowObserver {
 public:
  PortObserver(SoftwareRnic& rnic, size_t port) : rnic_(rnic), port_(port) {}
  void on_flow_delivered(const transport::FlowRecord& record) override {
    rnic_.delivered(record.qpn);
  }
  void on_flow_finished(const transport::FlowRecord& record) override {
    rnic_.finished(record.qpn, static_cast<uint8_t>(record.status));
  }
  void on_delivered_to_responder(uint32_t requester_qpn, clock::Nanos, uint32_t,
                                 uint32_t immediate) override {
    rnic_.arrived(port_, requester_qpn, immediate);
  }

 private:
  SoftwareRnic& rnic_;
  size_t port_;
};

class SoftwareRnic::Qp final : public nic::verbs::VerbsQp {
 public:
  Qp(SoftwareRnic& rnic, uint32_t qpn) : rnic_(rnic), qpn_(qpn) {}
  ~Qp() override { rnic_.queues_.erase(qpn_); }
  uint32_t qp_num() const override { return qpn_; }
  ibv_qp_state state() const override { return queue().state; }
  int modify(ibv_qp_attr& attr, int mask) override;
  int set_rate_limit(uint32_t kbps) override;
  int post_send(ibv_send_wr* wr, ibv_send_wr** bad) override;
  int post_recv(ibv_recv_wr* wr, ibv_recv_wr** bad) override;

  // The work of a requester / responder, shared by the RNIC's report handlers.
  static void place_in_order(SoftwareRnic& rnic, Queue& q);
  static void complete(Queue& q);
  static void enter_error(Queue& q);

 private:
  Queue& queue() const { return *rnic_.queues_.at(qpn_); }
  int check_transition(const Queue& q, ibv_qp_state target, int mask) const;
  int apply_attributes(Queue& q, ibv_qp_state target, const ibv_qp_attr& attr, int mask);
  // Places `w` at its responder; false when it waits there for a receive.
  static bool place(SoftwareRnic& rnic, Queue& q, software_rnic_internal::SendWork& w);

  SoftwareRnic& rnic_;
  uint32_t qpn_;
};

}  // namespace etwire::dataplane
