// Joins the two halves' reports of every message into the flow records the engine sees. A
// transport holds only the halves of connections whose ports it drives (transport.h), so a
// message's sender and receiver may be different transports: another worker, core, process or
// host. The requester's transport reports when a message finished (acknowledged in full, or
// failed) with its sending-side record; the responder's reports when it was delivered. The join
// numbers flows run-wide in posting order, matches deliveries and finishes to the posted
// messages of each connection in order, and tells the engine: a delivery as it is joined, a
// finish once the message's delivery has been seen (or the message failed), in posting order per
// connection. A transport that holds both halves reports the delivery with a record; that is the
// same report.
//
// Reports reach it on one thread (rings bring them there from other cores), or, between a
// partitioned twin's windows, on several threads at once, each taking the reports of connections
// apart from the others' and keeping what it would tell the engine for the engine's thread
// (delivered_later, finished_later, tell). Costs are per message, not per packet.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "clock/time.h"
#include "common/ring_queue.h"
#include "transport/flow_record.h"

namespace etwire::dataplane {

// Which halves of a connection this process holds. A run split between emulator processes holds
// one half of a connection between ports of two of them: the sender's process finishes a message
// without seeing its delivery, and the receiver's sees deliveries of messages posted elsewhere.
enum class HalvesHere : uint8_t { kBoth, kRequester, kResponder };

class FlowJoin final : public transport::FlowObserver {
 public:
  // `observer` (the engine) must outlive the join.
  explicit FlowJoin(transport::FlowObserver& observer) : observer_(observer) {}

  // A connection, before any message is posted on it. Ports as packets name them; QP numbers
  // of its two halves. With only the requester here, a finished message goes to the engine at
  // once (its delivery is seen elsewhere, delivered_at stays kNever); with only the responder,
  // nothing is posted here and each delivery goes to the engine as on_delivered_to_responder.
  // Throws std::invalid_argument when the requester's number is taken.
  void add_connection(uint32_t src_port, uint32_t requester_qpn, uint32_t dst_port,
                      uint32_t responder_qpn, HalvesHere here = HalvesHere::kBoth);
  bool knows(uint32_t requester_qpn) const {
    return requester_qpn < connection_of_requester_.size() &&
           connection_of_requester_[requester_qpn] != kNone;
  }
  // The port the connection of requester `requester_qpn` sends from (it must be known).
  uint32_t sending_port(uint32_t requester_qpn) const {
    return connections_[connection_of_requester_[requester_qpn]].src_port;
  }

  // A message posted at `now` on the connection of requester `requester_qpn`; returns its flow
  // id, counted from 0 across the run.
  uint64_t posted(uint32_t requester_qpn, uint64_t bytes, const transport::FlowTags& tags,
                  clock::Nanos now);
  // The next message from requester `requester_qpn` reached its responder at `at`, with
  // `ecn_marks` CE-marked packets and its last packet's `immediate` (passed on for a message
  // posted in another process).
  void delivered(uint32_t requester_qpn, clock::Nanos at, uint32_t ecn_marks,
                 uint32_t immediate = 0) {
    take_delivery(requester_qpn, at, ecn_marks, immediate, nullptr);
  }
  // The requester's transport finished its next message; `record` is its sending-side record.
  void finished(const transport::FlowRecord& record) { take_finish(record, nullptr); }

  // Flows posted and not yet reported finished to the engine.
  uint64_t in_progress() const { return posted_ - released_; }

  // What the join tells the engine about a report taken in on another thread: kept, in order,
  // and told on the engine's thread by tell(), in the turn of the report it came from.
  struct Told {
    enum class Kind : uint8_t { kDelivered, kFinished, kDeliveredToResponder };
    Kind kind = Kind::kDelivered;
    uint32_t immediate = 0;        // kDeliveredToResponder
    transport::FlowRecord record;  // kDeliveredToResponder: qpn, delivered_at and ecn_marks
  };
  // delivered() and finished() taken in off the engine's thread: what they would tell the engine
  // is appended to `told` instead. Threads may take reports at once when no two take reports of
  // one connection, and none posts or adds a connection meanwhile; one connection's reports are
  // taken in their order, as the engine would see them.
  void delivered_later(uint32_t requester_qpn, clock::Nanos at, uint32_t ecn_marks,
                       uint32_t immediate, std::vector<Told>& told);
  void finished_later(const transport::FlowRecord& record, std::vector<Told>& told);
  // On the engine's thread: tells the engine what a report taken in later came to.
  void tell(const Told& told);
  // On the engine's thread: a report taken in later that the engine took another way
  // (report_lanes.h) instead of being told; it counts as told.
  void told_elsewhere(const Told& told) {
    if (told.kind == Told::Kind::kFinished) ++released_;
  }

  // Reports from a transport on this thread.
  void on_flow_delivered(const transport::FlowRecord& record) override {
    delivered(record.qpn, record.delivered_at, record.ecn_marks);
  }
  void on_flow_finished(const transport::FlowRecord& record) override { finished(record); }
  void on_delivered_to_responder(uint32_t requester_qpn, clock::Nanos now, uint32_t ecn_marks,
                                 uint32_t immediate) override {
    delivered(requester_qpn, now, ecn_marks, immediate);
  }

 private:
  static constexpr uint32_t kNone = ~0u;
  struct PostedFlow {
    uint64_t flow_id = 0;
    clock::Nanos posted_at = 0;
    uint64_t bytes = 0;
    transport::FlowTags tags;
    bool delivered = false;
    clock::Nanos delivered_at = clock::kNever;
    uint32_t ecn_marks = 0;
    bool finished = false;  // the requester's transport reported it; `record` holds its report
    transport::FlowRecord record;
  };
  struct Connection {
    HalvesHere here = HalvesHere::kBoth;
    uint32_t src_port = 0;
    uint32_t dst_port = 0;
    uint32_t requester_qpn = 0;
    uint32_t responder_qpn = 0;
    RingQueue<PostedFlow> flows;  // posted, not yet released to the engine; oldest first
    uint64_t released = 0;        // flows released (popped from `flows`)
    uint64_t deliveries = 0;      // deliveries reported so far
    uint64_t finishes = 0;        // finish reports so far
  };

  Connection& connection_of(uint32_t requester_qpn);
  // The reports: what they come to is told to the engine at once (`later` nullptr) or kept there.
  void take_delivery(uint32_t requester_qpn, clock::Nanos at, uint32_t ecn_marks,
                     uint32_t immediate, std::vector<Told>* later);
  void take_finish(const transport::FlowRecord& record, std::vector<Told>* later);
  // The finished flows at the head of the connection that may go.
  void release(Connection& connection, std::vector<Told>* later);
  void tell_or_keep(Told::Kind kind, const transport::FlowRecord& record, uint32_t immediate,
                    std::vector<Told>* later);

  transport::FlowObserver& observer_;
  // A deque: the engine may open connections from inside a report, while one is referenced.
  std::deque<Connection> connections_;
  std::vector<uint32_t> connection_of_requester_;  // by requester QP number
  uint64_t posted_ = 0;
  uint64_t released_ = 0;  // finished flows told to the engine
};

}  // namespace etwire::dataplane
