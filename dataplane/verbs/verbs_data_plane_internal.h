// Private to the verbs data plane's own files: what it keeps per device, port and connection,
// and the constants and helpers more than one of its files needs. Its parts by concern:
//   verbs_data_plane.cc   devices and port checks, DCQCN read-back, the clock, counters, notes
//   verbs_connections.cc  the QP life cycle: create, INIT, RTR, RTS, receives ahead, rate limits
//   verbs_qp_exchange.cc  across emulator processes: the QP facts exchanged over MPI
//   verbs_posting.cc      posting work requests, taking completions, failing connections
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dataplane/verbs/verbs_data_plane.h"

namespace etwire::dataplane {

namespace verbs_data_plane_internal {

// Completions taken from a queue per poll call.
constexpr int kBurst = 64;

// Ports of another emulator process have no device here.
constexpr size_t kElsewhere = std::numeric_limits<size_t>::max();

// WRITE WITH IMMEDIATE and SEND consume receives posted ahead; a plain WRITE does not.
inline bool needs_receives(config::RdmaOp op) {
  return op != config::RdmaOp::kWrite;
}

// The IB timeout exponent nearest to a retransmission timeout: 4.096 us x 2^exponent.
inline uint8_t timeout_exponent(uint64_t timeout_ns) {
  const double exponent = std::log2(static_cast<double>(timeout_ns) / 4096.0);
  return static_cast<uint8_t>(std::clamp(std::lround(exponent), 1L, 31L));
}

struct Message {
  uint64_t bytes = 0;
  uint64_t unposted_bytes = 0;
  uint32_t unposted_wrs = 0;
  uint32_t outstanding_wrs = 0;
  transport::FlowTags tags;
  clock::Nanos first_out = clock::kNever;
  clock::Nanos sent_at = clock::kNever;  // its last work request completed
  transport::FlowStatus status = transport::FlowStatus::kCompleted;
};

}  // namespace verbs_data_plane_internal

struct VerbsDataPlane::Device {
  std::unique_ptr<nic::verbs::VerbsDevice> device;
  std::unique_ptr<nic::verbs::VerbsCq> cq;  // the sends and receives of every QP on the device
  std::unique_ptr<uint8_t, decltype(&std::free)> buffer{nullptr, &std::free};
  nic::verbs::MemoryRegion region;
  int cq_load = 0;    // completions the queue may still have to take: sends out, receives posted
  bool lost = false;  // its queue overran: no completion comes out of it again
  // By the device's QP number: connection index x 2, + 1 for a responder.
  std::unordered_map<uint32_t, uint32_t> qps;
};

struct VerbsDataPlane::Port {
  size_t device = verbs_data_plane_internal::kElsewhere;
  uint8_t number = 1;
  ibv_gid_entry gid{};
  std::vector<std::pair<std::string, uint64_t>> baseline;  // counters at start()
  uint32_t absent = 0;
  uint64_t rate_limit_bps = 0;
  std::string rate_limited_by;
  // How its sending QPs came out under the limit, and the one note that says so.
  bool held_by_rnic = false;
  bool paced_by_posting = false;
  int refusal = 0;  // the errno of the RNIC's refusal, for the note
  size_t rate_note = 0;
};

struct VerbsDataPlane::Connection {
  uint32_t index = 0;
  uint32_t plan_requester = 0;
  uint32_t plan_responder = 0;
  uint32_t src_port = 0;
  uint32_t dst_port = 0;
  uint16_t udp_source_port = 0;
  // Split runs: only the halves whose ports this process drives.
  std::unique_ptr<nic::verbs::VerbsQp> requester;
  std::unique_ptr<nic::verbs::VerbsQp> responder;
  // Where a WRITE lands: the responder device's buffer.
  uint64_t remote_address = 0;
  uint32_t remote_rkey = 0;
  // Posted by the engine, not yet finished; oldest first.
  RingQueue<verbs_data_plane_internal::Message> messages;
  size_t posting = 0;        // index in `messages` of the first with work left to post
  uint32_t outstanding = 0;  // work requests posted, not completed
  bool failed = false;       // the requester QP is in error
  // SEND: the work requests of each message whose delivery is awaited, and how many of the
  // first one's have arrived.
  RingQueue<uint32_t> awaited_wrs;
  uint32_t received_wrs = 0;
  uint32_t receives_posted = 0;
  // Messages seen delivered, and handed to the join: with receives, a message sent in full waits
  // for its delivery, so that a responder lost before then can still fail it.
  uint64_t deliveries = 0;
  uint64_t settled = 0;
  // Paced posting, when the device has no per-QP limiter.
  uint64_t pace_bps = 0;
  clock::Nanos next_post = 0;
  bool post_scheduled = false;
};

// One half's facts, as its peer needs them to connect to it.
struct VerbsDataPlane::PeerFacts {
  uint32_t qpn = 0;
  ibv_gid gid{};
  uint32_t psn = 0;
  uint64_t address = 0;  // a responder's buffer, where WRITEs land
  uint32_t rkey = 0;
};

// Between the flow join and the engine: flow records carry the QP numbers the device gave, which
// are the ones on the wire (the join keys connections by the plan's numbers).
class VerbsDataPlane::DeviceQpNumbers final : public transport::FlowObserver {
 public:
  explicit DeviceQpNumbers(transport::FlowObserver& engine) : engine_(engine) {}
  void add(uint32_t plan_requester, uint32_t requester, uint32_t responder) {
    if (plan_requester >= numbers_.size()) numbers_.resize(plan_requester + 1);
    numbers_[plan_requester] = {requester, responder};
  }
  void on_flow_delivered(const transport::FlowRecord& record) override {
    engine_.on_flow_delivered(renumbered(record));
  }
  void on_flow_finished(const transport::FlowRecord& record) override {
    engine_.on_flow_finished(renumbered(record));
  }
  // Messages posted in another process: the engine knows their senders by the plan's numbers.
  void on_delivered_to_responder(uint32_t requester_qpn, clock::Nanos now, uint32_t ecn_marks,
                                 uint32_t immediate) override {
    engine_.on_delivered_to_responder(requester_qpn, now, ecn_marks, immediate);
  }
  uint32_t requester_of(uint32_t plan_requester) const { return numbers_.at(plan_requester).first; }

 private:
  transport::FlowRecord renumbered(transport::FlowRecord record) const {
    const auto& [requester, responder] = numbers_.at(record.qpn);
    record.qpn = requester;
    record.dest_qpn = responder;
    return record;
  }
  transport::FlowObserver& engine_;
  std::vector<std::pair<uint32_t, uint32_t>> numbers_;
};

namespace verbs_data_plane_internal {

// Posts one receive on the connection's responder QP, into the whole of `device`'s buffer, and
// counts it on the device's completion queue and the connection. Returns the device's errno.
int post_receive(VerbsDataPlane::Connection& c, VerbsDataPlane::Device& device);

}  // namespace verbs_data_plane_internal

}  // namespace etwire::dataplane
