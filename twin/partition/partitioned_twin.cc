#include "twin/partition/partitioned_twin.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include "cluster/spread_work.h"
#include "twin/layout/setup_checks.h"
#include "twin/partition/window_barrier.h"

namespace etwire::twin {

PartitionedTwin::PartitionedTwin(const config::FabricConfig& config,
                                 std::span<const TwinPortSpec> ports, uint64_t seed,
                                 uint32_t partitions, const cluster::Session* session)
    : PartitionedTwin(config, FabricLayout(check_fabric_settings(config), ports), seed, partitions,
                      {}, session) {}

PartitionedTwin::PartitionedTwin(const config::FabricConfig& config, const FabricLayout& layout,
                                 uint64_t seed, uint32_t partitions,
                                 std::span<const uint64_t> host_weights,
                                 const cluster::Session* session)
    : session_(session) {
  check_fabric_settings(config);
  if (spread() && partitions < static_cast<uint32_t>(session->size())) {
    throw std::invalid_argument(
        "fabric twin: " + std::to_string(partitions) + " partitions cannot be spread over " +
        std::to_string(session->size()) + " processes (at least one partition each)");
  }
  partitioning_ = partition_fabric(layout, partitions, host_weights);
  lookahead_ = partition_lookahead(layout, partitioning_);
  // One layout for every partition: only rerouting changes it, on a partition's own copy.
  layout_ = std::make_shared<const FabricLayout>(layout);
  for (uint32_t partition = 0; partition < partitions; ++partition) {
    clocks_.push_back(std::make_unique<clock::VirtualClock>());
    if (!runs_here(partition)) {
      twins_.push_back(nullptr);
      continue;
    }
    twins_.push_back(std::make_unique<FabricTwin>(config, layout_, *clocks_[partition], seed,
                                                  partitioning_, partition));
    here_.push_back(partition);
  }
  watches_.assign(partitions, nullptr);
  if (spread())
    from_elsewhere_.assign(here_.size(), std::vector<std::vector<Crossing>>(partitions));
}

// Threads beyond the caller's, kept from one window to the next. A window is three phases,
// each ended by the barrier: the caller opens it, every thread runs its partitions' events
// (thread t has this process's partitions t, t + T, t + 2T...), then takes up the crossings into
// them (and does the tail's work), then the tail's later steps, if any, one phase each. Between two
// barriers only a partition's own thread touches it, and the crossings a partition sends are read
// only in the next phase. Spread over processes, the caller's thread (the one that calls MPI)
// exchanges the crossings in a phase of its own between the two.
struct PartitionedTwin::Runner {
  Runner(PartitionedTwin& owner, uint32_t threads)
      : twin(owner), threads(threads), errors(threads), barrier(threads) {
    helpers.reserve(threads - 1);
    for (uint32_t thread = 1; thread < threads; ++thread) {
      helpers.emplace_back([this, thread] {
        for (;;) {
          barrier.arrive_and_wait();
          if (stopping) return;
          window(thread);
        }
      });
    }
  }

  ~Runner() {
    stopping = true;
    barrier.arrive_and_wait();
    for (std::thread& helper : helpers) helper.join();
  }

  // The caller's part: opens the window for the helpers and runs thread 0's share.
  void run(clock::Nanos end) {
    window_end = end;
    barrier.arrive_and_wait();
    window(0);
  }

  void window(uint32_t thread) {
    // Read before the window's first barrier: the caller may set the next window's once past
    // this window's last.
    const uint32_t later = twin.tail_ != nullptr ? twin.tail_->later_steps() : 0;
    const std::vector<uint32_t>& here = twin.partitions_here();
    for (size_t i = thread; i < here.size(); i += threads) {
      guard(thread, [&] { twin.run_partition(here[i], window_end); });
    }
    barrier.arrive_and_wait();
    if (twin.spread()) {
      if (thread == 0) {
        guard(thread, [&] {
          twin.exchange_crossings();
          if (twin.tail_ != nullptr) twin.tail_->gather();
        });
      }
      barrier.arrive_and_wait();
    }
    guard(thread, [&] { twin.close_window(thread, threads); });
    barrier.arrive_and_wait();
    for (uint32_t step = 1; step <= later; ++step) {
      guard(thread, [&] { twin.tail_->work_later(step, thread, threads); });
      barrier.arrive_and_wait();
    }
  }

  template <typename Step>
  void guard(uint32_t thread, Step&& step) {
    if (failed.load(std::memory_order_relaxed)) return;
    try {
      step();
    } catch (...) {
      errors[thread] = std::current_exception();
      failed.store(true, std::memory_order_relaxed);
    }
  }

  PartitionedTwin& twin;
  const uint32_t threads;
  std::vector<std::exception_ptr> errors;  // by thread
  std::atomic<bool> failed{false};
  bool stopping = false;
  clock::Nanos window_end = 0;
  WindowBarrier barrier;
  std::vector<std::thread> helpers;
};

// The runner's threads go first; the twins' pending events point at them, so they go before
// their clocks.
PartitionedTwin::~PartitionedTwin() {
  runner_.reset();
  twins_.clear();
}

void PartitionedTwin::set_threads(uint32_t threads) {
  if (threads == 0) throw std::invalid_argument("fabric twin: 0 threads (at least 1)");
  threads = std::min(threads, static_cast<uint32_t>(here_.size()));
  if (threads == threads_) return;
  runner_.reset();
  threads_ = threads;
  if (threads > 1) runner_ = std::make_unique<Runner>(*this, threads);
}

void PartitionedTwin::run_partition(uint32_t partition, clock::Nanos end) {
  clock::VirtualClock& clock = *clocks_[partition];
  Watch* watch = watches_[partition];
  if (watch == nullptr) {
    clock.run_until(end == clock::kNever ? clock::kNever : end - 1);
    return;
  }
  for (clock::Nanos next = clock.next_event_time(); next < end; next = clock.next_event_time()) {
    watch->before(next);
    clock.poll();
  }
  if (end != clock::kNever) watch->before(end);
}

FabricTwin& PartitionedTwin::twin(uint32_t partition) {
  if (partition >= partitions() || twins_[partition] == nullptr) {
    throw std::logic_error("fabric twin: partition " + std::to_string(partition) +
                           " is another process's");
  }
  return *twins_[partition];
}

std::vector<Crossing>& PartitionedTwin::arriving(uint32_t source, uint32_t target) {
  if (twins_[source] != nullptr) return twins_[source]->crossings_to(target);
  // here_ is in order: the target's index there.
  const auto at = std::lower_bound(here_.begin(), here_.end(), target) - here_.begin();
  return from_elsewhere_[static_cast<size_t>(at)][source];
}

void PartitionedTwin::close_window(uint32_t thread, uint32_t threads) {
  for (size_t i = thread; i < here_.size(); i += threads) take_crossings(here_[i]);
  if (tail_ != nullptr) tail_->work(thread, threads);
}

void PartitionedTwin::take_crossings(uint32_t partition) {
  for (uint32_t source = 0; source < partitions(); ++source) {
    if (source == partition) continue;
    std::vector<Crossing>& crossings = arriving(source, partition);
    twins_[partition]->accept_crossings(crossings);
    crossings.clear();
  }
}

void PartitionedTwin::exchange_crossings() {
  const auto processes = static_cast<uint32_t>(session_->size());
  // Each block: the sending partition, the receiving one, the count, then the crossings.
  std::vector<std::string> to_each(processes);
  for (const uint32_t source : here_) {
    for (uint32_t target = 0; target < partitions(); ++target) {
      std::vector<Crossing>& crossings = twins_[source]->crossings_to(target);
      if (runs_here(target) || crossings.empty()) continue;
      std::string& block = to_each[target % processes];
      cluster::append_value(block, source);
      cluster::append_value(block, target);
      cluster::append_value(block, static_cast<uint64_t>(crossings.size()));
      cluster::append_records(block, std::span<const Crossing>(crossings));
      crossings.clear();
    }
  }
  for (const std::string& from : cluster::all_to_all(*session_, to_each)) {
    std::string_view in = from;
    while (!in.empty()) {
      const auto source = cluster::take_value<uint32_t>(in);
      const auto target = cluster::take_value<uint32_t>(in);
      const auto count = cluster::take_value<uint64_t>(in);
      if (source >= partitions() || target >= partitions() || runs_here(source) ||
          !runs_here(target)) {
        throw std::runtime_error("fabric twin: crossings from another process out of place");
      }
      cluster::take_records(in, count, arriving(source, target));
    }
  }
}

void PartitionedTwin::run_window(clock::Nanos end) {
  ++windows_;
  try {
    if (!runner_) {
      for (const uint32_t p : here_) run_partition(p, end);
      if (spread()) {
        exchange_crossings();
        if (tail_ != nullptr) tail_->gather();
      }
      close_window(0, 1);
      const uint32_t later = tail_ != nullptr ? tail_->later_steps() : 0;
      for (uint32_t step = 1; step <= later; ++step) tail_->work_later(step, 0, 1);
      return;
    }
    runner_->run(end);
    for (const std::exception_ptr& error : runner_->errors) {
      if (error) std::rethrow_exception(error);
    }
  } catch (const std::exception& e) {
    if (!spread()) throw;
    // The other processes wait for this one's crossings, which will never come.
    std::cerr << "error: fabric twin, process " << session_->rank() << ": " << e.what()
              << "; the run ends in every process\n";
    session_->abort(1);
  }
}

clock::Nanos PartitionedTwin::next_event_time() const {
  clock::Nanos next = clock::kNever;
  for (const uint32_t p : here_) next = std::min(next, clocks_[p]->next_event_time());
  return next;
}

void PartitionedTwin::run(uint32_t threads) {
  set_threads(threads);
  for (;;) {
    int64_t next = next_event_time();
    if (spread()) cluster::all_min(*session_, std::span<int64_t>(&next, 1));
    if (next == clock::kNever) break;
    run_window(lookahead_ == 0 ? clock::kNever : next + lookahead_);
  }
  settle_counters();
}

uint64_t PartitionedTwin::events_run() const {
  if (spread() && !settled_.empty()) return settled_events_;
  uint64_t events = 0;
  for (const uint32_t p : here_) events += clocks_[p]->events_run();
  return events;
}

uint32_t PartitionedTwin::partition_of_switch_port(size_t switch_port) const {
  return partition_of(layout(), partitioning_,
                      Endpoint{Endpoint::Kind::kSwitchPort, static_cast<uint32_t>(switch_port)});
}

void PartitionedTwin::set_frame_tap(Endpoint endpoint, FrameTap* tap) {
  twin(partition_of(layout(), partitioning_, endpoint)).set_frame_tap(endpoint, tap);
}

WireCounters PartitionedTwin::host_counters(size_t host) const {
  if (spread() && !settled_.empty()) return settled_.at(host);
  WireCounters sum;
  for (const uint32_t p : here_) sum += twins_[p]->host_counters(host);
  return sum;
}

WireCounters PartitionedTwin::switch_port_counters(size_t switch_port) const {
  if (spread() && !settled_.empty()) return settled_.at(layout().hosts() + switch_port);
  WireCounters sum;
  for (const uint32_t p : here_) sum += twins_[p]->switch_port_counters(switch_port);
  return sum;
}

std::vector<WireCounters> PartitionedTwin::local_counters() const {
  std::vector<WireCounters> counters(layout().hosts() + layout().switch_ports());
  for (const uint32_t p : here_) {
    for (size_t host = 0; host < layout().hosts(); ++host) {
      counters[host] += twins_[p]->host_counters(host);
    }
    for (size_t port = 0; port < layout().switch_ports(); ++port) {
      counters[layout().hosts() + port] += twins_[p]->switch_port_counters(port);
    }
  }
  return counters;
}

void PartitionedTwin::settle_counters() {
  if (!spread()) return;
  std::vector<WireCounters> counters = local_counters();
  cluster::all_sum_counters(*session_, counters);
  uint64_t events = 0;
  for (const uint32_t p : here_) events += clocks_[p]->events_run();
  cluster::all_sum(*session_, std::span<uint64_t>(&events, 1));
  settled_ = std::move(counters);
  settled_events_ = events;
}

std::vector<std::string> PartitionedTwin::fault_report() const {
  return twins_[here_.front()]->fault_report([this](const Endpoint& end) {
    return end.is_host() ? host_counters(end.index) : switch_port_counters(end.index);
  });
}

}  // namespace etwire::twin
