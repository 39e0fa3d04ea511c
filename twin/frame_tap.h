// What a capture sees of the fabric twin at one port, a NIC's or a switch's: every frame that
// leaves the port (as it leaves, before the link can lose or damage it) and every frame the port
// receives (as the port handles it, before its checks, so a frame the link damaged shows too).
// PFC frames come as the Packet nic::pfc_frame makes. The twin calls a tap from its own thread, on
// its virtual clock.
#pragma once

#include "clock/time.h"
#include "nic/packet.h"

namespace etwire::twin {

class FrameTap {
 public:
  virtual ~FrameTap() = default;
  virtual void departs(const nic::Packet& packet, clock::Nanos now) = 0;
  virtual void arrives(const nic::Packet& packet, clock::Nanos now) = 0;
};

}  // namespace etwire::twin
