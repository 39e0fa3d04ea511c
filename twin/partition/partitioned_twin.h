// The fabric twin in partitions (twin_partition.h) that advance in parallel virtual time: each
// partition is a FabricTwin on a VirtualClock of its own, and what runs on that clock (the
// transport of the partition's hosts) is the caller's to add. Synchronization is conservative:
// the partitions run in windows no longer than the shortest propagation delay of a cut cable
// (the lookahead), so a frame sent in a window arrives after it; between windows each partition
// takes up the frames sent into it, in the order of the sending partition and then of sending.
//
// The partitions do the same work in the same order whether one thread runs them all or each
// thread runs some: a run's results depend on the partition count (a model choice: ties between
// events of the same nanosecond fall differently when a frame crosses) but never on the threads.
//
// Spread over the processes of an MPI session, each process builds and runs only its own
// partitions (partition p is process p mod processes'); between windows the crossings between
// processes go over MPI (cluster/spread_work.h), so every partition takes up the same crossings in
// the same order as on threads of one process, and the results are the same.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "clock/virtual_clock.h"
#include "cluster/session.h"
#include "config/fabric_config.h"
#include "twin/fabric/fabric_twin.h"
#include "twin/layout/twin_partition.h"

namespace etwire::twin {

class PartitionedTwin {
 public:
  // What reads a partition's state between its events inside a window (queue samples), on the
  // partition's thread: before the partition runs the events due at `time`, and with the
  // window's end once it ran the window's events (before the crossings are taken up).
  class Watch {
   public:
    virtual void before(clock::Nanos time) = 0;

   protected:
    ~Watch() = default;
  };

  // What a caller does at each window's end with the window's threads (set_window_tail): its
  // work on the partitions' results spread over them, rather than alone between windows.
  class WindowTail {
   public:
    // Spread over processes only: on the caller's thread, once every partition ran the window's
    // events and the crossings went to their processes; collective (what other processes'
    // partitions made comes in here).
    virtual void gather() = 0;
    // On each of the window's `threads` threads, as `thread`, once every partition ran the
    // window's events (and gather ran), beside taking up the crossings.
    virtual void work(uint32_t thread, uint32_t threads) = 0;
    // How many steps follow work() in this window, each on every thread once all finished the
    // one before (1, 2...): read on every thread as the window opens, so it is to change only
    // before run_window.
    virtual uint32_t later_steps() const { return 0; }
    virtual void work_later(uint32_t step, uint32_t thread, uint32_t threads) {
      (void)step;
      (void)thread;
      (void)threads;
    }

   protected:
    ~WindowTail() = default;
  };

  // Throws std::invalid_argument for a fabric the twin cannot model, a partition count it cannot
  // cut (partition_fabric) or a cut cable without a propagation delay.
  PartitionedTwin(const config::FabricConfig& config, std::span<const TwinPortSpec> ports,
                  uint64_t seed, uint32_t partitions, const cluster::Session* session = nullptr);
  // The same on a layout laid out already from `config` and the ports (the plan's): the
  // partitions share one copy (FabricTwin). `host_weights`: what each host moves, by host index,
  // for the cut (partition_fabric). `session`: the processes the partitions are spread over
  // (nullptr, or a session of one: all here); it must outlive the twin. Throws
  // std::invalid_argument when there are fewer partitions than processes.
  PartitionedTwin(const config::FabricConfig& config, const FabricLayout& layout, uint64_t seed,
                  uint32_t partitions, std::span<const uint64_t> host_weights = {},
                  const cluster::Session* session = nullptr);
  PartitionedTwin(const PartitionedTwin&) = delete;
  PartitionedTwin& operator=(const PartitionedTwin&) = delete;
  ~PartitionedTwin();

  uint32_t partitions() const { return partitioning_.count; }
  // Whether the partitions are spread over several processes, and whether this one runs
  // `partition`.
  bool spread() const { return session_ != nullptr && session_->size() > 1; }
  bool runs_here(uint32_t partition) const {
    return !spread() || partition % static_cast<uint32_t>(session_->size()) ==
                            static_cast<uint32_t>(session_->rank());
  }
  // The partitions this process runs, in order.
  const std::vector<uint32_t>& partitions_here() const { return here_; }
  uint32_t partition_of_host(size_t host) const { return partitioning_.of_host.at(host); }
  clock::VirtualClock& clock(uint32_t partition) { return *clocks_.at(partition); }
  // A partition this process runs (runs_here); std::logic_error for another process's.
  FabricTwin& twin(uint32_t partition);
  // Host `host`'s NIC, in its partition: what that partition's transport drives.
  LoopbackPort& port(size_t host) { return twin(partition_of_host(host)).port(host); }
  // The fabric's layout as built (the partitions reroute on copies of their own).
  const FabricLayout& layout() const { return *layout_; }
  // Shows `tap` every frame `endpoint` (a host, or a switch port by global index) sends and
  // receives, in the partition that owns it (FabricTwin::set_frame_tap): only that partition's
  // thread calls it.
  void set_frame_tap(Endpoint endpoint, FrameTap* tap);
  // The partition that owns switch port `switch_port` (by global index).
  uint32_t partition_of_switch_port(size_t switch_port) const;
  // Sets partition `partition`'s watch (nullptr: none), between windows. It must outlive its use.
  void set_watch(uint32_t partition, Watch* watch) { watches_.at(partition) = watch; }
  // Sets the window's tail (nullptr: none), between windows. It must outlive its use.
  void set_window_tail(WindowTail* tail) { tail_ = tail; }
  // The window: the shortest propagation delay of a cut cable (0 with one partition).
  clock::Nanos lookahead() const { return lookahead_; }

  // Runs every partition, window by window, on `threads` threads (the caller's among them; at
  // most one per partition), until no partition has an event left or a crossing to take up.
  // Spread over processes: collective, each process running its own partitions.
  void run(uint32_t threads);

  // One window at a time, for a caller that does its own work between windows (the engine):
  // the threads that run_window uses (kept until the next call or the twin's end; 1 is the
  // caller's alone), every partition's events before `end` (at most the lookahead past the
  // earliest), then the crossings taken up. An exception thrown by an event ends the window for
  // every partition and is rethrown here; the twin is not to be run again after one. Spread over
  // processes: collective (the crossings between processes), and an exception ends every process
  // (Session::abort), which cannot go on without this one's partitions.
  void set_threads(uint32_t threads);
  uint32_t threads() const { return threads_; }
  void run_window(clock::Nanos end);
  // The earliest pending event of any partition this process runs (clock::kNever when none is).
  clock::Nanos next_event_time() const;

  // The events the partitions ran (this process's, spread over processes, until settle_counters).
  uint64_t events_run() const;
  uint64_t windows_run() const { return windows_; }
  // A port's counters, summed over the partitions' copies: a frame lost on a cable that went
  // down under it counts at its sender in the partition of the receiving end. Spread over
  // processes, as settle_counters() last summed them over the processes.
  WireCounters host_counters(size_t host) const;
  WireCounters switch_port_counters(size_t switch_port) const;
  // What the configured faults did (FabricTwin::fault_report), from the summed counters.
  std::vector<std::string> fault_report() const;
  // Spread over processes: sums every port's counters and the events run over the processes, for
  // the readers above until the next call. Collective; nothing to do in one process.
  void settle_counters();

 private:
  struct Runner;
  // A window's two steps for one partition: its events before `end`, then the crossings into it.
  void run_partition(uint32_t partition, clock::Nanos end);
  void take_crossings(uint32_t partition);
  // The window's last step on thread `thread` of `threads`: the crossings into its partitions
  // taken up, and the tail's work.
  void close_window(uint32_t thread, uint32_t threads);
  // Between the two steps, spread over processes: the crossings from this process's partitions
  // into others' go to their processes, and theirs into this one's come in (arriving()).
  void exchange_crossings();
  // The crossings from partition `source` into partition `target` (this process's), waiting to
  // be taken up: in the sender's list when this process runs it, else as they came over MPI.
  std::vector<Crossing>& arriving(uint32_t source, uint32_t target);
  // The counters of every host, then of every switch port, summed over this process's partitions.
  std::vector<WireCounters> local_counters() const;

  const cluster::Session* session_ = nullptr;
  std::shared_ptr<const FabricLayout> layout_;  // the one the partitions share
  TwinPartitioning partitioning_;
  std::vector<uint32_t> here_;  // partitions_here()
  clock::Nanos lookahead_ = 0;
  std::vector<std::unique_ptr<clock::VirtualClock>> clocks_;
  std::vector<std::unique_ptr<FabricTwin>> twins_;  // by partition; null for another process's
  // Spread over processes: by partition here (its index in here_), then by sending partition, the
  // crossings another process's partitions sent into it.
  std::vector<std::vector<std::vector<Crossing>>> from_elsewhere_;
  std::vector<Watch*> watches_;  // by partition
  WindowTail* tail_ = nullptr;
  uint64_t windows_ = 0;
  uint32_t threads_ = 1;
  std::vector<WireCounters> settled_;  // spread: hosts, then switch ports (settle_counters)
  uint64_t settled_events_ = 0;
  std::unique_ptr<Runner> runner_;  // with more than one thread
};

}  // namespace etwire::twin
