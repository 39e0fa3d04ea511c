// Work requests on the software RNIC, from posting to completion: a send goes onto the port's
// transport as one message; when the transport delivers it, it is placed at the responder (the
// bytes moved, a receive consumed, or the error a device would find); when the transport finishes
// it, it completes in posting order. Across processes, a message from elsewhere completes a
// receive here when one is posted.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "dataplane/verbs/datagram_cables.h"
#include "dataplane/verbs/software_rnic.h"
#include "dataplane/verbs/software_rnic_internal.h"
#include "transport/transport.h"

namespace etwire::dataplane {

using software_rnic_internal::ReceiveWork;
using software_rnic_internal::SendWork;

namespace {

ibv_wc_status completion_status(transport::FlowStatus status) {
  switch (status) {
    case transport::FlowStatus::kCompleted:
      return IBV_WC_SUCCESS;
    case transport::FlowStatus::kRetryExceeded:
      return IBV_WC_RETRY_EXC_ERR;
    default:
      return IBV_WC_WR_FLUSH_ERR;
  }
}

bool needs_receive(ibv_wr_opcode opcode) {
  return opcode == IBV_WR_RDMA_WRITE_WITH_IMM || opcode == IBV_WR_SEND ||
         opcode == IBV_WR_SEND_WITH_IMM;
}

bool carries_immediate(ibv_wr_opcode opcode) {
  return opcode == IBV_WR_RDMA_WRITE_WITH_IMM || opcode == IBV_WR_SEND_WITH_IMM;
}

}  // namespace

void SoftwareRnic::progress() {
  scheduler_->poll();
  cables_->receive(wall_->now());
}

void SoftwareRnic::arrived(size_t port, uint32_t requester_qpn, uint32_t immediate) {
  if (!cables_) {
    delivered(requester_qpn);  // one number space: the requester is this RNIC's
    return;
  }
  auto it = responder_of_requester_.find(uint64_t{port} << 32 | requester_qpn);
  Queue* responder = it == responder_of_requester_.end() ? nullptr : queue(it->second);
  if (responder == nullptr) return;  // destroyed since
  if (responder->remote_here) {
    delivered(requester_qpn);
  } else {
    arrived_from_elsewhere(*responder, immediate);
  }
}

void SoftwareRnic::arrived_from_elsewhere(Queue& responder, uint32_t immediate) {
  if (responder.state != IBV_QPS_RTR && responder.state != IBV_QPS_RTS) return;  // dropped
  const bool send = config_.transport.op == config::RdmaOp::kSend;
  if (!send && immediate == 0) return;  // a WRITE: nothing for the responder to tell
  responder.arrivals.push_back(immediate);
  hand_arrivals(responder);
}

void SoftwareRnic::hand_arrivals(Queue& responder) {
  const bool send = config_.transport.op == config::RdmaOp::kSend;
  while (!responder.arrivals.empty() && !responder.receives.empty()) {
    const uint32_t imm = responder.arrivals.pop_front();
    const ReceiveWork receive = responder.receives.pop_front();
    ibv_wc wc{};
    wc.wr_id = receive.wr_id;
    wc.status = IBV_WC_SUCCESS;
    wc.opcode = send ? IBV_WC_RECV : IBV_WC_RECV_RDMA_WITH_IMM;
    wc.qp_num = responder.qpn;
    wc.src_qp = responder.dest_qpn;
    if (!send) {
      wc.imm_data = imm;
      wc.wc_flags = IBV_WC_WITH_IMM;
    }
    if (!responder.recv_cq->push(wc)) {
      Qp::enter_error(responder);
      return;
    }
  }
}

void SoftwareRnic::delivered(uint32_t requester_qpn) {
  Queue* q = queue(requester_qpn);
  if (q == nullptr) return;  // destroyed since
  const uint64_t sequence = q->transport_delivered++;
  for (size_t i = 0; i < q->sends.size(); ++i) {
    SendWork& w = q->sends[i];
    if (!w.in_transport || w.sequence != sequence) continue;
    w.delivered = true;
    Qp::place_in_order(*this, *q);
    Qp::complete(*q);
    return;
  }
  // Work flushed when the QP went to the error state: the transport still carried it.
}

void SoftwareRnic::finished(uint32_t requester_qpn, uint8_t status) {
  Queue* q = queue(requester_qpn);
  if (q == nullptr) return;
  const uint64_t sequence = q->transport_finished++;
  for (size_t i = 0; i < q->sends.size(); ++i) {
    SendWork& w = q->sends[i];
    if (!w.in_transport || w.sequence != sequence) continue;
    w.finished = true;
    w.transport_status = static_cast<transport::FlowStatus>(status);
    // A responder in another process took it when it acknowledged it.
    if (!q->remote_here) w.placed = true;
    Qp::complete(*q);
    return;
  }
}

int SoftwareRnic::Qp::post_send(ibv_send_wr* wr, ibv_send_wr** bad) {
  Queue& q = queue();
  for (; wr != nullptr; wr = wr->next) {
    int error = 0;
    if (q.state == IBV_QPS_RESET || q.state == IBV_QPS_INIT || q.state == IBV_QPS_RTR) {
      error = EINVAL;
    } else if (wr->opcode != IBV_WR_RDMA_WRITE && wr->opcode != IBV_WR_RDMA_WRITE_WITH_IMM &&
               wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM) {
      error = EINVAL;  // READ and atomics are not served
    } else if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > q.caps.max_send_sge) {
      error = EINVAL;
    } else if (q.sends.size() >= q.caps.max_send_wr) {
      error = ENOMEM;
    }
    if (error != 0) {
      if (bad != nullptr) *bad = wr;
      return error;
    }
    SendWork w;
    w.wr_id = wr->wr_id;
    w.opcode = wr->opcode;
    w.signaled = (wr->send_flags & IBV_SEND_SIGNALED) != 0 || q.caps.max_inline_data == ~0u;
    w.imm = wr->imm_data;
    w.remote_address = wr->wr.rdma.remote_addr;
    w.rkey = wr->wr.rdma.rkey;
    w.sges = static_cast<uint32_t>(wr->num_sge);
    for (uint32_t s = 0; s < w.sges; ++s) {
      w.sge[s] = wr->sg_list[s];
      w.length += wr->sg_list[s].length;
    }
    if (q.state == IBV_QPS_ERR) {
      // Completes at once, flushed.
      ibv_wc wc{};
      wc.wr_id = w.wr_id;
      wc.status = IBV_WC_WR_FLUSH_ERR;
      wc.qp_num = q.qpn;
      q.send_cq->push(wc);
      continue;
    }
    bool local_ok = w.length <= (1u << 31);
    for (uint32_t s = 0; s < w.sges && local_ok; ++s) {
      const Region* r = rnic_.region(w.sge[s].lkey);
      local_ok = r != nullptr && r->device == q.device && r->covers(w.sge[s].addr, w.sge[s].length);
    }
    if (!local_ok) {
      // Found when the device reads the buffer: a completion with an error, not a failed post.
      w.effect = w.length > (1u << 31) ? IBV_WC_LOC_LEN_ERR : IBV_WC_LOC_PROT_ERR;
      w.placed = true;
      w.finished = true;
      q.sends.push_back(w);
      complete(q);
      continue;
    }
    w.in_transport = true;
    w.sequence = q.transport_posted++;
    q.sends.push_back(w);
    // The transport carries a zero-byte message as one packet; a message of zero bytes is
    // rare enough that its packet's size does not matter.
    // The frames say what the work request is: a WRITE without an immediate, or the immediate
    // the responder's completion carries.
    transport::FlowTags tags;
    tags.plain_write = w.opcode == IBV_WR_RDMA_WRITE;
    if (carries_immediate(w.opcode)) tags.wire_tag = w.imm;
    rnic_.ports_.at(static_cast<size_t>(q.port))
        ->worker->post(q.qpn, std::max<uint64_t>(w.length, 1), tags);
  }
  return 0;
}

int SoftwareRnic::Qp::post_recv(ibv_recv_wr* wr, ibv_recv_wr** bad) {
  Queue& q = queue();
  for (; wr != nullptr; wr = wr->next) {
    int error = 0;
    if (q.state == IBV_QPS_RESET) {
      error = EINVAL;
    } else if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > q.caps.max_recv_sge) {
      error = EINVAL;
    } else if (q.receives.size() >= q.caps.max_recv_wr) {
      error = ENOMEM;
    }
    if (error != 0) {
      if (bad != nullptr) *bad = wr;
      return error;
    }
    if (q.state == IBV_QPS_ERR) {
      ibv_wc wc{};
      wc.wr_id = wr->wr_id;
      wc.status = IBV_WC_WR_FLUSH_ERR;
      wc.qp_num = q.qpn;
      q.recv_cq->push(wc);
      continue;
    }
    ReceiveWork r;
    r.wr_id = wr->wr_id;
    r.sges = static_cast<uint32_t>(wr->num_sge);
    for (uint32_t s = 0; s < r.sges; ++s) r.sge[s] = wr->sg_list[s];
    q.receives.push_back(r);
  }
  // Messages from elsewhere that waited for a receive.
  rnic_.hand_arrivals(q);
  // Senders that were refused for want of a receive go on now.
  while (!q.waiting_senders.empty() && !q.receives.empty()) {
    Queue* sender = rnic_.queue(q.waiting_senders.pop_front());
    if (sender == nullptr || !sender->waiting_for_receive) continue;
    sender->waiting_for_receive = false;
    place_in_order(rnic_, *sender);
    complete(*sender);
  }
  return 0;
}

bool SoftwareRnic::Qp::place(SoftwareRnic& rnic, Queue& q, SendWork& w) {
  Queue* responder = rnic.queue(q.dest_qpn);
  // A responder that is gone, not ready or not this QP's peer drops the packets: the requester
  // retries until it gives up.
  if (responder == nullptr || responder->dest_qpn != q.qpn ||
      (responder->state != IBV_QPS_RTR && responder->state != IBV_QPS_RTS)) {
    w.effect = IBV_WC_RETRY_EXC_ERR;
    w.placed = true;
    return true;
  }
  const bool write = w.opcode == IBV_WR_RDMA_WRITE || w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
  if (write) {
    const Region* target = rnic.region(w.rkey);
    if (target == nullptr || target->device != responder->device ||
        (target->access & IBV_ACCESS_REMOTE_WRITE) == 0 ||
        (responder->access & IBV_ACCESS_REMOTE_WRITE) == 0 ||
        !target->covers(w.remote_address, w.length)) {
      w.effect = IBV_WC_REM_ACCESS_ERR;
      w.placed = true;
      return true;
    }
  }
  ReceiveWork receive;
  if (needs_receive(w.opcode)) {
    if (responder->receives.empty()) {
      if (q.rnr_retry < 7) {
        w.effect = IBV_WC_RNR_RETRY_EXC_ERR;
        w.placed = true;
        return true;
      }
      if (!q.waiting_for_receive) {
        q.waiting_for_receive = true;
        responder->waiting_senders.push_back(q.qpn);
      }
      return false;
    }
    receive = responder->receives.pop_front();
  }
  // Move the bytes: gather from the sender's entries, into the remote range or the receive's.
  uint64_t capacity = 0;
  for (uint32_t s = 0; s < receive.sges; ++s) capacity += receive.sge[s].length;
  const bool send = !write;
  if (send && capacity < w.length) {
    ibv_wc wc{};
    wc.wr_id = receive.wr_id;
    wc.status = IBV_WC_LOC_LEN_ERR;
    wc.qp_num = responder->qpn;
    responder->recv_cq->push(wc);
    enter_error(*responder);
    w.effect = IBV_WC_REM_INV_REQ_ERR;
    w.placed = true;
    return true;
  }
  uint32_t out_sge = 0;
  uint64_t out_offset = 0;
  uint64_t written = 0;
  for (uint32_t s = 0; s < w.sges; ++s) {
    const auto* from = reinterpret_cast<const uint8_t*>(w.sge[s].addr);
    uint64_t left = w.sge[s].length;
    while (left > 0) {
      if (write) {
        std::memmove(reinterpret_cast<uint8_t*>(w.remote_address + written), from, left);
        written += left;
        break;
      }
      const ibv_sge& to = receive.sge[out_sge];
      const uint64_t n = std::min<uint64_t>(left, to.length - out_offset);
      std::memmove(reinterpret_cast<uint8_t*>(to.addr + out_offset), from, n);
      from += n;
      left -= n;
      out_offset += n;
      if (out_offset == to.length) {
        ++out_sge;
        out_offset = 0;
      }
    }
  }
  if (needs_receive(w.opcode)) {
    ibv_wc wc{};
    wc.wr_id = receive.wr_id;
    wc.status = IBV_WC_SUCCESS;
    wc.opcode = write ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
    wc.byte_len = static_cast<uint32_t>(w.length);
    wc.qp_num = responder->qpn;
    wc.src_qp = q.qpn;
    if (carries_immediate(w.opcode)) {
      wc.imm_data = w.imm;
      wc.wc_flags = IBV_WC_WITH_IMM;
    }
    if (!responder->recv_cq->push(wc)) enter_error(*responder);
  }
  w.placed = true;
  return true;
}

void SoftwareRnic::Qp::place_in_order(SoftwareRnic& rnic, Queue& q) {
  if (q.waiting_for_receive) return;
  for (size_t i = 0; i < q.sends.size(); ++i) {
    SendWork& w = q.sends[i];
    if (w.placed) continue;
    if (!w.delivered || !place(rnic, q, w)) return;
  }
}

void SoftwareRnic::Qp::complete(Queue& q) {
  while (!q.sends.empty()) {
    SendWork& w = q.sends.front();
    if (!w.finished) return;
    const bool carried = w.transport_status == transport::FlowStatus::kCompleted;
    if (carried && !w.placed) return;
    const ibv_wc_status status = carried ? w.effect : completion_status(w.transport_status);
    if (w.signaled || status != IBV_WC_SUCCESS) {
      ibv_wc wc{};
      wc.wr_id = w.wr_id;
      wc.status = status;
      wc.opcode = w.opcode == IBV_WR_SEND || w.opcode == IBV_WR_SEND_WITH_IMM ? IBV_WC_SEND
                                                                              : IBV_WC_RDMA_WRITE;
      wc.qp_num = q.qpn;
      if (!q.send_cq->push(wc)) {
        q.sends.pop_front();
        enter_error(q);
        return;
      }
    }
    q.sends.pop_front();
    if (status != IBV_WC_SUCCESS) {
      enter_error(q);
      return;
    }
  }
}

void SoftwareRnic::Qp::enter_error(Queue& q) {
  q.state = IBV_QPS_ERR;
  q.waiting_for_receive = false;
  while (!q.sends.empty()) {
    ibv_wc wc{};
    wc.wr_id = q.sends.pop_front().wr_id;
    wc.status = IBV_WC_WR_FLUSH_ERR;
    wc.qp_num = q.qpn;
    q.send_cq->push(wc);
  }
  while (!q.receives.empty()) {
    ibv_wc wc{};
    wc.wr_id = q.receives.pop_front().wr_id;
    wc.status = IBV_WC_WR_FLUSH_ERR;
    wc.qp_num = q.qpn;
    q.recv_cq->push(wc);
  }
}

}  // namespace etwire::dataplane
