#include "nic/loopback/loopback_port.h"

#include "nic/loopback/fabric_twin.h"

namespace etwire::nic::loopback {

void LoopbackPort::transmit(const Packet& packet, clock::Nanos now) {
  twin_->transmit_from_host(host_, packet, now);
}

}  // namespace etwire::nic::loopback
