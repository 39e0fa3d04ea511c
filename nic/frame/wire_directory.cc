#include "nic/frame/wire_directory.h"

#include <fmt/format.h>

#include <stdexcept>

#include "nic/packet.h"

namespace etwire::nic {

void WireDirectory::add(uint32_t index, const WireRoute& route) {
  auto claim = [&](std::vector<uint32_t>& by_qpn, uint32_t qpn, const char* role) {
    if (qpn >= by_qpn.size()) by_qpn.resize(qpn + 1, kNone);
    if (by_qpn[qpn] != kNone && by_qpn[qpn] != index) {
      throw std::invalid_argument(
          fmt::format("wire directory: QP number {} is already the {} of connection {}", qpn, role,
                      by_qpn[qpn]));
    }
    by_qpn[qpn] = index;
  };
  for (const WireEnd* end : {&route.requester, &route.responder}) {
    if (end->on_wire() > kPsnMask) {
      throw std::invalid_argument(
          fmt::format("wire directory: QP number {} of port {} does not fit in 24 bits",
                      end->on_wire(), end->port));
    }
    if (end->port >= received_.size()) received_.resize(end->port + 1);
  }
  claim(requester_by_qpn_, route.requester.qpn, "requester");
  claim(responder_by_qpn_, route.responder.qpn, "responder");
  claim(received_[route.requester.port].requesters, route.requester.on_wire(), "requester");
  claim(received_[route.responder.port].responders, route.responder.on_wire(), "responder");
  if (index >= routes_.size()) routes_.resize(index + 1);
  routes_[index] = {route, true};
}

}  // namespace etwire::nic
