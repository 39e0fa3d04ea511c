// The seam between the transport and a backend: one Port per lab port. The transport decides
// what to send and when (it paces QPs and serializes at line rate itself, the same code for every
// backend); a port puts packets on its wire and hands arriving packets to its receiver.
#pragma once

#include <cstdint>

#include "clock/time.h"
#include "nic/packet.h"

namespace etwire::nic {

// Gets every packet that arrives at a port, at the time its last byte arrives: RoCE packets for
// the transport's QPs, and PFC pause frames the port's link partner sent (the transport honours
// them: a NIC does not start a packet of a paused class).
class PacketReceiver {
 public:
  virtual void receive(const Packet& packet, clock::Nanos now) = 0;

 protected:
  ~PacketReceiver() = default;
};

class Port {
 public:
  virtual ~Port() = default;

  // Starts `packet` on the wire at `now`. The caller never starts a packet before the previous
  // one has been serialized: it keeps its own LineRateTimer at speed_bps().
  virtual void transmit(const Packet& packet, clock::Nanos now) = 0;

  virtual uint64_t speed_bps() const = 0;

  // Where arriving packets go; set once before traffic starts.
  virtual void set_receiver(PacketReceiver* receiver) = 0;
};

}  // namespace etwire::nic
