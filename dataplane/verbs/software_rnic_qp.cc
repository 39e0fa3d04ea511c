// A queue pair of the software RNIC: the RC state machine (RESET -> INIT -> RTR -> RTS, any ->
// ERR or RESET) with the attributes each transition requires and the errno a device gives for a
// wrong one; its halves opened on the port's worker as it reaches RTR and RTS; its rate limit.
#include <cerrno>

#include "dataplane/verbs/software_rnic.h"
#include "dataplane/verbs/software_rnic_internal.h"
#include "transport/transport.h"

namespace etwire::dataplane {

namespace {

// The RoCE v2 UDP source port a flow label gives, as Linux derives it: the 20-bit label folded
// into 14 bits, in the range 0xC000..0xFFFF. A QP without a label gets one from its QP numbers.
uint16_t udp_source_port(uint32_t flow_label, uint32_t local_qpn, uint32_t remote_qpn) {
  if (flow_label == 0) {
    uint64_t v = uint64_t{local_qpn} * remote_qpn;
    v ^= v >> 20;
    v ^= v >> 40;
    flow_label = static_cast<uint32_t>(v & 0xFFFFF);
  }
  uint32_t low = flow_label & 0x3FFF;
  low ^= (flow_label & 0xFC000) >> 14;
  return static_cast<uint16_t>(low | 0xC000);
}

// The retransmission timeout of an IB timeout exponent: 4.096 us x 2^n; 0 waits for ever, which
// the transport's timer takes as a wait no run reaches.
uint64_t retransmit_timeout_ns(uint8_t exponent) {
  return exponent == 0 ? uint64_t{1} << 62 : uint64_t{4096} << exponent;
}

}  // namespace

int SoftwareRnic::Qp::check_transition(const Queue& q, ibv_qp_state target, int mask) const {
  const int given = mask & ~IBV_QP_STATE;
  int required = 0;
  int optional = 0;
  if (target == IBV_QPS_RESET || target == IBV_QPS_ERR) {
    return given == 0 ? 0 : EINVAL;
  }
  switch (q.state) {
    case IBV_QPS_RESET:
      if (target != IBV_QPS_INIT) return EINVAL;
      required = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
      break;
    case IBV_QPS_INIT:
      if (target == IBV_QPS_INIT) {
        optional = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
      } else if (target == IBV_QPS_RTR) {
        required = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
        optional = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX;
      } else {
        return EINVAL;
      }
      break;
    case IBV_QPS_RTR:
      if (target != IBV_QPS_RTS) return EINVAL;
      required = IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                 IBV_QP_MAX_QP_RD_ATOMIC;
      optional = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER |
                 IBV_QP_PATH_MIG_STATE;
      break;
    case IBV_QPS_RTS:
      if (target != IBV_QPS_RTS) return EINVAL;
      optional = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE |
                 IBV_QP_MIN_RNR_TIMER;
      break;
    default:  // ERR (and SQD/SQE, which this RNIC never enters) leave only to RESET
      return EINVAL;
  }
  if ((given & required) != required) return EINVAL;
  if ((given & ~(required | optional)) != 0) return EINVAL;
  return 0;
}

int SoftwareRnic::Qp::apply_attributes(Queue& q, ibv_qp_state target, const ibv_qp_attr& attr,
                                       int mask) {
  if (mask & IBV_QP_PORT) {
    int found = -1;
    for (const auto& port : rnic_.ports_) {
      if (port->here && port->device == q.device && port->number == attr.port_num) {
        found = static_cast<int>(port->index);
      }
    }
    if (found < 0) return EINVAL;
    q.port = found;
  }
  Port& port = *rnic_.ports_.at(static_cast<size_t>(q.port));
  int remote = q.remote_port;
  if (mask & IBV_QP_AV) {
    const ibv_ah_attr& ah = attr.ah_attr;
    // RoCE addresses by GID: an address vector without a GRH cannot leave the port.
    if (!ah.is_global || ah.port_num != port.number || ah.grh.sgid_index >= port.gids.size()) {
      return EINVAL;
    }
    remote = rnic_.port_of_gid(ah.grh.dgid);
    if (remote < 0) return EHOSTUNREACH;
  }
  if ((mask & IBV_QP_PATH_MTU) &&
      (attr.path_mtu < IBV_MTU_256 || attr.path_mtu > port.active_mtu)) {
    return EINVAL;
  }
  if ((mask & IBV_QP_TIMEOUT) && attr.timeout > 31) return EINVAL;
  if ((mask & IBV_QP_RETRY_CNT) && attr.retry_cnt > 7) return EINVAL;
  if ((mask & IBV_QP_RNR_RETRY) && attr.rnr_retry > 7) return EINVAL;
  if ((mask & IBV_QP_DEST_QPN) && attr.dest_qp_num >= (1u << 24)) return EINVAL;
  // Halves stay open on the transport once opened: a QP reconnected elsewhere is not served.
  const uint32_t dest = (mask & IBV_QP_DEST_QPN) ? attr.dest_qp_num : q.dest_qpn;
  if ((q.responder_open || q.requester_open) && (dest != q.dest_qpn || remote != q.remote_port)) {
    return EINVAL;
  }
  // One transport times every QP of the port: the first QP in RTS sets its retry count and
  // timeout, and a QP wanting others cannot be served as it asks.
  const bool timing = (mask & IBV_QP_TIMEOUT) && (mask & IBV_QP_RETRY_CNT);
  const uint64_t timeout_ns = timing ? retransmit_timeout_ns(attr.timeout) : 0;
  if (timing && port.qp_timing_set &&
      (port.transport_config.retry_count != attr.retry_cnt ||
       port.transport_config.retransmit_timeout_ns != timeout_ns)) {
    return EINVAL;
  }
  if (timing && !port.qp_timing_set) {
    port.transport_config.retry_count = attr.retry_cnt;
    port.transport_config.retransmit_timeout_ns = timeout_ns;
    port.qp_timing_set = true;
  }
  if (mask & IBV_QP_ACCESS_FLAGS) q.access = static_cast<int>(attr.qp_access_flags);
  if (mask & IBV_QP_PATH_MTU) q.path_mtu = attr.path_mtu;
  if (mask & IBV_QP_RNR_RETRY) q.rnr_retry = attr.rnr_retry;
  q.dest_qpn = dest;
  q.remote_port = remote;
  q.remote_here = remote < 0 || rnic_.ports_.at(static_cast<size_t>(remote))->here;
  if (mask & IBV_QP_AV) {
    q.udp_source_port = udp_source_port(attr.ah_attr.grh.flow_label, q.qpn, q.dest_qpn);
  }
  // The peer's half as the transport names it: its run port (the twin's, or another process's)
  // and QP number; its queue is not this worker's business.
  const HalfPlace here = port.place(q.qpn);
  const HalfPlace peer{static_cast<uint32_t>(q.remote_port), 0, q.dest_qpn};
  if (target == IBV_QPS_RTR && !q.responder_open) {
    port.worker->open_responder(peer, here, q.udp_source_port);
    q.responder_open = true;
    rnic_.responder_of_requester_[uint64_t(q.port) << 32 | q.dest_qpn] = q.qpn;
  }
  if (target == IBV_QPS_RTS && !q.requester_open) {
    port.worker->open_requester(here, peer, q.udp_source_port);
    q.requester_open = true;
  }
  return 0;
}

int SoftwareRnic::Qp::modify(ibv_qp_attr& attr, int mask) {
  Queue& q = queue();
  const ibv_qp_state target = (mask & IBV_QP_STATE) ? attr.qp_state : q.state;
  if ((mask & IBV_QP_CUR_STATE) && attr.cur_qp_state != q.state) return EINVAL;
  if (const int error = check_transition(q, target, mask); error != 0) return error;
  if (target == IBV_QPS_ERR) {
    enter_error(q);
    return 0;
  }
  if (target == IBV_QPS_RESET) {
    q.sends.clear();
    q.receives.clear();
    q.waiting_for_receive = false;
    q.state = IBV_QPS_RESET;
    return 0;
  }
  if (const int error = apply_attributes(q, target, attr, mask); error != 0) return error;
  q.state = target;
  return 0;
}

int SoftwareRnic::Qp::set_rate_limit(uint32_t kbps) {
  if (!rnic_.options_.rate_limiter) return EOPNOTSUPP;
  Queue& q = queue();
  if (q.state != IBV_QPS_RTS) return EINVAL;
  const Port& port = *rnic_.ports_.at(static_cast<size_t>(q.port));
  // 0 lifts the limit.
  const uint64_t bps = kbps == 0 ? port.config->speed_bps : uint64_t{kbps} * 1000;
  port.worker->transport().set_rate_limit(q.qpn, bps);
  return 0;
}

}  // namespace etwire::dataplane
