// Plays the transports of the hosts in fabric-twin tests: each host sends the packets it is
// given, oldest first, at exactly its line rate (its own LineRateTimer, as the real transport
// paces), honours the PFC pauses its port receives, and records everything that arrives.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "clock/line_rate.h"
#include "clock/scheduler.h"
#include "twin/fabric/fabric_twin.h"

namespace etwire::twin::testing {

struct Delivery {
  size_t host = 0;
  clock::Nanos at = 0;
  nic::Packet packet;

  bool operator==(const Delivery& other) const;
};

class NicDriver final : private clock::EventHandler {
 public:
  NicDriver(FabricTwin& twin, clock::Scheduler& scheduler);
  NicDriver(const NicDriver&) = delete;
  NicDriver& operator=(const NicDriver&) = delete;

  // Queues `packet` at its source host (packet.src_port), to start no earlier than `not_before`.
  void send(const nic::Packet& packet, clock::Nanos not_before = 0);
  // When false, pause frames are recorded but ignored (a NIC without PFC).
  void set_honour_pfc(bool honour) { honour_pfc_ = honour; }

  // Everything delivered to any host, in arrival order.
  const std::vector<Delivery>& deliveries() const { return deliveries_; }
  // RoCE packets (not PFC frames) delivered to `host`, in arrival order.
  std::vector<Delivery> data_received_by(size_t host) const;
  // PFC frames delivered to `host`, in arrival order.
  std::vector<Delivery> pfc_received_by(size_t host) const;
  // When `host` started each packet it sent, in order.
  const std::vector<clock::Nanos>& start_times(size_t host) const { return hosts_.at(host).starts; }

 private:
  struct Receiver final : nic::PacketReceiver {
    NicDriver* driver = nullptr;
    size_t host = 0;
    void receive(const nic::Packet& packet, clock::Nanos now) override;
  };
  struct Queued {
    nic::Packet packet;
    clock::Nanos not_before = 0;
    uint64_t sequence = 0;  // send order across classes
  };
  struct Host {
    nic::Port* port = nullptr;
    clock::LineRateTimer wire;
    std::array<std::deque<Queued>, 8> classes;
    std::array<clock::Nanos, 8> paused_until{};
    clock::Nanos wake_at = clock::kNever;
    Receiver receiver;
    std::vector<clock::Nanos> starts;
  };

  void on_event(uint64_t tag, clock::Nanos now) override;
  void pump(size_t host, clock::Nanos now);
  void wake(size_t host, clock::Nanos at);
  void received(size_t host, const nic::Packet& packet, clock::Nanos now);

  clock::Scheduler& scheduler_;
  std::vector<Host> hosts_;
  std::vector<Delivery> deliveries_;
  uint64_t next_sequence_ = 0;
  bool honour_pfc_ = true;
};

// A RoCE data packet of `wire_bytes` (the twin reads only the fields set here).
nic::Packet data_packet(uint32_t src, uint32_t dst, uint32_t wire_bytes, uint32_t psn,
                        uint8_t priority = 0, uint8_t ecn_codepoint = nic::ecn::kNotEct,
                        uint16_t udp_source_port = 49152);

// A fabric with no ECN, no PFC, no drops, a large shared buffer, 1 us propagation and 500 ns
// switch latency: the tests switch on what they exercise.
config::FabricConfig quiet_fabric();

// `count` ports named "nic0", "nic1", ... at `speed_bps`.
std::vector<TwinPortSpec> uniform_ports(size_t count, uint64_t speed_bps = 100'000'000'000);

inline constexpr uint64_t k100G = 100'000'000'000;
inline constexpr uint64_t k25G = 25'000'000'000;

}  // namespace etwire::twin::testing
