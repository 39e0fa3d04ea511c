// Once warmed up, the feeder's per-node work must not touch the heap: slots, edges, maps and
// queues are all recycled. Counts every operator new in this test program while a feeder runs
// over a node source that itself never allocates in the steady state.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <random>
#include <vector>

#include "tests/feeder/vector_source.h"
#include "trace/feeder/feeder.h"

namespace {
std::atomic<uint64_t> allocations{0};
}  // namespace

// The replacements pair operator new with free() on purpose; GCC cannot see that they match.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void* operator new(size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t size) {
  return operator new(size);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, size_t) noexcept {
  std::free(p);
}

namespace etwire::feeder {
namespace {

constexpr uint64_t kBlock = 10;  // a hub, eight workers, one join: the benchmark's shape
constexpr uint64_t kNodes = 200000;

// The node at `position` of a block-structured graph; with `shuffle_group` > 1 the file order is
// permuted within groups of that many records, so parents often come after their children.
void make_block_node(uint64_t position, trace::TraceNode& out, uint64_t shuffle_group) {
  uint64_t index = position;
  if (shuffle_group > 1) {
    uint64_t group = position / shuffle_group;
    uint64_t offset = (position % shuffle_group * 7919) % shuffle_group;  // 7919 is prime
    index = group * shuffle_group + offset;
  }
  out.id = 1000 + index;
  // Slots are reused by nodes of every shape; a full-size buffer from the start keeps the
  // source's own allocations out of the count.
  out.data_deps.reserve(kBlock);
  uint64_t role = index % kBlock;
  if (role == 0) {
    out.type = trace::NodeType::kCommColl;
    if (index >= kBlock) out.data_deps.push_back(out.id - 1);
  } else if (role < kBlock - 1) {
    out.type = trace::NodeType::kComp;
    out.data_deps.push_back(out.id - role);
  } else {
    out.type = trace::NodeType::kComp;
    for (uint64_t k = 1; k < kBlock - 1; ++k) out.data_deps.push_back(out.id - k);
  }
  out.start_time_us = index * 3 % 101;
}

uint64_t allocations_in_steady_state(Policy policy, uint64_t shuffle_group, uint32_t in_flight) {
  FeederOptions options;
  options.window = 256;
  options.policy = policy;
  auto source = std::make_unique<testing::GeneratedSource>(
      [shuffle_group](uint64_t position, trace::TraceNode& out) {
        if (position == kNodes) return false;
        make_block_node(position, out, shuffle_group);
        return true;
      });
  Feeder feeder(std::move(source), options);
  std::vector<IssuedNode> running;
  running.reserve(in_flight);
  uint64_t completed = 0;
  uint64_t before = 0;
  for (;;) {
    if (completed == kNodes / 4) before = allocations.load();  // warmed up
    while (running.size() < in_flight) {
      std::optional<IssuedNode> issued = feeder.next();
      if (!issued) break;
      running.push_back(*issued);
    }
    if (running.empty()) break;
    feeder.complete(running.front());
    running.erase(running.begin());
    if (++completed == kNodes * 3 / 4) return allocations.load() - before;
  }
  ADD_FAILURE() << "feeder finished early";
  return 0;
}

TEST(FeederAllocations, NoneInTheSteadyStateForAnyPolicy) {
  for (Policy policy : {Policy::kFifo, Policy::kStartTime, Policy::kCommFirst}) {
    EXPECT_EQ(allocations_in_steady_state(policy, 0, 1), 0u) << policy_name(policy);
    EXPECT_EQ(allocations_in_steady_state(policy, 0, 16), 0u) << policy_name(policy);
  }
}

TEST(FeederAllocations, NoneInTheSteadyStateWithForwardReferences) {
  EXPECT_EQ(allocations_in_steady_state(Policy::kFifo, 50, 4), 0u);
  EXPECT_EQ(allocations_in_steady_state(Policy::kStartTime, 50, 4), 0u);
}

}  // namespace
}  // namespace etwire::feeder
