// A test network with no switch: every port's packets arrive at their destination port after
// serialization at the sender's speed and a fixed propagation delay. A hook sees every packet
// and may drop it or mark it, so tests can inject exactly the loss or congestion they need.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "clock/line_rate.h"
#include "clock/scheduler.h"
#include "nic/port.h"

namespace etwire::transport::testing {

enum class Verdict { kDeliver, kDrop };

class IdealWire final : public clock::EventHandler {
 public:
  using Hook = std::function<Verdict(nic::Packet&, clock::Nanos now)>;

  IdealWire(clock::Scheduler& scheduler, size_t ports, uint64_t speed_bps, clock::Nanos delay)
      : scheduler_(scheduler), delay_(delay) {
    for (size_t i = 0; i < ports; ++i)
      ports_.push_back(std::make_unique<WirePort>(*this, speed_bps));
  }

  nic::Port& port(size_t index) { return *ports_[index]; }
  void set_hook(Hook hook) { hook_ = std::move(hook); }

  // Every packet put on the wire, in transmit order, with its start time.
  struct Sent {
    nic::Packet packet;
    clock::Nanos at;
  };
  const std::vector<Sent>& sent() const { return sent_; }

  void on_event(uint64_t slot, clock::Nanos now) override {
    const nic::Packet packet = in_flight_[slot];
    free_.push_back(slot);
    nic::PacketReceiver* receiver = ports_[packet.dst_port]->receiver;
    if (receiver != nullptr) receiver->receive(packet, now);
  }

 private:
  struct WirePort final : nic::Port {
    WirePort(IdealWire& wire, uint64_t speed) : wire(wire), speed(speed), timer(speed) {}
    void transmit(const nic::Packet& packet, clock::Nanos now) override {
      wire.sent_.push_back({packet, now});
      const clock::Nanos end = timer.transmit(now, packet.wire_bytes);
      nic::Packet copy = packet;
      if (wire.hook_ && wire.hook_(copy, now) == Verdict::kDrop) return;
      uint64_t slot = wire.in_flight_.size();
      if (wire.free_.empty()) {
        wire.in_flight_.push_back(copy);
      } else {
        slot = wire.free_.back();
        wire.free_.pop_back();
        wire.in_flight_[slot] = copy;
      }
      wire.scheduler_.run_at(end + wire.delay_, &wire, slot);
    }
    uint64_t speed_bps() const override { return speed; }
    void set_receiver(nic::PacketReceiver* r) override { receiver = r; }

    IdealWire& wire;
    uint64_t speed;
    clock::LineRateTimer timer;
    nic::PacketReceiver* receiver = nullptr;
  };

  clock::Scheduler& scheduler_;
  clock::Nanos delay_;
  std::vector<std::unique_ptr<WirePort>> ports_;
  std::vector<nic::Packet> in_flight_;  // by slot; the event tag is the slot
  std::vector<uint64_t> free_;
  std::vector<Sent> sent_;
  Hook hook_;
};

// A hook that drops the first data packet with `psn` and lets everything else through.
inline IdealWire::Hook drop_once(uint32_t psn) {
  return [psn, dropped = false](nic::Packet& packet, clock::Nanos) mutable {
    if (packet.is_data() && packet.psn == psn && !dropped) {
      dropped = true;
      return Verdict::kDrop;
    }
    return Verdict::kDeliver;
  };
}

}  // namespace etwire::transport::testing
