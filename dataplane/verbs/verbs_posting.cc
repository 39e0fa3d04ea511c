// The verbs data plane's run: a message becomes work requests of at most verbs.max_message bytes,
// posted while the QP and its device's completion queue have room (and, under paced posting, when
// the rate limit allows); polling takes the completions, which end work requests, deliver
// messages, and fail them with the device's status. A device error (a refused post, an overrun
// completion queue) fails the connections it touches, not the run.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "dataplane/verbs/verbs_data_plane.h"
#include "dataplane/verbs/verbs_data_plane_internal.h"
#include "nic/verbs/rdma_devices.h"

namespace etwire::dataplane {

using verbs_data_plane_internal::kBurst;
using verbs_data_plane_internal::Message;
using verbs_data_plane_internal::needs_receives;
using verbs_data_plane_internal::post_receive;

namespace {

// Failures quoted one by one in the notes; the summary counts the rest by status.
constexpr size_t kQuotedFailures = 16;

transport::FlowStatus flow_status(ibv_wc_status status) {
  switch (status) {
    case IBV_WC_SUCCESS:
      return transport::FlowStatus::kCompleted;
    case IBV_WC_RETRY_EXC_ERR:
      return transport::FlowStatus::kRetryExceeded;
    case IBV_WC_WR_FLUSH_ERR:
      return transport::FlowStatus::kFlushed;
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return transport::FlowStatus::kRnrRetryExceeded;
    case IBV_WC_REM_ACCESS_ERR:
      return transport::FlowStatus::kRemoteAccessError;
    case IBV_WC_REM_INV_REQ_ERR:
      return transport::FlowStatus::kRemoteInvalidRequest;
    case IBV_WC_REM_OP_ERR:
      return transport::FlowStatus::kRemoteOperationError;
    case IBV_WC_LOC_LEN_ERR:
      return transport::FlowStatus::kLocalLengthError;
    case IBV_WC_LOC_PROT_ERR:
      return transport::FlowStatus::kLocalProtectionError;
    case IBV_WC_LOC_QP_OP_ERR:
      return transport::FlowStatus::kLocalQpOperationError;
    default:
      return transport::FlowStatus::kDeviceError;
  }
}

}  // namespace

int verbs_data_plane_internal::post_receive(VerbsDataPlane::Connection& c,
                                            VerbsDataPlane::Device& device) {
  ibv_sge sge{device.region.address, static_cast<uint32_t>(device.region.length),
              device.region.lkey};
  ibv_recv_wr wr{};
  wr.wr_id = c.index;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  const int error = c.responder->post_recv(&wr, &bad);
  if (error == 0) {
    ++device.cq_load;
    ++c.receives_posted;
  }
  return error;
}

VerbsDataPlane::Connection& VerbsDataPlane::connection_of(uint32_t requester_qpn) {
  return *connections_.at(connection_of_requester_.at(requester_qpn));
}

void VerbsDataPlane::post(transport::ConnectionId connection, uint64_t bytes,
                          const transport::FlowTags& tags) {
  Connection& c = connection_of(connection.requester);
  join_.posted(c.plan_requester, bytes, tags, clock_->now());
  Message m;
  m.bytes = bytes;
  m.unposted_bytes = bytes;
  const uint64_t max = config_.verbs.max_message;
  m.unposted_wrs = static_cast<uint32_t>(std::max<uint64_t>(1, (bytes + max - 1) / max));
  m.tags = tags;
  if (config_.transport.op == config::RdmaOp::kSend) c.awaited_wrs.push_back(m.unposted_wrs);
  c.messages.push_back(m);
  post_work(c);
}

void VerbsDataPlane::post_work(Connection& c) {
  if (c.failed) {
    settle(c);
    return;
  }
  Device& device = *devices_[ports_[c.src_port]->device];
  const config::RdmaOp op = config_.transport.op;
  while (c.posting < c.messages.size()) {
    Message& m = c.messages[c.posting];
    if (c.outstanding >= config_.verbs.queue_depth || device.cq_load >= device.cq->capacity()) {
      return;
    }
    const clock::Nanos now = clock_->now();
    if (c.pace_bps != 0 && now < c.next_post) {
      if (!c.post_scheduled) {
        c.post_scheduled = true;
        clock_->run_at(c.next_post, this, c.index);
      }
      return;
    }
    const uint64_t bytes = std::min(m.unposted_bytes, config_.verbs.max_message);
    const bool last = m.unposted_wrs == 1;
    ibv_sge sge{device.region.address, static_cast<uint32_t>(bytes), device.region.lkey};
    ibv_send_wr wr{};
    wr.wr_id = c.index;
    wr.sg_list = &sge;
    wr.num_sge = bytes == 0 ? 0 : 1;
    wr.send_flags = IBV_SEND_SIGNALED;
    if (op == config::RdmaOp::kSend) {
      wr.opcode = IBV_WR_SEND;
    } else {
      wr.opcode = op == config::RdmaOp::kWriteWithImmediate && last ? IBV_WR_RDMA_WRITE_WITH_IMM
                                                                    : IBV_WR_RDMA_WRITE;
      wr.wr.rdma.remote_addr = c.remote_address;
      wr.wr.rdma.rkey = c.remote_rkey;
      // A receiver in another process tells messages apart by the engine's wire tag.
      wr.imm_data = m.tags.wire_tag != 0 ? m.tags.wire_tag : c.plan_requester;
    }
    ibv_send_wr* bad = nullptr;
    if (int e = c.requester->post_send(&wr, &bad); e != 0) {
      if (quote_failure()) {
        notes_.push_back(fmt::format(
            "{}, {} QP 0x{:x}: ibv_post_send failed: {}; the connection takes no more work: the "
            "flow refused fails (device-error), those behind it are flushed",
            ports_between(c.src_port, c.dst_port), device.device->name(), c.requester->qp_num(),
            nic::verbs::errno_text(e)));
      }
      fail_connection(c, c.posting, QpAfterFailure::kLeave);
      return;
    }
    if (m.first_out == clock::kNever) m.first_out = now;
    m.unposted_bytes -= bytes;
    --m.unposted_wrs;
    ++m.outstanding_wrs;
    ++c.outstanding;
    ++device.cq_load;
    if (c.pace_bps != 0) {
      const auto spacing = static_cast<clock::Nanos>(static_cast<double>(bytes) * 8e9 /
                                                     static_cast<double>(c.pace_bps));
      c.next_post = std::max(c.next_post, now) + spacing;
    }
    if (m.unposted_wrs == 0) ++c.posting;
  }
}

void VerbsDataPlane::on_event(uint64_t tag, clock::Nanos) {
  Connection& c = *connections_.at(tag);
  c.post_scheduled = false;
  post_work(c);
}

void VerbsDataPlane::poll() {
  events_ += clock_->poll();
  // Until every queue is empty: handling completions posts more work, and on the software RNIC
  // a post into a QP in error completes at once.
  bool any = true;
  while (any) {
    any = false;
    for (auto& device : devices_) any = poll_device(*device) > 0 || any;
  }
}

size_t VerbsDataPlane::poll_device(Device& device) {
  size_t total = 0;
  if (device.lost) return total;
  for (;;) {
    const int n = device.cq->poll(kBurst, completions_.data());
    if (n < 0) {
      on_cq_overrun(device);
      return total;
    }
    for (int i = 0; i < n; ++i) {
      const ibv_wc& wc = completions_[static_cast<size_t>(i)];
      --device.cq_load;
      auto it = device.qps.find(wc.qp_num);
      if (it == device.qps.end()) continue;
      Connection& c = *connections_[it->second / 2];
      if (it->second % 2 == 0) {
        on_send_completion(c, wc);
      } else {
        on_receive_completion(c, wc);
      }
    }
    total += static_cast<size_t>(n);
    if (n < kBurst) return total;
  }
}

void VerbsDataPlane::on_cq_overrun(Device& device) {
  device.lost = true;
  notes_.push_back(fmt::format(
      "{}: ibv_poll_cq failed: its completion queue ({} entries) overran; as on "
      "IBV_EVENT_CQ_ERR its queue pairs are in error: on each of their connections the first "
      "flow whose completion it would have carried fails (device-error), those behind are "
      "flushed",
      device.device->name(), device.cq->capacity()));
  for (size_t i = 0; i < connections_.size(); ++i) {
    Connection& c = *connections_[i];
    const bool requester_here = device_of(c.src_port) == &device;
    const bool responder_here = device_of(c.dst_port) == &device;
    if (responder_here) {
      // No delivery is seen again: every message not yet released waits for one.
      fail_connection(c, 0,
                      requester_here ? QpAfterFailure::kWriteOff : QpAfterFailure::kMoveToError);
    } else if (requester_here) {
      // Messages sent in full before the overrun are done; their receiver sees them delivered.
      size_t first = 0;
      while (first < c.messages.size() && c.messages[first].sent_at != clock::kNever) ++first;
      fail_connection(c, first, QpAfterFailure::kWriteOff);
    }
  }
}

bool VerbsDataPlane::quote_failure() {
  return quoted_failures_++ < kQuotedFailures;
}

void VerbsDataPlane::fail_connection(Connection& c, size_t first_failed, QpAfterFailure qp) {
  c.failed = true;
  for (size_t i = first_failed; i < c.messages.size(); ++i) {
    Message& m = c.messages[i];
    if (m.status == transport::FlowStatus::kCompleted) {
      m.status =
          i == first_failed ? transport::FlowStatus::kDeviceError : transport::FlowStatus::kFlushed;
    }
  }
  if (qp == QpAfterFailure::kWriteOff) {
    // Nothing the requester had out will complete where this data plane can see it.
    for (size_t i = 0; i < c.messages.size(); ++i) c.messages[i].outstanding_wrs = 0;
    c.outstanding = 0;
  } else if (qp == QpAfterFailure::kMoveToError && c.requester) {
    // As the device does after an error: what the requester has out comes back flushed.
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;
    c.requester->modify(attr, IBV_QP_STATE);
  }
  settle(c);
}

void VerbsDataPlane::on_send_completion(Connection& c, const ibv_wc& wc) {
  if (c.outstanding == 0) return;  // its work was written off when its queue was lost
  --c.outstanding;
  // Completions come in posting order: the oldest message with work out is this one's.
  size_t i = 0;
  while (i < c.messages.size() && c.messages[i].outstanding_wrs == 0) ++i;
  if (i == c.messages.size()) return;
  Message& m = c.messages[i];
  --m.outstanding_wrs;
  if (m.outstanding_wrs == 0 && m.unposted_wrs == 0) m.sent_at = clock_->now();
  if (wc.status != IBV_WC_SUCCESS) {
    if (m.status == transport::FlowStatus::kCompleted) m.status = flow_status(wc.status);
    // The first error of a connection is quoted; a flush first means something else (the
    // device, on a fatal or CQ error) moved the QP to ERR.
    if (!c.failed && quote_failure()) {
      notes_.push_back(fmt::format(
          "{}, {} QP 0x{:x}: work completion {} (vendor error 0x{:x}); {}",
          ports_between(c.src_port, c.dst_port), device_of(c.src_port)->device->name(), wc.qp_num,
          nic::verbs::work_completion_status_name(wc.status), wc.vendor_err,
          wc.status == IBV_WC_WR_FLUSH_ERR
              ? "the QP was put in error with no failed work request before it, and everything "
                "on it is flushed"
              : "the QP is in error and what was queued behind is flushed"));
    }
    c.failed = true;
  }
  settle(c);
  post_work(c);
}

void VerbsDataPlane::on_receive_completion(Connection& c, const ibv_wc& wc) {
  --c.receives_posted;
  // Flushed receives are those of a QP in error; a failed receive fails the sender's message too.
  if (wc.status != IBV_WC_SUCCESS) return;
  const clock::Nanos now = clock_->now();
  bool delivered = true;
  if (config_.transport.op == config::RdmaOp::kSend) {
    delivered = !c.awaited_wrs.empty() && ++c.received_wrs == c.awaited_wrs.front();
    if (delivered) {
      c.awaited_wrs.pop_front();
      c.received_wrs = 0;
    }
  }
  // Receives go back in at once, so the queue stays full ahead of the sender.
  post_receive(c, *devices_[ports_[c.dst_port]->device]);
  if (delivered) {
    join_.delivered(c.plan_requester, now, 0, wc.imm_data);
    ++c.deliveries;
    settle(c);
  }
}

void VerbsDataPlane::settle(Connection& c) {
  const clock::Nanos now = clock_->now();
  const bool receives = needs_receives(config_.transport.op);
  while (!c.messages.empty()) {
    const Message& front = c.messages.front();
    const bool posted = front.unposted_wrs == 0;
    if (front.outstanding_wrs != 0 || (!posted && !c.failed)) return;
    // Sent in full, not yet seen delivered: it waits for its receive completion (which another
    // process sees, when the responder is there).
    if (receives && c.responder && !c.failed && front.status == transport::FlowStatus::kCompleted &&
        c.deliveries <= c.settled) {
      return;
    }
    const Message m = c.messages.pop_front();
    ++c.settled;
    if (c.posting > 0) --c.posting;
    transport::FlowRecord record;
    record.tags = m.tags;
    record.src_port = c.src_port;
    record.dst_port = c.dst_port;
    record.qpn = c.plan_requester;
    record.dest_qpn = c.plan_responder;
    record.bytes = m.bytes;
    record.first_byte_out = m.first_out;
    record.finished_at = m.sent_at != clock::kNever ? m.sent_at : now;
    record.packets = static_cast<uint32_t>(
        std::max<uint64_t>(1, (m.bytes + config_.transport.pmtu - 1) / config_.transport.pmtu));
    // Work never posted because the QP went into error is flushed, as the device would.
    record.status = m.status != transport::FlowStatus::kCompleted || posted
                        ? m.status
                        : transport::FlowStatus::kFlushed;
    // A WRITE tells the receiver nothing: its acknowledgement is the delivery.
    if (record.status == transport::FlowStatus::kCompleted && !receives && c.responder) {
      join_.delivered(c.plan_requester, record.finished_at, 0);
      ++c.deliveries;
    }
    join_.finished(record);
  }
}

void VerbsDataPlane::paced_rates_bps(std::vector<double>& per_port) {
  per_port.assign(ports_.size(), 0.0);
  for (const auto& c : connections_) {
    const uint64_t limit = ports_[c->src_port]->rate_limit_bps;
    if (limit != 0 && c->outstanding > 0) per_port[c->src_port] += static_cast<double>(limit);
  }
  for (size_t p = 0; p < per_port.size(); ++p) {
    per_port[p] = std::min(per_port[p], static_cast<double>(config_.ports[p].speed_bps));
  }
}

}  // namespace etwire::dataplane
