#include "twin/fabric/loopback_port.h"

#include "twin/fabric/fabric_twin.h"

namespace etwire::twin {

void LoopbackPort::transmit(const nic::Packet& packet, clock::Nanos now) {
  twin_->transmit_from_host(slot_, packet, now);
}

}  // namespace etwire::twin
