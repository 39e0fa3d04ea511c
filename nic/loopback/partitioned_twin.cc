#include "nic/loopback/partitioned_twin.h"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

#include "nic/loopback/setup_checks.h"

namespace etwire::nic::loopback {

namespace {

// The lookahead of a partitioning: the shortest propagation delay of a cable whose ends are in
// different partitions (a PFC frame, which skips the forwarding latency, is the fastest crossing).
clock::Nanos shortest_cut_delay(const FabricLayout& layout, const TwinPartitioning& partitioning) {
  const auto owner = [&](const Endpoint& end) {
    return end.is_host() ? partitioning.of_host[end.index]
                         : partitioning.of_switch[layout.switch_port(end.index).switch_index];
  };
  clock::Nanos shortest = clock::kNever;
  for (size_t cable = 0; cable < layout.cables(); ++cable) {
    const CableInfo& info = layout.cable(cable);
    if (owner(info.lower) == owner(info.upper)) continue;
    if (info.propagation_ns == 0) {
      throw std::invalid_argument(
          "fabric twin: cable " + std::to_string(cable) +
          " between two partitions has no propagation delay, which partitions need to run "
          "apart (set fabric.propagation_delay)");
    }
    shortest = std::min(shortest, static_cast<clock::Nanos>(info.propagation_ns));
  }
  return shortest == clock::kNever ? 0 : shortest;
}

}  // namespace

PartitionedTwin::PartitionedTwin(const config::FabricConfig& config,
                                 std::span<const TwinPortSpec> ports, uint64_t seed,
                                 uint32_t partitions) {
  clocks_.push_back(std::make_unique<clock::VirtualClock>());
  {
    check_fabric_settings(config);
    const FabricLayout layout(config, ports);
    partitioning_ = partition_fabric(layout, partitions);
    lookahead_ = shortest_cut_delay(layout, partitioning_);
  }
  for (uint32_t partition = 0; partition < partitions; ++partition) {
    if (partition > 0) clocks_.push_back(std::make_unique<clock::VirtualClock>());
    twins_.push_back(std::make_unique<FabricTwin>(config, ports, *clocks_[partition], seed,
                                                  partitioning_, partition));
  }
}

// The twins' pending events point at them: they go before their clocks.
PartitionedTwin::~PartitionedTwin() {
  twins_.clear();
}

// One run: the threads' shared plan. Each thread owns partitions t, t + T, t + 2T...; between the
// two barriers of a window only a partition's own thread touches it.
struct PartitionedTwin::Runner {
  // Runs once per barrier phase, on the last thread to arrive: after the crossings are taken up it
  // plans the next window (or the end), after a window it does nothing.
  struct Plan {
    Runner* runner;
    void operator()() noexcept { runner->plan(); }
  };

  Runner(PartitionedTwin& owner, uint32_t threads)
      : twin(owner),
        threads(threads),
        next(owner.partitions(), clock::kNever),
        errors(threads),
        barrier(threads, Plan{this}) {}

  void plan() {
    if (planning) {
      const clock::Nanos first = *std::min_element(next.begin(), next.end());
      done = failed.load(std::memory_order_relaxed) || first == clock::kNever;
      if (!done) {
        window_end = twin.lookahead_ == 0 ? clock::kNever : first + twin.lookahead_;
        ++twin.windows_;
      }
    }
    planning = !planning;
  }

  void work(uint32_t thread) {
    const uint32_t partitions = twin.partitions();
    for (;;) {
      for (uint32_t p = thread; p < partitions; p += threads) {
        guard(thread, [&] {
          for (uint32_t source = 0; source < partitions; ++source) {
            if (source == p) continue;
            std::vector<Crossing>& arriving = twin.twins_[source]->crossings_to(p);
            twin.twins_[p]->accept_crossings(arriving);
            arriving.clear();
          }
        });
        next[p] = twin.clocks_[p]->next_event_time();
      }
      barrier.arrive_and_wait();
      if (done) return;
      const clock::Nanos last = window_end == clock::kNever ? clock::kNever : window_end - 1;
      for (uint32_t p = thread; p < partitions; p += threads) {
        guard(thread, [&] { twin.clocks_[p]->run_until(last); });
      }
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
  std::vector<clock::Nanos> next;          // by partition: its earliest event once crossings are in
  std::vector<std::exception_ptr> errors;  // by thread
  std::atomic<bool> failed{false};
  bool planning = true;
  bool done = false;
  clock::Nanos window_end = 0;
  std::barrier<Plan> barrier;
};

void PartitionedTwin::run(uint32_t threads) {
  if (threads == 0) throw std::invalid_argument("fabric twin: 0 threads (at least 1)");
  threads = std::min(threads, partitions());
  Runner runner(*this, threads);
  std::vector<std::thread> helpers;
  helpers.reserve(threads - 1);
  for (uint32_t thread = 1; thread < threads; ++thread) {
    helpers.emplace_back([&runner, thread] { runner.work(thread); });
  }
  runner.work(0);
  for (std::thread& helper : helpers) helper.join();
  for (const std::exception_ptr& error : runner.errors) {
    if (error) std::rethrow_exception(error);
  }
}

uint64_t PartitionedTwin::events_run() const {
  uint64_t events = 0;
  for (const auto& clock : clocks_) events += clock->events_run();
  return events;
}

PortCounters PartitionedTwin::host_counters(size_t host) const {
  PortCounters sum;
  for (const auto& twin : twins_) sum += twin->host_counters(host);
  return sum;
}

PortCounters PartitionedTwin::switch_port_counters(size_t switch_port) const {
  PortCounters sum;
  for (const auto& twin : twins_) sum += twin->switch_port_counters(switch_port);
  return sum;
}

}  // namespace etwire::nic::loopback
