// The loopback NIC: a nic::Port whose wire is a cable into the fabric twin. transmit() hands the
// packet to the twin, which serializes it on the host's link; packets and PFC frames the twin
// delivers to this host go to the port's receiver at the time their last byte arrives.
#pragma once

#include <cstdint>

#include "nic/port.h"

namespace etwire::nic::loopback {

class FabricTwin;

class LoopbackPort final : public Port {
 public:
  LoopbackPort(FabricTwin& twin, uint32_t host, uint64_t speed_bps)
      : twin_(&twin), host_(host), speed_bps_(speed_bps) {}

  // Throws std::invalid_argument for a packet the fabric cannot carry (unknown destination
  // port, priority above 7, zero wire bytes).
  void transmit(const Packet& packet, clock::Nanos now) override;
  uint64_t speed_bps() const override { return speed_bps_; }
  void set_receiver(PacketReceiver* receiver) override { receiver_ = receiver; }

  PacketReceiver* receiver() const { return receiver_; }
  // Sees every packet that arrives, before the NIC's own checks: a capture shows the frames the
  // NIC discards too (a bad ICRC). nullptr: none.
  void set_arrival_tap(PacketReceiver* tap) { arrival_tap_ = tap; }
  PacketReceiver* arrival_tap() const { return arrival_tap_; }
  uint32_t host() const { return host_; }

 private:
  FabricTwin* twin_;
  uint32_t host_;
  uint64_t speed_bps_;
  PacketReceiver* receiver_ = nullptr;
  PacketReceiver* arrival_tap_ = nullptr;
};

}  // namespace etwire::nic::loopback
