// The verbs data plane's connections: per connection of the plan a requester QP on the sending
// port's device and a responder QP on the receiving port's, created and moved RESET -> INIT ->
// RTR -> RTS, the responder's receives posted ahead, the requester's rate limit set (by the RNIC,
// or by pacing the posting when the RNIC has no per-QP limiter). Across processes, the halves
// here wait in INIT for their peers' facts (verbs_qp_exchange.cc).
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "common/rate.h"
#include "dataplane/verbs/verbs_data_plane.h"
#include "dataplane/verbs/verbs_data_plane_internal.h"
#include "nic/verbs/rdma_devices.h"

namespace etwire::dataplane {

using nic::verbs::VerbsQp;
using verbs_data_plane_internal::needs_receives;
using verbs_data_plane_internal::post_receive;
using verbs_data_plane_internal::timeout_exponent;

namespace {

// RoCE's traffic class carries DSCP in its upper six bits.
constexpr int kDscpShift = 2;
// The RNR timer a receiver asks for (IB encoding 12: 0.64 ms), as perftest's default.
constexpr uint8_t kMinRnrTimer = 12;

// Posts the responder's receives ahead: as many as the queue is deep, so that the sender never
// waits for one. Throws std::runtime_error when the device's completion queue cannot take them or
// the device refuses one.
void post_receives_ahead(VerbsDataPlane::Connection& c, VerbsDataPlane::Device& device,
                         const VerbsDataPlane::Port& port, uint32_t queue_depth,
                         const std::string& between) {
  if (device.cq_load + static_cast<int>(queue_depth) > device.cq->capacity()) {
    throw std::runtime_error(fmt::format(
        "{} port {}: its completion queue ({} entries) cannot take the receives of one more "
        "connection ({}); lower verbs.queue_depth ({})",
        device.device->name(), port.number, device.cq->capacity(), between, queue_depth));
  }
  for (uint32_t r = 0; r < queue_depth; ++r) {
    if (int e = post_receive(c, device); e != 0) {
      throw std::runtime_error(
          fmt::format("{} port {}: ibv_post_recv on QP 0x{:x} failed: {} (connection of {})",
                      device.device->name(), port.number, c.responder->qp_num(),
                      nic::verbs::errno_text(e), between));
    }
  }
}

}  // namespace

transport::ConnectionId VerbsDataPlane::connect(const WireConnection& connection) {
  const WireEndpoint& from = connection.requester;
  const WireEndpoint& to = connection.responder;
  const bool requester_here = here_.at(from.port);
  const bool responder_here = here_.at(to.port);
  const std::string between = ports_between(from.port, to.port);
  if (!requester_here && !responder_here) {
    throw std::invalid_argument(fmt::format(
        "the connection of {}: neither port is driven by this emulator process", between));
  }
  if (finished_connecting_ && !(requester_here && responder_here)) {
    throw std::logic_error(fmt::format(
        "the connection of {} was opened after the emulator processes exchanged their QPs: a "
        "split run opens every connection between processes from the traffic plan",
        between));
  }
  join_.add_connection(from.port, from.qpn, to.port, to.qpn,
                       requester_here && responder_here ? HalvesHere::kBoth
                       : requester_here                 ? HalvesHere::kRequester
                                                        : HalvesHere::kResponder);
  auto owned = std::make_unique<Connection>();
  Connection& c = *owned;
  c.index = static_cast<uint32_t>(connections_.size());
  c.plan_requester = from.qpn;
  c.plan_responder = to.qpn;
  c.src_port = from.port;
  c.dst_port = to.port;
  c.udp_source_port = connection.udp_source_port;
  connections_.push_back(std::move(owned));
  const config::VerbsConfig& verbs = config_.verbs;
  const bool receives = needs_receives(config_.transport.op);

  ibv_qp_cap sending{};
  sending.max_send_wr = verbs.queue_depth;
  sending.max_send_sge = 1;
  ibv_qp_cap receiving{};
  receiving.max_send_wr = 1;
  receiving.max_recv_wr = receives ? verbs.queue_depth : 0;
  receiving.max_recv_sge = 1;
  // Connections open before the run's traffic: a device refusing one stops the run, in words
  // that name the device, the port, the QP and the call.
  auto create = [&](uint32_t port, ibv_qp_cap& caps, const char* role) {
    Device& device = *device_of(port);
    try {
      return device.device->create_qp(*device.cq, *device.cq, caps);
    } catch (const nic::verbs::VerbsError& e) {
      throw std::runtime_error(fmt::format("{} port {}: the {} QP of the connection of {}: {}",
                                           device.device->name(), ports_[port]->number, role,
                                           between, e.what()));
    }
  };
  auto to_init = [&](VerbsQp& qp, uint32_t port) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = ports_[port]->number;
    attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    if (int e =
            qp.modify(attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
        e != 0) {
      throw modify_failed(qp, *ports_[port], "INIT", e, c);
    }
  };
  if (requester_here) {
    c.requester = create(from.port, sending, "requester");
    to_init(*c.requester, from.port);
  }
  if (responder_here) {
    c.responder = create(to.port, receiving, "responder");
    to_init(*c.responder, to.port);
  }
  if (requester_here && responder_here) {
    complete_connection(c, local_facts(c, true), local_facts(c, false));
  } else {
    unfinished_.push_back(c.index);
  }
  return {from.qpn, to.qpn};
}

VerbsDataPlane::PeerFacts VerbsDataPlane::local_facts(const Connection& c, bool requester) const {
  const uint32_t port = requester ? c.src_port : c.dst_port;
  const Device& device = *device_of(port);
  PeerFacts facts;
  facts.qpn = (requester ? c.requester : c.responder)->qp_num();
  facts.gid = ports_[port]->gid.gid;
  facts.psn = config_.verbs.start_psn;
  facts.address = device.region.address;
  facts.rkey = device.region.rkey;
  return facts;
}

void VerbsDataPlane::complete_connection(Connection& c, const PeerFacts& requester,
                                         const PeerFacts& responder) {
  const config::VerbsConfig& verbs = config_.verbs;
  const bool receives = needs_receives(config_.transport.op);
  const std::string between = ports_between(c.src_port, c.dst_port);
  auto to_rtr = [&](VerbsQp& qp, const Port& port, const PeerFacts& peer,
                    const config::PortConfig& settings) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = nic::verbs::path_mtu_code(config_.transport.pmtu);
    attr.dest_qp_num = peer.qpn;
    attr.rq_psn = peer.psn;  // the PSN the peer starts sending with
    attr.max_dest_rd_atomic = 1;
    attr.min_rnr_timer = kMinRnrTimer;
    attr.ah_attr.is_global = 1;
    attr.ah_attr.port_num = port.number;
    attr.ah_attr.sl = settings.qos.data.priority;
    attr.ah_attr.grh.dgid = peer.gid;
    attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(port.gid.gid_index);
    attr.ah_attr.grh.hop_limit = 64;
    // DSCP in the upper six bits, the configured ECN codepoint (ECT(0) by default) in the lower
    // two, as perftest's --tclass takes them.
    attr.ah_attr.grh.traffic_class = static_cast<uint8_t>(
        settings.qos.data.dscp << kDscpShift | static_cast<uint8_t>(settings.qos.data.ecn));
    // RoCE devices derive the UDP source port from the flow label, as 0xC000 | (low 14 bits ^
    // the 6 above): a label of the port's low 14 bits gives the plan's port itself for the
    // default pool (49152 .. 65535), and a port per connection for any other.
    attr.ah_attr.grh.flow_label = c.udp_source_port & 0x3FFFu;
    if (int e =
            qp.modify(attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
        e != 0) {
      throw modify_failed(qp, port, "RTR", e, c);
    }
  };
  auto to_rts = [&](VerbsQp& qp, const Port& port) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RTS;
    attr.sq_psn = verbs.start_psn;
    attr.timeout = timeout_exponent(config_.transport.retransmit_timeout_ns);
    attr.retry_cnt = static_cast<uint8_t>(config_.transport.retry_count);
    attr.rnr_retry = verbs.rnr_retry;
    attr.max_rd_atomic = 1;
    if (int e = qp.modify(attr, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
        e != 0) {
      throw modify_failed(qp, port, "RTS", e, c);
    }
  };
  Port& src = *ports_[c.src_port];
  Port& dst = *ports_[c.dst_port];
  // The receiving side first: it must be ready before anything is sent to it.
  if (c.responder) to_rtr(*c.responder, dst, requester, config_.ports[c.dst_port]);
  if (c.requester) to_rtr(*c.requester, src, responder, config_.ports[c.src_port]);
  if (c.responder) to_rts(*c.responder, dst);
  if (c.requester) to_rts(*c.requester, src);
  c.remote_address = responder.address;
  c.remote_rkey = responder.rkey;

  Device* src_device = device_of(c.src_port);
  Device* dst_device = device_of(c.dst_port);
  if (receives && c.responder) post_receives_ahead(c, *dst_device, dst, verbs.queue_depth, between);
  if (c.requester) apply_rate_limit(c, src);
  // A device whose completion queue is gone takes no new work: what is posted here is flushed.
  c.failed =
      (src_device != nullptr && src_device->lost) || (dst_device != nullptr && dst_device->lost);
  if (c.requester) src_device->qps[c.requester->qp_num()] = c.index * 2;
  if (c.responder) dst_device->qps[c.responder->qp_num()] = c.index * 2 + 1;
  numbers_->add(c.plan_requester, requester.qpn, responder.qpn);
  if (c.requester) {
    if (c.plan_requester >= connection_of_requester_.size()) {
      connection_of_requester_.resize(c.plan_requester + 1);
    }
    connection_of_requester_[c.plan_requester] = c.index;
  }
}

void VerbsDataPlane::apply_rate_limit(Connection& c, Port& port) {
  const config::PortConfig& settings = config_.ports[c.src_port];
  if (!settings.verbs.rate_limit_bps) return;
  const uint64_t bps = *settings.verbs.rate_limit_bps;
  const int error = c.requester->set_rate_limit(static_cast<uint32_t>(bps / 1000));
  if (error != 0 && error != EOPNOTSUPP && error != EINVAL) {
    throw std::runtime_error(
        fmt::format("{} port {}: ibv_modify_qp_rate_limit on QP 0x{:x} failed: {}",
                    devices_[port.device]->device->name(), port.number, c.requester->qp_num(),
                    nic::verbs::errno_text(error)));
  }
  const bool by_rnic = error == 0;
  if (!by_rnic) {
    c.pace_bps = bps;
    port.refusal = error;
  }
  bool& seen = by_rnic ? port.held_by_rnic : port.paced_by_posting;
  if (seen) return;
  seen = true;
  port.rate_limit_bps = bps;
  // One note per port, rewritten if its QPs come out both ways.
  std::string note;
  if (port.held_by_rnic && port.paced_by_posting) {
    port.rate_limited_by = "rnic+posting";
    note = fmt::format(
        "{}: per-QP rate limit {} held by the RNIC on some of its QPs "
        "(ibv_modify_qp_rate_limit); the RNIC refused it on others ({}), whose posting etwire "
        "paces to {} per QP (bursts of verbs.max_message at line rate)",
        settings.name, format_rate(bps), std::strerror(port.refusal), format_rate(bps));
  } else if (by_rnic) {
    port.rate_limited_by = "rnic";
    note = fmt::format("{}: per-QP rate limit {} held by the RNIC (ibv_modify_qp_rate_limit)",
                       settings.name, format_rate(bps));
  } else {
    port.rate_limited_by = "posting";
    note = fmt::format(
        "{}: the RNIC refused a per-QP rate limit ({}): etwire paces the posting of work requests "
        "to {} per QP instead (bursts of verbs.max_message at line rate)",
        settings.name, std::strerror(error), format_rate(bps));
  }
  if (port.rate_limited_by == "rnic+posting") {
    notes_[port.rate_note] = std::move(note);
  } else {
    port.rate_note = notes_.size();
    notes_.push_back(std::move(note));
  }
}

std::runtime_error VerbsDataPlane::modify_failed(const nic::verbs::VerbsQp& qp, const Port& port,
                                                 const char* state, int error,
                                                 const Connection& c) const {
  return std::runtime_error(
      fmt::format("{} port {}: ibv_modify_qp of QP 0x{:x} to {} failed: {} (connection of {})",
                  devices_[port.device]->device->name(), port.number, qp.qp_num(), state,
                  nic::verbs::errno_text(error), ports_between(c.src_port, c.dst_port)));
}

uint32_t VerbsDataPlane::recorded_requester_qpn(uint32_t plan_qpn) const {
  return numbers_->requester_of(plan_qpn);
}

}  // namespace etwire::dataplane
