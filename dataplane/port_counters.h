// A port's counters, and the one table that names them. Everything that shows port counters
// (summary.json, the console, telemetry records, Prometheus) iterates kPortCounterFields, so adding
// a counter is one member here and one row of the table.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "transport/transport_port.h"

namespace etwire::dataplane {

// Plain integers only: a port's queues and workers add up field by field, and a worker hands a
// copy to another core through a seqlock.
struct PortCounters {
  uint64_t tx_bytes = 0;  // wire bytes, preamble and gap included
  uint64_t rx_bytes = 0;
  uint64_t tx_packets = 0;
  uint64_t rx_packets = 0;
  uint64_t data_packets = 0;         // RoCE data packets sent, retransmissions included
  uint64_t ecn_marked_received = 0;  // CE-marked data packets that arrived at this port
  uint64_t cnps_sent = 0;
  uint64_t cnps_received = 0;
  uint64_t pfc_pauses_sent = 0;
  uint64_t pfc_pauses_received = 0;
  uint64_t drops = 0;  // lost on the way to or from the port (see docs/architecture.md)
  // The drops by cause; they add up to `drops`.
  uint64_t drops_buffer = 0;     // a full buffer or queue: the twin's switches, a device's queues
  uint64_t drops_link_down = 0;  // sent on, or in flight on, a link that was down
  uint64_t drops_fault = 0;      // lost to an injected fault (fabric.faults lossy, drop rates)
  uint64_t drops_bad_icrc = 0;   // arrived damaged and discarded by the receiving NIC
  uint64_t drops_other = 0;      // no route, no such QP, a malformed frame, a peer out of reach
  // Data packets the port's receiving QPs found missing from their sequence (PSN gaps): lost or
  // overtaken on the way, including where no counter of ours sees it (a kernel, a cable, a DUT).
  uint64_t missing_packets = 0;
  uint64_t retransmitted_packets = 0;
  uint64_t timeouts = 0;
  // The port's QPs' counters of the same names (transport::QpCounters).
  uint64_t sprayed_packets = 0;
  uint64_t reordered_packets = 0;
  uint64_t trimmed_packets = 0;

  bool operator==(const PortCounters&) const = default;
};

struct PortCounterField {
  std::string_view name;    // summary.json key
  std::string_view metric;  // Prometheus counter name
  std::string_view help;    // Prometheus help text
  uint64_t PortCounters::*member;
  // The column of the console's congestion table; empty: not a congestion signal, not listed.
  std::string_view congestion_column;
};

inline constexpr std::array<PortCounterField, 22> kPortCounterFields{{
    {"tx_bytes", "etwire_port_transmit_bytes_total",
     "Wire bytes the port sent, preamble and gap included.", &PortCounters::tx_bytes, ""},
    {"rx_bytes", "etwire_port_receive_bytes_total",
     "Wire bytes the port received, preamble and gap included.", &PortCounters::rx_bytes, ""},
    {"tx_packets", "etwire_port_transmit_packets_total",
     "Frames the port sent (data, control and PFC).", &PortCounters::tx_packets, ""},
    {"rx_packets", "etwire_port_receive_packets_total",
     "Frames the port received (data, control and PFC).", &PortCounters::rx_packets, ""},
    {"data_packets", "etwire_port_data_packets_total",
     "RoCE data packets the port sent, retransmissions included.", &PortCounters::data_packets, ""},
    {"ecn_marked_received", "etwire_port_ecn_marked_packets_total",
     "CE-marked RoCE data packets the port received.", &PortCounters::ecn_marked_received,
     "ecn_marks"},
    {"cnps_sent", "etwire_port_cnps_sent_total", "Congestion notification packets the port sent.",
     &PortCounters::cnps_sent, "cnps_sent"},
    {"cnps_received", "etwire_port_cnps_received_total",
     "Congestion notification packets the port received.", &PortCounters::cnps_received,
     "cnps_recv"},
    {"pfc_pauses_sent", "etwire_port_pfc_pause_frames_sent_total",
     "PFC pause frames (XOFF: a non-zero time) the port sent; resume frames (XON, time 0) are "
     "not counted.",
     &PortCounters::pfc_pauses_sent, "pfc_sent"},
    {"pfc_pauses_received", "etwire_port_pfc_pause_frames_received_total",
     "PFC pause frames (XOFF: a non-zero time) the port received; resume frames (XON, time 0) "
     "are not counted.",
     &PortCounters::pfc_pauses_received, "pfc_recv"},
    {"drops", "etwire_port_drops_total",
     "Packets to or from the port lost on the way: fabric buffers, link faults, device queues, "
     "frames that never arrived.",
     &PortCounters::drops, "drops"},
    {"drops_buffer", "etwire_port_drops_buffer_total",
     "Of the drops: packets a full buffer or queue discarded (the twin's switch buffers, a "
     "device's transmit or receive queues).",
     &PortCounters::drops_buffer, ""},
    {"drops_link_down", "etwire_port_drops_link_down_total",
     "Of the drops: frames sent on, or in flight on, a link that was down.",
     &PortCounters::drops_link_down, ""},
    {"drops_fault", "etwire_port_drops_fault_total",
     "Of the drops: frames lost to an injected fault (fabric.faults lossy, drop probabilities).",
     &PortCounters::drops_fault, ""},
    {"drops_bad_icrc", "etwire_port_drops_bad_icrc_total",
     "Of the drops: frames that arrived damaged and failed the receiving NIC's ICRC check.",
     &PortCounters::drops_bad_icrc, ""},
    {"drops_other", "etwire_port_drops_other_total",
     "Of the drops: frames with no route, for no known queue pair, malformed, or for a peer out "
     "of reach.",
     &PortCounters::drops_other, ""},
    {"missing_packets", "etwire_port_missing_packets_total",
     "RoCE data packets the port's receiving queue pairs found missing from their sequence: lost "
     "or overtaken on the way, wherever that was.",
     &PortCounters::missing_packets, "missing"},
    {"retransmitted_packets", "etwire_port_retransmitted_packets_total",
     "RoCE data packets the port sent again.", &PortCounters::retransmitted_packets, "retransmits"},
    {"timeouts", "etwire_port_timeouts_total", "Retransmission timeouts of the port's queue pairs.",
     &PortCounters::timeouts, "timeouts"},
    {"sprayed_packets", "etwire_port_sprayed_packets_total",
     "RoCE data packets the port sent on a UDP source port other than their queue pair's own "
     "(sprayed entropy).",
     &PortCounters::sprayed_packets, ""},
    {"reordered_packets", "etwire_port_reordered_packets_total",
     "RoCE data packets that arrived at the port's receiving queue pairs ahead of an earlier PSN "
     "still missing.",
     &PortCounters::reordered_packets, ""},
    {"trimmed_packets", "etwire_port_trimmed_packets_total",
     "RoCE data packets that arrived at the port cut to their headers by a switch.",
     &PortCounters::trimmed_packets, ""},
}};

// A member without a row would be counted but never shown.
static_assert(sizeof(PortCounters) == kPortCounterFields.size() * sizeof(uint64_t),
              "every PortCounters member needs its row in kPortCounterFields");

// Sets the counters the transport keeps of a port; the rest are its NIC's (device, twin, cable).
inline void set_transport_counters(PortCounters& counters,
                                   const transport::TransportPortCounters& transport) {
  counters.data_packets = transport.data_packets;
  counters.retransmitted_packets = transport.retransmitted_packets;
  counters.missing_packets = transport.missing_packets;
  counters.ecn_marked_received = transport.ecn_marked_received;
  counters.cnps_sent = transport.cnps_sent;
  counters.cnps_received = transport.cnps_received;
  counters.timeouts = transport.timeouts;
  counters.sprayed_packets = transport.sprayed_packets;
  counters.reordered_packets = transport.reordered_packets;
  counters.trimmed_packets = transport.trimmed_packets;
}

inline PortCounters& operator+=(PortCounters& total, const PortCounters& more) {
  for (const PortCounterField& field : kPortCounterFields)
    total.*field.member += more.*field.member;
  return total;
}

// One queue pair of a DPDK port that runs on several (dpdk.queues), with the lcore driving it.
struct PortQueueRecord {
  uint32_t queue = 0;
  uint32_t lcore = 0;
  uint64_t tx_bytes = 0;
  uint64_t rx_bytes = 0;
  uint64_t tx_packets = 0;
  uint64_t rx_packets = 0;
  // Arrived on this queue for a connection another queue drives, and passed to it: the device
  // steered them elsewhere than etwire placed the connection.
  uint64_t handed_over = 0;

  bool operator==(const PortQueueRecord&) const = default;
};

// The bit of kPortCounterFields[index] in PortRecord::absent.
constexpr uint32_t port_counter_bit(size_t index) {
  return uint32_t{1} << index;
}
static_assert(kPortCounterFields.size() <= 32, "PortRecord::absent has a bit per counter");

// A port's counters over the whole run, with its name and speed.
struct PortRecord : PortCounters {
  std::string name;
  uint64_t speed_bps = 0;
  std::vector<PortQueueRecord> queues;  // a DPDK port of several queues: each one's share
  // Counters the port's device does not count (port_counter_bit of each): an RNIC exposes only
  // some. They are shown as absent, never as zero; their members hold 0.
  uint32_t absent = 0;
  bool counted(size_t field) const { return (absent & port_counter_bit(field)) == 0; }
  // Every counter absent: the port is driven by another emulator process of a split run.
  static constexpr uint32_t kDrivenElsewhere = ~uint32_t{0};
  bool driven_elsewhere() const { return absent == kDrivenElsewhere; }
  // A verbs port with a per-QP rate limit: the limit, and what held QPs to it: "rnic" (the
  // device's limiter, ibv_modify_qp_rate_limit) or "posting" (etwire paced its work requests).
  uint64_t rate_limit_bps = 0;
  std::string rate_limited_by;
  // The emulator host that drives the port, in a run across several; empty otherwise.
  std::string host;

  bool operator==(const PortRecord&) const = default;
};

}  // namespace etwire::dataplane
