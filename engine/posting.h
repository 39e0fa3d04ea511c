// How the engine moves an instance's bytes and hears back: the connections it opens (each once,
// on first use or before any traffic), the messages it posts on them, the transfers between ranks
// of one host (over the host's local interconnect, not the fabric), and the transport's
// notifications, queued and handed back in one drain event so that nothing completes inside the
// transport's own call stack. It moves bytes and says when they moved; what they mean to a
// member's step program is CollectiveInstances'.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "clock/scheduler.h"
#include "common/ring_queue.h"
#include "common/slot_pool.h"
#include "control/plan/run_plan.h"
#include "dataplane/data_plane.h"
#include "engine/collective_instance.h"
#include "engine/flow_event.h"
#include "engine/member_execution.h"
#include "engine/split_run.h"
#include "transport/transport.h"

namespace etwire::engine {

// A transfer between ranks of one host: over the local interconnect, not the fabric.
struct LocalTransfer {
  uint64_t instance = 0;
  uint32_t src = 0;  // member positions
  uint32_t dst = 0;
  SendRequest request;
};

class Posting {
 public:
  // Connections by (job, src rank, dst rank, QP id).
  using ConnectionKey = std::tuple<uint32_t, int32_t, int32_t, uint16_t>;
  struct ConnectionKeyHash {
    size_t operator()(const ConnectionKey& key) const;
  };

  // `events` receives the engine_event::kDrain and kLocalDone events this schedules; every
  // argument must outlive this.
  Posting(const control::RunPlan& plan, dataplane::DataPlane& data_plane,
          clock::EventHandler& events, SplitRun& split);

  // Posts member `position`'s send on the data plane as messages of one slice of the protocol
  // (collectives.protocol), padded to its lines, each posted once it fits in its connection's
  // buffer beside the messages in flight (the receiver's clear-to-send credits); or starts it
  // over the host's interconnect when the peer is on the same host.
  void send(CollectiveInstance& instance, uint32_t position, const SendRequest& request);
  // A message of `wire_bytes` finished (acknowledged or failed): its bytes of its connection's
  // buffer are free again. The messages that then fit are posted at the next drain, outside the
  // transport's call stack.
  void message_finished(uint32_t job, int32_t src, int32_t dst, uint16_t qp, uint64_t wire_bytes);
  // The connection from rank `src` to rank `dst` on `qp`, opened on first use.
  transport::ConnectionId connection(uint32_t job, int32_t src, int32_t dst, uint16_t qp);
  // The QP number of `rank`'s QP `qp` towards `peer`: the plan's (qp_numbering.h); one the plan
  // did not foresee gets the next number past the plan's. Throws std::runtime_error past 24 bits.
  uint32_t qpn(uint32_t job, int32_t rank, int32_t peer, uint16_t qp);
  // Opens every connection the traffic plan says the run's traffic takes (those with an end
  // here), before any traffic.
  void open_planned_connections();
  const std::map<ConnectionKey, transport::ConnectionId>& connections() const {
    return connections_;
  }

  // Queues a transport notification and schedules one drain event for all queued ones.
  void queue(const FlowEvent& event);
  // The drain event: hands every queued notification to `handle(const FlowEvent&)`, those it
  // queues meanwhile included (a post on a failed QP is flushed at once).
  template <typename Handle>
  void drain(Handle&& handle) {
    drain_scheduled_ = false;
    post_credited();
    while (head_ < events_queued_.size()) {
      // A copy: handling may queue more events and move the vector's storage.
      const FlowEvent event = events_queued_[head_++];
      handle(event);
    }
    events_queued_.clear();
    head_ = 0;
  }
  // The kLocalDone event of transfer `slot`: the transfer, whose slot is free again.
  LocalTransfer finish_local_transfer(uint32_t slot);

 private:
  // A message waiting for a free slice of its connection.
  struct WaitingMessage {
    uint64_t wire_bytes;
    config::Protocol protocol;
    transport::FlowTags tags;
  };
  // One connection's buffer: the wire bytes of its messages in flight, and the messages waiting,
  // oldest first.
  struct SliceWindow {
    transport::ConnectionId connection;
    uint64_t in_flight = 0;
    RingQueue<WaitingMessage> waiting;
  };
  // A send to a rank of the same host, over its interconnect, in the protocol's lines.
  void send_local(CollectiveInstance& instance, uint32_t position, const SendRequest& request);
  // The slice window of connection (job, src, dst, qp), opened with the connection.
  uint32_t window(uint32_t job, int32_t src, int32_t dst, uint16_t qp);
  // That window if it is open, else kNoWindow.
  static constexpr uint32_t kNoWindow = UINT32_MAX;
  uint32_t open_window(uint32_t job, int32_t src, int32_t dst, uint16_t qp);
  // Posts the waiting messages of the windows credited since the last drain.
  void post_credited();
  void schedule_drain();

  const control::RunPlan& plan_;
  const config::RunConfig& config_;
  dataplane::DataPlane& data_plane_;
  clock::Scheduler& clock_;
  clock::EventHandler& events_;
  SplitRun& split_;
  std::map<ConnectionKey, transport::ConnectionId> connections_;
  // QP numbers of QPs the plan did not number (key: job, rank, peer, QP id), from past the
  // plan's numbers; RunPlan::qp_numbers holds the rest.
  std::map<ConnectionKey, uint32_t> unplanned_qpns_;
  uint64_t next_unplanned_qpn_ = 0;
  // The slice windows of the connections, by index, and the index of each connection's: looked
  // up for every message sent and finished, so hashed (an ordered map's search took 3.5 % of the
  // samples of a 1024-rank ring's profile, on the engine's serial path between windows).
  std::vector<SliceWindow> windows_;
  std::unordered_map<ConnectionKey, uint32_t, ConnectionKeyHash> window_of_connection_;
  // Per job and rank, the window it last sent on, found before the map: a rank of a ring sends
  // to one peer, and the map's bucket and node were two cache misses per message on that path
  // at 1024 ranks (2.8 % of the samples, docs/performance.md).
  struct LastWindow {
    int32_t dst = -1;
    uint16_t qp = 0;
    uint32_t window = kNoWindow;
  };
  std::vector<std::vector<LastWindow>> last_window_;
  LastWindow* last_window(uint32_t job, int32_t src);  // nullptr for a rank past the world's
  std::vector<uint32_t> credited_;  // windows with a slice freed and messages waiting
  std::vector<FlowEvent> events_queued_;
  size_t head_ = 0;
  bool drain_scheduled_ = false;
  SlotPool<LocalTransfer> local_transfers_;
  // Per job and rank: when the rank's port on its host's interconnect is free to send, and to
  // receive, again.
  std::vector<std::vector<clock::Nanos>> local_send_free_;
  std::vector<std::vector<clock::Nanos>> local_receive_free_;
};

}  // namespace etwire::engine
