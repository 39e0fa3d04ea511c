// Once warm, the twin's per-packet and per-event work must not touch the heap: the packet pool,
// the rings and the scheduler's heap have grown to the run's peak and are reused. This program's
// operator new is replaced by one that counts, and a steady incast (queueing, tail drops, ECN
// marks, fault drops) runs twice as long again after warming up.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "clock/line_rate.h"
#include "clock/virtual_clock.h"
#include "tests/twin/nic_driver.h"
#include "twin/fabric/fabric_twin.h"

namespace {
std::atomic<uint64_t> heap_allocations{0};
}  // namespace

// The replacements pair operator new with free() on purpose; GCC cannot see that they match.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void* operator new(std::size_t size) {
  heap_allocations.fetch_add(1, std::memory_order_relaxed);
  void* block = std::malloc(size == 0 ? 1 : size);
  if (block == nullptr) throw std::bad_alloc();
  return block;
}
void* operator new[](std::size_t size) {
  return operator new(size);
}
void operator delete(void* block) noexcept {
  std::free(block);
}
void operator delete[](void* block) noexcept {
  std::free(block);
}
void operator delete(void* block, std::size_t) noexcept {
  std::free(block);
}
void operator delete[](void* block, std::size_t) noexcept {
  std::free(block);
}

namespace etwire::twin::testing {
namespace {

// Hosts that send a fixed packet back to back forever and count what they receive; nothing in
// them allocates.
class SteadySenders final : public clock::EventHandler {
 public:
  SteadySenders(FabricTwin& twin, clock::Scheduler& scheduler, uint32_t senders, uint32_t sink)
      : twin_(twin), scheduler_(scheduler), sink_(sink), receivers_(twin.ports()) {
    for (uint32_t host = 0; host < twin.ports(); ++host) {
      twin.port(host).set_receiver(&receivers_[host]);
    }
    for (uint32_t host = 0; host < senders; ++host) {
      wires_.emplace_back(twin.port(host).speed_bps());
      scheduler.run_at(0, this, host);
    }
  }

  void on_event(uint64_t host, clock::Nanos now) override {
    nic::Packet packet = data_packet(static_cast<uint32_t>(host), sink_, 1000, next_psn_++, 0,
                                     nic::ecn::kEct0, static_cast<uint16_t>(49152 + host));
    clock::LineRateTimer& wire = wires_[host];
    wire.transmit(now == wire.free_at() ? now - 1 : now, packet.wire_bytes);
    twin_.port(host).transmit(packet, now);
    scheduler_.run_at(wire.free_at(), this, host);
  }

  uint64_t received() const {
    uint64_t total = 0;
    for (const Counter& counter : receivers_) total += counter.packets;
    return total;
  }

 private:
  struct Counter final : nic::PacketReceiver {
    uint64_t packets = 0;
    void receive(const nic::Packet&, clock::Nanos) override { ++packets; }
  };
  FabricTwin& twin_;
  clock::Scheduler& scheduler_;
  uint32_t sink_;
  std::vector<Counter> receivers_;
  std::vector<clock::LineRateTimer> wires_;
  uint32_t next_psn_ = 0;
};

TEST(FabricTwinAllocation, SteadyTrafficDoesNotAllocateOnceWarm) {
  config::FabricConfig config = quiet_fabric();
  config.buffer.size_bytes = 100'000;
  config.drop_probability = 0.01;
  config.ecn.enabled = true;
  config.ecn.kmin_bytes = 10'000;
  config.ecn.kmax_bytes = 80'000;
  config.ecn.pmax = 0.2;
  clock::VirtualClock clock;
  const auto ports = uniform_ports(5);
  FabricTwin twin(config, ports, clock, 1);
  SteadySenders senders(twin, clock, 4, 4);

  clock.run_until(2'000'000);  // warm: the sink's queue has filled its buffer long ago
  const uint64_t before = heap_allocations.load();
  const uint64_t received_before = senders.received();
  clock.run_until(6'000'000);
  EXPECT_EQ(heap_allocations.load() - before, 0u);
  // 4 ms at 100G of 1000-byte packets into the sink (minus 1% fault drops on its link).
  EXPECT_GT(senders.received() - received_before, 45'000u);
  EXPECT_GT(twin.switch_port_counters(4).drops_buffer, 0u);
  EXPECT_GT(twin.switch_port_counters(4).ecn_marked, 0u);
}

}  // namespace
}  // namespace etwire::twin::testing
