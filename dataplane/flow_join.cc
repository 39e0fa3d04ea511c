#include "dataplane/flow_join.h"

#include <stdexcept>
#include <string>

namespace etwire::dataplane {

void FlowJoin::add_connection(uint32_t src_port, uint32_t requester_qpn, uint32_t dst_port,
                              uint32_t responder_qpn, HalvesHere here) {
  if (knows(requester_qpn)) {
    throw std::invalid_argument("flow join: requester QP " + std::to_string(requester_qpn) +
                                " has a connection already");
  }
  if (requester_qpn >= connection_of_requester_.size()) {
    connection_of_requester_.resize(requester_qpn + 1, kNone);
  }
  connection_of_requester_[requester_qpn] = static_cast<uint32_t>(connections_.size());
  Connection& added = connections_.emplace_back();
  added.here = here;
  added.src_port = src_port;
  added.dst_port = dst_port;
  added.requester_qpn = requester_qpn;
  added.responder_qpn = responder_qpn;
}

FlowJoin::Connection& FlowJoin::connection_of(uint32_t requester_qpn) {
  if (!knows(requester_qpn)) {
    throw std::logic_error("flow join: a report for requester QP " + std::to_string(requester_qpn) +
                           ", which has no connection");
  }
  return connections_[connection_of_requester_[requester_qpn]];
}

uint64_t FlowJoin::posted(uint32_t requester_qpn, uint64_t bytes, const transport::FlowTags& tags,
                          clock::Nanos now) {
  Connection& connection = connection_of(requester_qpn);
  PostedFlow flow;
  flow.flow_id = posted_++;
  flow.posted_at = now;
  flow.bytes = bytes;
  flow.tags = tags;
  connection.flows.push_back(flow);
  return flow.flow_id;
}

void FlowJoin::delivered_later(uint32_t requester_qpn, clock::Nanos at, uint32_t ecn_marks,
                               uint32_t immediate, std::vector<Told>& told) {
  take_delivery(requester_qpn, at, ecn_marks, immediate, &told);
}

void FlowJoin::finished_later(const transport::FlowRecord& record, std::vector<Told>& told) {
  take_finish(record, &told);
}

void FlowJoin::tell(const Told& told) {
  switch (told.kind) {
    case Told::Kind::kDelivered:
      observer_.on_flow_delivered(told.record);
      return;
    case Told::Kind::kFinished:
      ++released_;
      observer_.on_flow_finished(told.record);
      return;
    case Told::Kind::kDeliveredToResponder:
      observer_.on_delivered_to_responder(told.record.qpn, told.record.delivered_at,
                                          told.record.ecn_marks, told.immediate);
      return;
  }
}

void FlowJoin::tell_or_keep(Told::Kind kind, const transport::FlowRecord& record,
                            uint32_t immediate, std::vector<Told>* later) {
  if (later == nullptr) {
    tell({kind, immediate, record});
  } else {
    later->push_back({kind, immediate, record});
  }
}

void FlowJoin::take_delivery(uint32_t requester_qpn, clock::Nanos at, uint32_t ecn_marks,
                             uint32_t immediate, std::vector<Told>* later) {
  Connection& connection = connection_of(requester_qpn);
  if (connection.here == HalvesHere::kResponder) {
    // Posted in another process: whoever replays the receiving rank matches it to its receive.
    ++connection.deliveries;
    transport::FlowRecord record;
    record.qpn = requester_qpn;
    record.delivered_at = at;
    record.ecn_marks = ecn_marks;
    tell_or_keep(Told::Kind::kDeliveredToResponder, record, immediate, later);
    return;
  }
  const uint64_t delivery = connection.deliveries++;
  // A message already reported as failed may still arrive (its acknowledgements were lost).
  if (delivery < connection.released) return;
  PostedFlow& flow = connection.flows[delivery - connection.released];
  flow.delivered = true;
  flow.delivered_at = at;
  flow.ecn_marks = ecn_marks;
  transport::FlowRecord record;
  record.flow_id = flow.flow_id;
  record.tags = flow.tags;
  record.src_port = connection.src_port;
  record.dst_port = connection.dst_port;
  record.qpn = connection.requester_qpn;
  record.dest_qpn = connection.responder_qpn;
  record.bytes = flow.bytes;
  record.posted_at = flow.posted_at;
  record.delivered_at = at;
  record.ecn_marks = ecn_marks;
  // The engine may post or open connections from here; the deque keeps `connection` in place.
  tell_or_keep(Told::Kind::kDelivered, record, 0, later);
  release(connection, later);
}

void FlowJoin::take_finish(const transport::FlowRecord& record, std::vector<Told>* later) {
  Connection& connection = connection_of(record.qpn);
  const uint64_t index = connection.finishes++ - connection.released;
  PostedFlow& flow = connection.flows[index];
  flow.finished = true;
  flow.record = record;
  release(connection, later);
}

void FlowJoin::release(Connection& connection, std::vector<Told>* later) {
  // In posting order: a finished message waits for its delivery (the responder's report) unless
  // it failed, and the ones after it wait for it.
  while (!connection.flows.empty()) {
    PostedFlow& flow = connection.flows.front();
    if (!flow.finished) break;
    const bool completed = flow.record.status == transport::FlowStatus::kCompleted;
    // The delivery of a message to another process is not seen here.
    if (completed && !flow.delivered && connection.here != HalvesHere::kRequester) break;
    transport::FlowRecord record = flow.record;
    record.flow_id = flow.flow_id;
    record.posted_at = flow.posted_at;
    if (flow.delivered) {
      record.delivered_at = flow.delivered_at;
      record.ecn_marks = flow.ecn_marks;
    }
    connection.flows.pop_front();
    ++connection.released;
    tell_or_keep(Told::Kind::kFinished, record, 0, later);
  }
}

}  // namespace etwire::dataplane
