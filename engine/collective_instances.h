// The run's open collective instances: a collective or point-to-point node joins its instance
// (the first member to arrive builds it, with a program generator shared by every instance of
// the same collective), its member's step program runs over Posting, and what the transport
// reports back (a message delivered, a send finished, here or from another emulator process)
// moves the programs on. A member whose program is done completes its node; a finished instance
// is retired into the results.
//
// Instances are found by key (members joining), by their number (the transport's flow tags) and,
// in a run split between emulator processes, by their wire hash (a message from another process,
// wire_tag.h); deliveries from another process for an instance no rank here has joined yet are
// kept until one does.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "clock/scheduler.h"
#include "collectives/generate.h"
#include "config/run_config.h"
#include "engine/collective_instance.h"
#include "engine/flow_event.h"
#include "engine/instance_key.h"
#include "engine/posting.h"
#include "engine/rank_runtime.h"
#include "engine/replayed_job.h"
#include "engine/run_control.h"
#include "engine/split_run.h"
#include "trace/feeder/feeder.h"

namespace etwire::engine {

class CollectiveInstances {
 public:
  using ByKey = std::map<InstanceKey, std::unique_ptr<CollectiveInstance>>;

  // `jobs` and `runtimes` are the engine's (a rank runtime records the instances it joined);
  // every argument must outlive this.
  CollectiveInstances(const config::RunConfig& config, std::vector<ReplayedJob>& jobs,
                      std::vector<RankRuntime>& runtimes, clock::Scheduler& clock, Posting& posting,
                      const SplitRun& split, RunControl& run);
  ~CollectiveInstances();
  CollectiveInstances(const CollectiveInstances&) = delete;
  CollectiveInstances& operator=(const CollectiveInstances&) = delete;

  // The runtime's node `issued` (a collective, or a SEND or RECV) joins its instance.
  void join_collective(uint32_t runtime, feeder::IssuedNode issued);
  void join_point_to_point(uint32_t runtime, feeder::IssuedNode issued);
  // A queued transport notification (Posting::drain) for an instance of this process, or from
  // another emulator process (FlowEvent::wire_hash set). What its work posts goes to `lane`; a
  // window's lane (posting_lane.h) is given only notifications whose work stays with their
  // member (RunEngine::lane_can_take), and keeps a stop for the engine's thread.
  void handle(PostingLane& lane, const FlowEvent& event);
  // A transfer over a host's interconnect has arrived: at its receiver, and back at its sender.
  void finish_local_transfer(const LocalTransfer& transfer);

  // The open instance numbered `id` (CollectiveRecord::instance); nullptr once retired.
  CollectiveInstance* find(uint64_t id) {
    auto it = by_id_.find(id);
    return it != by_id_.end() ? it->second : nullptr;
  }
  const ByKey& open() const { return by_key_; }
  // Whether an open instance has a participant still running (a scan of every open instance).
  bool any_incomplete() const;
  // Hands every instance that finished since the last call to `retire(const CollectiveInstance&)`
  // and forgets it.
  template <typename Retire>
  void retire_finished(Retire&& retire) {
    for (uint64_t id : finished_) {
      CollectiveInstance* instance = find(id);
      if (instance == nullptr) continue;
      retire(*instance);
      forget(*instance);
    }
    finished_.clear();
  }

 private:
  class MemberContext;

  void join(uint32_t runtime, feeder::IssuedNode issued, const InstanceKey& key,
            const collectives::CollectiveSpec& spec, int64_t generator_group);
  // The first arrival: builds the instance; nullptr when it cannot be (the run stops).
  CollectiveInstance* open_instance(const RankRuntime& rt, const trace::TraceNode& node,
                                    const std::string& file, const InstanceKey& key,
                                    const collectives::CollectiveSpec& spec,
                                    int64_t generator_group);
  // A later arrival whose node disagrees with the instance's: the diagnosis; else empty.
  std::string mismatch(const CollectiveInstance& instance, const trace::TraceNode& node,
                       const std::string& file, const collectives::CollectiveSpec& spec) const;
  const collectives::ProgramGenerator& generator(uint32_t job, int64_t group,
                                                 const collectives::CollectiveSpec& spec);
  void member_progressed(CollectiveInstance& instance, uint32_t position);
  // The `index`-th message from member `sender` on `qp` has reached member `position`.
  void deliver(PostingLane& lane, CollectiveInstance& instance, uint32_t position, uint32_t sender,
               uint16_t qp, uint32_t index);
  void send_completed(PostingLane& lane, CollectiveInstance& instance, uint32_t sender,
                      uint32_t op);
  void forget(const CollectiveInstance& instance);

  // Across emulator processes (collective_instances_remote.cc).
  void handle_remote_delivery(const FlowEvent& event);
  // The next chunk operation's end from rank `src` to rank `dst` on `qp`, posted by another
  // emulator process, has reached `dst` here.
  void deliver_remote(CollectiveInstance& instance, int32_t src, int32_t dst, uint16_t qp);
  // Registers a new instance's wire hash and hands it what arrived for it before; false (the run
  // stops) when another open instance of the job has the same hash.
  bool register_wire_hash(CollectiveInstance& instance);

  const config::RunConfig& config_;
  std::vector<ReplayedJob>& jobs_;
  std::vector<RankRuntime>& runtimes_;
  clock::Scheduler& clock_;
  Posting& posting_;
  const SplitRun& split_;
  RunControl& run_;

  ByKey by_key_;
  std::unordered_map<uint64_t, CollectiveInstance*> by_id_;
  uint64_t next_id_ = 0;
  std::vector<uint64_t> finished_;  // complete, to retire after the current event
  // Program generators by (job, collective type or -1 for p2p, group key or p2p pair, size,
  // first member and member count, algorithm): shared by every instance of the same collective.
  std::map<std::tuple<uint32_t, int, int64_t, uint64_t, int32_t, size_t, int>,
           std::unique_ptr<collectives::ProgramGenerator>>
      generators_;
  // Split between emulator processes: open instances by (job << 32 | wire hash), and deliveries
  // for instances none of this process's ranks joined yet.
  struct UnjoinedDelivery {
    int32_t src = 0;
    int32_t dst = 0;
    uint16_t qp = 0;
  };
  std::unordered_map<uint64_t, CollectiveInstance*> by_wire_hash_;
  std::unordered_map<uint64_t, std::vector<UnjoinedDelivery>> unjoined_;
};

}  // namespace etwire::engine
