// The loopback NIC: a nic::Port whose wire is a cable into the fabric twin. transmit() hands the
// packet to the twin, which serializes it on the host's link; packets and PFC frames the twin
// delivers to this host go to the port's receiver at the time their last byte arrives.
#pragma once

#include <cstdint>

#include "nic/port.h"

namespace etwire::twin {

class FabricTwin;

class LoopbackPort final : public nic::Port {
 public:
  // `host`: the fabric's index of the host; `slot`: where the twin (a partition of it) keeps it.
  LoopbackPort(FabricTwin& twin, uint32_t host, uint32_t slot, uint64_t speed_bps)
      : twin_(&twin), host_(host), slot_(slot), speed_bps_(speed_bps) {}

  // Throws std::invalid_argument for a packet the fabric cannot carry (unknown destination
  // port, priority above 7, zero wire bytes).
  void transmit(const nic::Packet& packet, clock::Nanos now) override;
  uint64_t speed_bps() const override { return speed_bps_; }
  void set_receiver(nic::PacketReceiver* receiver) override { receiver_ = receiver; }

  nic::PacketReceiver* receiver() const { return receiver_; }
  uint32_t host() const { return host_; }

 private:
  FabricTwin* twin_;
  uint32_t host_;
  uint32_t slot_;
  uint64_t speed_bps_;
  nic::PacketReceiver* receiver_ = nullptr;
};

}  // namespace etwire::twin
