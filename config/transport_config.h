// `transport:` — the software RoCEv2 reliable-connected transport: which RDMA operation carries
// the data, packet sizes, acknowledgement and retransmission, and DCQCN.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "config/dcqcn_config.h"

namespace etwire::config {

enum class RdmaOp : uint8_t {
  kWrite,               // RDMA WRITE FIRST/MIDDLE/LAST/ONLY
  kWriteWithImmediate,  // as NCCL: WRITEs, the last packet WITH IMMEDIATE
  kSend,                // SEND FIRST/MIDDLE/LAST/ONLY
};
std::string_view rdma_op_name(RdmaOp op);  // "write", "write-with-imm", "send"

// When a requester resends what was not acknowledged, and when it gives up on the connection.
enum class Retransmission : uint8_t {
  // The InfiniBand model: every local ACK timeout is retransmit_timeout long, and the connection
  // fails after retry_count timeouts (and NAKs, with naks_count_as_retries) without progress.
  kFixed,
  // NVIDIA's adaptive retransmission (ConnectX firmware, ROCE_ACCL roce_adp_retrans_en): the first
  // timeout is short and spread over QPs, each timeout without progress doubles the next one up
  // to retransmit_timeout, progress starts again from the first, and the connection fails once
  // nothing has been acknowledged for retransmit_timeout x retry_count.
  kAdaptive,
};
std::string_view retransmission_name(Retransmission mode);  // "fixed", "adaptive"

// Which UDP source port (RoCEv2's entropy field, what ECMP hashes) a QP's data packets carry.
enum class EntropyMode : uint8_t {
  kPerQp,  // the connection's own, on every packet: one QP, one path through an ECMP fabric
  kSpray,  // a new port every `every` packets, cycling through `values` ports: one QP over many
};
std::string_view entropy_mode_name(EntropyMode mode);  // "per-qp", "spray"

// How a responder takes data packets that arrive out of order.
enum class Receiver : uint8_t {
  // Classic RoCE: only the next expected PSN is accepted; a gap draws one NAK and the requester
  // goes back to it, resending everything after it.
  kGoBackN,
  // As NICs that place out-of-order data (and Ultra Ethernet's reliable unordered delivery): a
  // packet is placed by its PSN wherever it falls in the window, a message completes once all
  // its PSNs are in, and a PSN still missing once later ones have run far enough ahead is
  // reported lost on its own; the requester resends only that one.
  kOutOfOrder,
};
std::string_view receiver_name(Receiver receiver);  // "go-back-n", "out-of-order"

// `transport.out_of_order`: the out-of-order receiver's reach.
struct OutOfOrderConfig {
  uint32_t window = 1024;    // PSNs ahead of the next expected one a responder can place
  uint32_t loss_after = 64;  // a PSN still missing when one this far past it arrives is lost
};

// `transport.entropy`.
struct EntropyConfig {
  EntropyMode mode = EntropyMode::kPerQp;
  uint32_t every = 1;     // spray: packets in a row on one source port
  uint32_t values = 256;  // spray: the distinct source ports a QP cycles through (2 .. 16384)
};

// RoCE path MTUs (the InfiniBand MTU enumeration).
inline constexpr uint32_t kRocePathMtus[] = {256, 512, 1024, 2048, 4096};
// Bytes a port MTU must leave for headers around a path-MTU payload: GRH-sized IP header 40, UDP
// 8, BTH 12, and the largest extension headers plus ICRC (XRC 4, atomic 28, ICRC 4). Linux picks
// the largest path MTU with pmtu + 96 <= port MTU; so does etwire.
inline constexpr uint32_t kRoceHeaderAllowance = 96;
// The largest RoCE path MTU a port MTU carries; 0 when even 256 does not fit.
uint32_t largest_path_mtu(uint32_t port_mtu);

struct TransportConfig {
  RdmaOp op = RdmaOp::kWriteWithImmediate;
  // Payload bytes per packet. Resolved: the configured value, or when `auto` the largest path MTU
  // every port's MTU carries.
  uint32_t pmtu = 4096;
  bool pmtu_auto = true;
  uint8_t ip_version = 4;  // 4 or 6: which address family frames carry
  // The requester sets AckReq on every Nth packet and on the last packet of a message; the
  // responder coalesces ACKs accordingly.
  uint32_t ack_interval = 16;
  Retransmission retransmission = Retransmission::kAdaptive;
  // The QP's local ACK timeout. Fixed retransmission: go-back-N after this long without progress.
  // Adaptive: the longest timeout, and x retry_count the time without progress that fails the
  // connection. The default is the InfiniBand timeout exponent 14 (4.096 us x 2^14), common on
  // RoCE fabrics.
  uint64_t retransmit_timeout_ns = 67'108'864;
  uint32_t retry_count = 7;  // retransmissions of one packet before the flow fails (0..7)
  // Adaptive retransmission's first timeout after progress; 0: a quarter of the QP's timeout
  // (16.8 ms for the default), so that a configuration that raises retransmit_timeout for a
  // shared host's pauses raises it too. Each QP draws its own from [first, 2 x first), as the
  // firmware randomizes its initial timeout so that QPs that lost packets together do not resend
  // together.
  uint64_t adaptive_first_timeout_ns = 0;
  // Fixed retransmission only: whether a NAK (PSN sequence error) uses up one of retry_count's
  // retries, as a timeout does.
  // On: NAKs without progress in between count, and a lossy incast can fail flows. Off: only
  // timeouts without progress do, so a receiver that keeps answering with NAKs keeps the
  // connection alive however long the losses last; on the twin, senders locked in phase with a
  // full tail-drop queue can then resend for ever, until the run's watchdog stops them.
  bool naks_count_as_retries = true;
  // Whether the configuration set retransmission, adaptive_first_timeout or
  // naks_count_as_retries: a hardware RNIC retransmits as its firmware is set, so there they are
  // refused rather than ignored.
  bool retransmission_model_set = false;
  EntropyConfig entropy;
  // The receiver of every port that does not name its own (ports[].receiver).
  Receiver receiver = Receiver::kGoBackN;
  // Resolved by the loader from ports[].receiver: each run port's receiver, by run port index,
  // when some port's differs from `receiver`; empty when every port takes `receiver`. A requester
  // follows its responder's (a NAK means something else to each), so the table covers every run
  // port, those other processes drive included.
  std::vector<Receiver> port_receivers;
  OutOfOrderConfig out_of_order;
  DcqcnConfig dcqcn;

  // The receiver of run port `port` (`receiver` for a port the table does not cover).
  Receiver receiver_of(uint32_t port) const {
    return port < port_receivers.size() ? port_receivers[port] : receiver;
  }
  bool any_out_of_order() const {
    if (receiver == Receiver::kOutOfOrder) return true;
    for (Receiver r : port_receivers) {
      if (r == Receiver::kOutOfOrder) return true;
    }
    return false;
  }
};

}  // namespace etwire::config
