#include "twin/partition/partitioned_twin.h"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

#include "twin/layout/setup_checks.h"

namespace etwire::twin {

PartitionedTwin::PartitionedTwin(const config::FabricConfig& config,
                                 std::span<const TwinPortSpec> ports, uint64_t seed,
                                 uint32_t partitions)
    : PartitionedTwin(config, FabricLayout(check_fabric_settings(config), ports), seed,
                      partitions) {}

PartitionedTwin::PartitionedTwin(const config::FabricConfig& config, const FabricLayout& layout,
                                 uint64_t seed, uint32_t partitions,
                                 std::span<const uint64_t> host_weights) {
  check_fabric_settings(config);
  partitioning_ = partition_fabric(layout, partitions, host_weights);
  lookahead_ = partition_lookahead(layout, partitioning_);
  for (uint32_t partition = 0; partition < partitions; ++partition) {
    clocks_.push_back(std::make_unique<clock::VirtualClock>());
    twins_.push_back(std::make_unique<FabricTwin>(config, layout, *clocks_[partition], seed,
                                                  partitioning_, partition));
  }
  watches_.assign(partitions, nullptr);
}

// Threads beyond the caller's, kept from one window to the next. A window is three phases,
// each ended by the barrier: the caller opens it, every thread runs its partitions' events
// (thread t has partitions t, t + T, t + 2T...), then takes up the crossings into them. Between
// two barriers only a partition's own thread touches it, and the crossings a partition sends are
// read only in the next phase.
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
    for (uint32_t p = thread; p < twin.partitions(); p += threads) {
      guard(thread, [&] { twin.run_partition(p, window_end); });
    }
    barrier.arrive_and_wait();
    for (uint32_t p = thread; p < twin.partitions(); p += threads) {
      guard(thread, [&] { twin.take_crossings(p); });
    }
    barrier.arrive_and_wait();
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
  std::barrier<> barrier;
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
  threads = std::min(threads, partitions());
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

void PartitionedTwin::take_crossings(uint32_t partition) {
  for (uint32_t source = 0; source < partitions(); ++source) {
    if (source == partition) continue;
    std::vector<Crossing>& arriving = twins_[source]->crossings_to(partition);
    twins_[partition]->accept_crossings(arriving);
    arriving.clear();
  }
}

void PartitionedTwin::run_window(clock::Nanos end) {
  ++windows_;
  if (!runner_) {
    for (uint32_t p = 0; p < partitions(); ++p) run_partition(p, end);
    for (uint32_t p = 0; p < partitions(); ++p) take_crossings(p);
    return;
  }
  runner_->run(end);
  for (const std::exception_ptr& error : runner_->errors) {
    if (error) std::rethrow_exception(error);
  }
}

clock::Nanos PartitionedTwin::next_event_time() const {
  clock::Nanos next = clock::kNever;
  for (const auto& clock : clocks_) next = std::min(next, clock->next_event_time());
  return next;
}

void PartitionedTwin::run(uint32_t threads) {
  set_threads(threads);
  for (clock::Nanos next = next_event_time(); next != clock::kNever; next = next_event_time()) {
    run_window(lookahead_ == 0 ? clock::kNever : next + lookahead_);
  }
}

uint64_t PartitionedTwin::events_run() const {
  uint64_t events = 0;
  for (const auto& clock : clocks_) events += clock->events_run();
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
  WireCounters sum;
  for (const auto& twin : twins_) sum += twin->host_counters(host);
  return sum;
}

WireCounters PartitionedTwin::switch_port_counters(size_t switch_port) const {
  WireCounters sum;
  for (const auto& twin : twins_) sum += twin->switch_port_counters(switch_port);
  return sum;
}

std::vector<std::string> PartitionedTwin::fault_report() const {
  return twins_.front()->fault_report([this](const Endpoint& end) {
    return end.is_host() ? host_counters(end.index) : switch_port_counters(end.index);
  });
}

}  // namespace etwire::twin
