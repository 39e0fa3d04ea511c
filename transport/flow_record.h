// What the transport reports for every flow (one message on one QP): who it belongs to, what it
// carried, when it moved, and what happened to it on the way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "clock/time.h"

namespace etwire::transport {

enum class FlowStatus : uint8_t {
  kCompleted,      // every byte acknowledged
  kRetryExceeded,  // the QP gave up on it after retry_count retransmissions
  kFlushed,        // queued behind a flow that failed: the QP was in error (RC semantics)
  // The other errors an RDMA NIC reports in a work completion (the verbs backend); each puts
  // the QP in error, as kRetryExceeded does.
  kRnrRetryExceeded,      // the receiver had no receive posted, rnr_retry times
  kRemoteAccessError,     // the receiver refused the rkey, address or access
  kRemoteInvalidRequest,  // the receiver found the request invalid (a SEND too long)
  kRemoteOperationError,  // the receiver could not complete the operation
  kLocalLengthError,      // the message exceeds what the QP or the receive buffer takes
  kLocalProtectionError,  // the local buffer is not registered for this use
  kLocalQpOperationError,
  kDeviceError,  // any other completion error: the device's status is in the run's summary
};
inline constexpr size_t kFlowStatusCount = 11;
// "completed", "retry-exceeded", "flushed", "rnr-retry-exceeded", "remote-access-error", ...
std::string_view flow_status_name(FlowStatus status);

// Identifiers the poster attaches to a flow; the transport carries them into the record.
// Widest first: every flow in progress has a copy (FlowSlot), whose smaller members fill the
// tail padding.
struct FlowTags {
  int32_t src_rank = -1;
  int32_t dst_rank = -1;
  uint64_t collective = 0;  // collective instance
  uint64_t user = 0;        // opaque to the transport (e.g. the step-program operation)
  uint32_t chunk = 0;
  // Carried on the wire in the message's last packet, as its immediate (WRITE or SEND WITH
  // IMMEDIATE): how a receiver in another process, which never sees these tags, tells which
  // message arrived. 0: none (the immediate then carries the flow id, for captures).
  uint32_t wire_tag = 0;
  uint16_t qp_index = 0;  // which of the pair's QPs
  // With transport.op write-with-imm: this message is a plain WRITE, with no immediate. The
  // software RNIC posts each work request as a message; only a message's last carries one.
  bool plain_write = false;
};

struct FlowRecord {
  uint64_t flow_id = 0;  // in posting order, from 0, unique within a Transport
  FlowTags tags;
  uint32_t src_port = 0;  // as packets name the ports
  uint32_t dst_port = 0;
  // QP numbers of the two halves, as packets address them: on a run's data planes, the address
  // plan's numbers that frames carry, so flows.csv joins a capture (data frames carry dest_qpn,
  // ACKs and CNPs carry qpn).
  uint32_t qpn = 0;       // the requester (sending) QP
  uint32_t dest_qpn = 0;  // the responder (receiving) QP
  uint64_t bytes = 0;
  clock::Nanos posted_at = 0;
  clock::Nanos first_byte_out = clock::kNever;  // first packet of the flow started on the wire
  clock::Nanos delivered_at = clock::kNever;    // last packet accepted in order by the responder
  clock::Nanos finished_at = clock::kNever;     // acknowledged in full, or failed
  uint32_t packets = 0;                         // packets of the message (first transmissions)
  uint32_t retransmitted_packets = 0;           // packets sent again after NAK or timeout
  uint32_t cnps = 0;       // CNPs the requester received while the flow was sending
  uint32_t ecn_marks = 0;  // CE-marked packets the responder saw for this flow
  FlowStatus status = FlowStatus::kCompleted;

  // Flow completion time: from posting to the last byte at the receiver.
  clock::Nanos fct() const { return delivered_at - posted_at; }
};

// Receives flows as they progress. Called from inside the transport's event handling: keep it
// short. Posting new flows from it is allowed (that is how dependent steps are released);
// opening connections is not (open them before traffic starts).
class FlowObserver {
 public:
  // The last byte reached the receiver (a receive in the step program completes here).
  virtual void on_flow_delivered(const FlowRecord& record) = 0;
  // The flow is done: acknowledged in full (a send completes here) or failed. The record is final.
  virtual void on_flow_finished(const FlowRecord& record) = 0;
  // The next message from the requester with QP number `requester_qpn`, which this transport
  // does not hold (another worker, process or host drives it), reached its responder here at
  // `now`, with `ecn_marks` CE-marked packets since the previous one, and `immediate`, its last
  // packet's immediate (0 for an operation without one: FlowTags::wire_tag when the poster set
  // one). The flow records are the requester's transport's: whoever posted the messages matches
  // the deliveries to them, in order. Only a transport holding one half of a connection calls it.
  virtual void on_delivered_to_responder(uint32_t requester_qpn, clock::Nanos now,
                                         uint32_t ecn_marks, uint32_t immediate) {
    (void)requester_qpn;
    (void)now;
    (void)ecn_marks;
    (void)immediate;
  }

 protected:
  ~FlowObserver() = default;
};

}  // namespace etwire::transport
