// What one QP half did over a run (qps.csv, docs/monitoring.md): counters the transport
// increments beside its port counters, so that a port's transport counters are the sum of its
// QPs', and a snapshot of one half with its DCQCN rate figures. Plain integers on the hot path:
// one increment per event, no allocation, nothing shared with another worker.
#pragma once

#include <array>
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
  // Requester: data packets sent on a UDP source port other than the QP's own
  // (transport.entropy: spray), retransmissions included.
  uint64_t sprayed_packets = 0;
  // Responder: data packets that arrived ahead of a PSN still missing (overtaken, or after a
  // loss), whether placed (out-of-order receivers) or discarded (go-back-N).
  uint64_t reordered_packets = 0;
  uint64_t trimmed_packets = 0;  // responder: data packets that arrived cut to their headers

  bool operator==(const QpCounters&) const = default;
};

// Which roles count a counter (QpCounterField::roles).
inline constexpr uint8_t kRequesterCounts = 1;
inline constexpr uint8_t kResponderCounts = 2;
inline constexpr uint8_t role_bit(QpRole role) {
  return role == QpRole::kRequester ? kRequesterCounts : kResponderCounts;
}

// The one table that names the QP counters: qps.csv's columns, summary.json's keys and the
// per-QP Prometheus series iterate it, so adding a counter is one member and one row.
struct QpCounterField {
  std::string_view name;    // qps.csv column, summary.json key
  std::string_view metric;  // Prometheus counter name
  std::string_view help;    // Prometheus help text
  uint64_t QpCounters::*member;
  // The roles that count it: the other role's row holds 0, and has no Prometheus series.
  uint8_t roles;
};

inline constexpr std::array<QpCounterField, 13> kQpCounterFields{{
    {"messages", "etwire_qp_messages_total",
     "Messages the QP completed: acknowledged in full (requester) or delivered (responder).",
     &QpCounters::messages, kRequesterCounts | kResponderCounts},
    {"bytes", "etwire_qp_payload_bytes_total",
     "Payload bytes of the messages the QP completed (requester) or accepted in order "
     "(responder).",
     &QpCounters::bytes, kRequesterCounts | kResponderCounts},
    {"packets", "etwire_qp_data_packets_total",
     "RoCE data packets the QP sent, retransmissions included (requester), or that arrived at "
     "it (responder).",
     &QpCounters::packets, kRequesterCounts | kResponderCounts},
    {"retransmitted_packets", "etwire_qp_retransmitted_packets_total",
     "RoCE data packets the QP sent again.", &QpCounters::retransmitted_packets, kRequesterCounts},
    {"naks_sent", "etwire_qp_naks_sent_total", "PSN sequence error NAKs the QP sent.",
     &QpCounters::naks_sent, kResponderCounts},
    {"naks_received", "etwire_qp_naks_received_total", "PSN sequence error NAKs the QP received.",
     &QpCounters::naks_received, kRequesterCounts},
    {"timeouts", "etwire_qp_timeouts_total", "Retransmission timeouts of the QP.",
     &QpCounters::timeouts, kRequesterCounts},
    {"ecn_marked_received", "etwire_qp_ecn_marked_packets_total",
     "CE-marked RoCE data packets that arrived at the QP.", &QpCounters::ecn_marked_received,
     kResponderCounts},
    {"cnps_sent", "etwire_qp_cnps_sent_total", "Congestion notification packets the QP sent.",
     &QpCounters::cnps_sent, kResponderCounts},
    {"cnps_received", "etwire_qp_cnps_received_total",
     "Congestion notification packets the QP received.", &QpCounters::cnps_received,
     kRequesterCounts},
    {"sprayed_packets", "etwire_qp_sprayed_packets_total",
     "RoCE data packets the QP sent on a UDP source port other than its own (sprayed entropy).",
     &QpCounters::sprayed_packets, kRequesterCounts},
    {"reordered_packets", "etwire_qp_reordered_packets_total",
     "RoCE data packets that arrived at the QP ahead of an earlier PSN still missing.",
     &QpCounters::reordered_packets, kResponderCounts},
    {"trimmed_packets", "etwire_qp_trimmed_packets_total",
     "RoCE data packets that arrived at the QP cut to their headers by a switch.",
     &QpCounters::trimmed_packets, kResponderCounts},
}};

static_assert(sizeof(QpCounters) == kQpCounterFields.size() * sizeof(uint64_t),
              "every QpCounters member needs its row in kQpCounterFields");

inline QpCounters& operator+=(QpCounters& total, const QpCounters& more) {
  for (const QpCounterField& field : kQpCounterFields) total.*field.member += more.*field.member;
  return total;
}

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
  double rate_bps = 0;  // the DCQCN rate at the time of the snapshot (telemetry)

  bool operator==(const QpStats&) const = default;
};

}  // namespace etwire::transport
