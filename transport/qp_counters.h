// What one QP half did over a run (qps.csv, docs/monitoring.md): counters the transport
// increments beside its port counters, so that a port's transport counters are the sum of its
// QPs', and a snapshot of one half with its DCQCN rate figures. Plain integers on the hot path:
// one increment per event, no allocation, nothing shared with another worker.
#pragma once

#include <cstdint>
#include <string_view>

#include "clock/time.h"

namespace etwire::transport {

enum class QpRole : uint8_t {
  kRequester,  // sends the data, paces it, retransmits, runs the DCQCN reaction point
  kResponder,  // accepts the data in order, acknowledges it, sends CNPs
};

// "requester", "responder"
std::string_view qp_role_name(QpRole role);

struct QpCounters {
  // Requester: messages acknowledged in full, and their payload bytes. Responder: messages
  // delivered, and the payload bytes it accepted in order.
  uint64_t messages = 0;
  uint64_t bytes = 0;
  // Requester: data packets sent, retransmissions included. Responder: data packets that
  // arrived (duplicates and out-of-order ones included).
  uint64_t packets = 0;
  uint64_t retransmitted_packets = 0;  // requester
  uint64_t naks_sent = 0;              // responder: PSN sequence errors it reported
  uint64_t naks_received = 0;          // requester
  uint64_t timeouts = 0;               // requester: retransmission timer expiries
  uint64_t ecn_marked_received = 0;    // responder: CE-marked data packets
  uint64_t cnps_sent = 0;              // responder
  uint64_t cnps_received = 0;          // requester
};

// One QP half as the transport reports it at the end of a run. Ports are numbered as packets
// name them (the run's port index); QP numbers are the ones frames carry.
struct QpStats {
  QpRole role = QpRole::kRequester;
  uint32_t port = 0;
  uint32_t remote_port = 0;
  uint32_t qpn = 0;
  uint32_t remote_qpn = 0;
  QpCounters counters;
  // Requester only (a responder has no reaction point).
  uint64_t rate_cuts = 0;
  double min_rate_bps = 0;  // the lowest rate DCQCN set (its start rate if never cut)
  // The DCQCN rate averaged over the time the QP had messages outstanding (posted and not yet
  // acknowledged), weighted by time; 0 when it never had any (busy_ns 0).
  double mean_rate_bps = 0;
  clock::Nanos busy_ns = 0;
};

}  // namespace etwire::transport
