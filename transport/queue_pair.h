// The two halves of a reliable connection. A connection from port A to port B is a requester QP
// on A (it sends the data, paces it, retransmits it, and runs the DCQCN reaction point) and a
// responder QP on B (it accepts the data in order, acknowledges it, and is the notification point
// that turns CE marks into CNPs). Each half has a QP number, which packets address it by (the
// number frames carry on a wire); a transport holds only the halves whose port it drives, and
// knows the other half only by its port and QP number.
#pragma once

#include <cstdint>

#include "clock/line_rate.h"
#include "clock/time.h"
#include "transport/dcqcn_reaction_point.h"
#include "transport/flow_pool.h"

namespace etwire::transport {

// What the halves count for qps.csv (reported as QpCounters, qp_counters.h), kept small since
// it lives in every connection: 32-bit counts for events a QP meets far fewer than 2^32 times,
// and nothing that other state already counts. A requester's packets sent are highest_sent_psn +
// retransmitted_packets (every PSN goes out once before it is sent again); a requester's CNPs
// received are its reaction point's count; a responder's messages delivered are its
// message_sequence.
struct RequesterCounts {
  uint64_t messages = 0;  // acknowledged in full
  uint64_t bytes = 0;     // their payload
  uint64_t retransmitted_packets = 0;
  uint32_t naks_received = 0;
  uint32_t timeouts = 0;
};

struct ResponderCounts {
  uint64_t bytes = 0;    // payload accepted in order
  uint64_t packets = 0;  // data packets that arrived, duplicates and out-of-order ones included
  uint64_t reordered_packets = 0;  // arrived ahead of a PSN still missing
  uint32_t naks_sent = 0;
  uint32_t trimmed_packets = 0;  // arrived cut to their headers
  uint32_t ecn_marked_received = 0;
  uint32_t cnps_sent = 0;
};

enum class SendState : uint8_t {
  kIdle,     // nothing to send (or failed)
  kReady,    // in its port's round-robin of QPs that may send now
  kWaiting,  // paced: a wake-up event is scheduled for when it may send again
};

// Members are ordered by size, widest first, so that no padding sits between them, and the
// smaller ones fill the tail padding of the pacer and the reaction point ([[no_unique_address]]
// lets them): there is one of these per connection (a million in a 1024-rank all-to-all).
struct RequesterQp {
  // PSNs as 64-bit counters (psn.h). Posted flows own consecutive ranges ending before
  // next_post_psn; [acked_psn, next_psn) is in flight; below acked_psn is acknowledged; PSNs below
  // highest_sent_psn that are sent again are retransmissions.
  uint64_t next_post_psn = 0;
  uint64_t acked_psn = 0;
  uint64_t next_psn = 0;
  uint64_t highest_sent_psn = 0;

  // Retransmission timer: a deadline moved forward on every acknowledgement, and at most one
  // event in the scheduler (timer_event_pending) that re-arms itself if the deadline moved (no
  // cancel needed).
  clock::Nanos timeout_at = clock::kNever;

  clock::Nanos next_send_at = 0;  // the pacer lets the next packet start here
  [[no_unique_address]] clock::LineRateTimer pacer;
  // The last paced packet: its wire bytes and start, to re-time the gap after it when the rate
  // rises while the QP waits.
  uint32_t paced_bytes = 0;
  clock::Nanos paced_start = 0;
  [[no_unique_address]] DcqcnReactionPoint reaction_point;
  // Fixed retransmission: NAKs and timeouts since the last forward progress; the connection
  // fails once it passes transport.retry_count (at most 7). Adaptive: timeouts since the last
  // progress (saturating), which set the length of the next one.
  uint8_t retries = 0;
  uint16_t udp_source_port = 0;

  RequesterCounts counters;
  // The time it had messages outstanding (posted, not yet acknowledged: head != kNoFlow), and
  // the DCQCN rate integrated over that time, for qps.csv's mean rate. Each busy period
  // subtracts its start's clock and integral and adds its end's, so no start needs keeping;
  // while busy, both hold the sums so far minus the current period's start.
  clock::Nanos busy_ns = 0;
  double busy_rate_integral = 0;

  uint32_t port = 0;         // the transport port it sends from (index in the transport)
  uint32_t remote_port = 0;  // the port of its responder, as packets name it
  uint32_t qpn = 0;          // its own QP number
  uint32_t remote_qpn = 0;   // the responder's QP number: data packets go there

  // The QP's flows in posting order: the oldest not yet acknowledged, the newest, the one whose
  // packet goes next, and the oldest not yet delivered to the responder.
  uint32_t head = kNoFlow;
  uint32_t tail = kNoFlow;
  uint32_t cursor = kNoFlow;
  uint32_t cursor_packet = 0;
  uint32_t undelivered = kNoFlow;

  SendState state = SendState::kIdle;
  bool timer_event_pending : 1 = false;
  bool failed : 1 = false;
  bool resend_pending : 1 = false;  // out-of-order receivers: a PSN queued to be sent again
  // Its responder places out-of-order data: a NAK asks for one PSN, not for a go-back.
  bool to_out_of_order : 1 = false;
  // Adaptive retransmission: when the current stall began (the last progress, or the first packet
  // sent with nothing outstanding), as retransmit_timing::StallClock stamps it.
  uint16_t progress_stamp = 0;

  bool has_packet_to_send() const {
    return !failed && (next_psn < next_post_psn || resend_pending);
  }
  bool has_unacknowledged() const { return acked_psn < highest_sent_psn; }
};

inline constexpr uint32_t kNoQp = ~0u;

// ResponderQp::requester_or_marks at or above this: the requester is in another transport.
inline constexpr uint32_t kRemoteRequester = 1u << 31;

// Ordered widest first, as RequesterQp is.
struct ResponderQp {
  uint64_t expected_psn = 0;
  clock::Nanos last_cnp_at = clock::kNever;
  ResponderCounts counters;
  uint32_t port = 0;         // index in the transport
  uint32_t remote_port = 0;  // the requester's port, as packets name it
  uint32_t qpn = 0;          // its own QP number
  uint32_t remote_qpn = 0;   // the requester's QP number: ACKs and CNPs go there
  // Go-back-N from the responder's side (with nak_outstanding): one NAK per gap, and another
  // only when the requester has visibly started over (an out-of-order PSN at or below the
  // highest one seen since the NAK) and the gap is still there, i.e. the resend itself was lost.
  // Without the second NAK a lost resend costs a full retransmission timeout. The PSN's low 32
  // bits: PSNs in flight span less than 2^23, so a serial comparison orders them.
  uint32_t highest_out_of_order_psn = 0;
  // One word for what a responder has one or the other of. Below kRemoteRequester: the slot of
  // its requester, which this transport holds too (both ports are its own), whose flow records
  // then take each delivery directly. Else kRemoteRequester plus the CE marks seen since the
  // last delivered message, which the requester's transport learns with the delivery.
  uint32_t requester_or_marks = kRemoteRequester;
  uint32_t message_sequence = 0;  // MSN: messages completed, carried in the AETH
  uint16_t udp_source_port = 0;
  bool nak_outstanding = false;

  bool has_local_requester() const { return requester_or_marks < kRemoteRequester; }
  uint32_t ecn_marks_for_remote() const { return requester_or_marks - kRemoteRequester; }
  void count_mark_for_remote() {
    if (requester_or_marks != UINT32_MAX) ++requester_or_marks;  // saturates: 2^31 - 1 marks
  }
  // Whether `psn` is at or below the highest out-of-order PSN seen (serial order).
  bool at_or_below_highest_out_of_order(uint64_t psn) const {
    return static_cast<int32_t>(static_cast<uint32_t>(psn) - highest_out_of_order_psn) <= 0;
  }
};

}  // namespace etwire::transport
