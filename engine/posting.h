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
#include "engine/posting_lane.h"
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
  // over the host's interconnect when the peer is on the same host. A window's lane keeps what it
  // posts (posting_lane.h).
  void send(PostingLane& lane, CollectiveInstance& instance, uint32_t position,
            const SendRequest& request);
  // A message of `wire_bytes` finished (acknowledged or failed): its bytes of its connection's
  // buffer are free again. The messages that then fit are posted at the lane's next drain,
  // outside the transport's call stack; `turn` orders those a window's lane keeps.
  void message_finished(PostingLane& lane, uint32_t job, int32_t src, int32_t dst, uint16_t qp,
                        uint64_t wire_bytes, Turn turn = {});
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
  // Makes the slice window of every connection the traffic plan says the run's traffic takes,
  // each connection still opened on first use: a window's lane may then send on any of them
  // without adding to what every lane reads. False (nothing made) when the plan has no traffic
  // or could not plan all of it.
  bool make_planned_windows();

  // The engine's own lane.
  PostingLane& own_lane() { return own_lane_; }
  // Queues a transport notification; the engine's own lane schedules one drain event for all
  // queued ones.
  void queue(const FlowEvent& event) { queue(own_lane_, event, {}); }
  void queue(PostingLane& lane, const FlowEvent& event, Turn turn);
  // The lane's drain (the engine's own: its drain event): posts the credited windows' waiting
  // messages, then hands every queued notification to `handle(const FlowEvent&)`, those it
  // queues meanwhile included (a post on a failed QP is flushed at once).
  template <typename Handle>
  void drain(PostingLane& lane, Handle&& handle) {
    if (&lane == &own_lane_) drain_scheduled_ = false;
    lane.phase_ = 0;
    post_credited(lane);
    lane.phase_ = 1;
    while (lane.head_ < lane.events_.size()) {
      // A copy: handling may queue more events and move the vector's storage.
      const PostingLane::Queued queued = lane.events_[lane.head_++];
      lane.turn_ = queued.turn;
      handle(queued.event);
    }
    lane.events_.clear();
    lane.head_ = 0;
  }
  // On the engine's thread, at the instant of a window's lanes' posts: opens and posts theirs
  // of this instant in the engine's order (posting_lane.h), and adds their counts.
  void settle_lanes(std::vector<PostingLane>& lanes);
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
  // oldest first. One made from the plan (make_planned_windows) opens its connection on first
  // use.
  struct SliceWindow {
    ConnectionKey key;
    bool connected = false;
    transport::ConnectionId connection;
    uint64_t in_flight = 0;
    RingQueue<WaitingMessage> waiting;
  };
  // A send to a rank of the same host, over its interconnect, in the protocol's lines.
  void send_local(CollectiveInstance& instance, uint32_t position, const SendRequest& request);
  // The slice window of connection (job, src, dst, qp), its connection opened: by the lane's
  // settling, for a window's lane. A window's lane finds only windows made before (a new one
  // throws std::logic_error: the traffic plan missed a connection).
  uint32_t window(PostingLane& lane, uint32_t job, int32_t src, int32_t dst, uint16_t qp);
  // That window if it is open, else kNoWindow.
  static constexpr uint32_t kNoWindow = UINT32_MAX;
  uint32_t open_window(uint32_t job, int32_t src, int32_t dst, uint16_t qp);
  // Posts the waiting messages of the windows credited since the lane's last drain.
  void post_credited(PostingLane& lane);
  void post(PostingLane& lane, uint32_t window, uint64_t wire_bytes,
            const transport::FlowTags& tags);
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
  PostingLane own_lane_{false};
  bool drain_scheduled_ = false;
  SlotPool<LocalTransfer> local_transfers_;
  // Per job and rank: when the rank's port on its host's interconnect is free to send, and to
  // receive, again.
  std::vector<std::vector<clock::Nanos>> local_send_free_;
  std::vector<std::vector<clock::Nanos>> local_receive_free_;
};

}  // namespace etwire::engine
