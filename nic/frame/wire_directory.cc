#include "nic/frame/wire_directory.h"

#include <fmt/format.h>

#include <stdexcept>

#include "nic/packet.h"

namespace etwire::nic {

void WireDirectory::add(uint32_t index, const WireRoute& route) {
  auto claim = [&](std::vector<uint32_t>& by_qpn, uint32_t qpn, const char* role) {
    if (qpn > kPsnMask) {
      throw std::invalid_argument(
          fmt::format("wire directory: QP number {} does not fit in 24 bits", qpn));
    }
    if (qpn >= by_qpn.size()) by_qpn.resize(qpn + 1, kNone);
    if (by_qpn[qpn] != kNone && by_qpn[qpn] != index) {
      throw std::invalid_argument(
          fmt::format("wire directory: QP number {} is already the {} of connection {}", qpn, role,
                      by_qpn[qpn]));
    }
    by_qpn[qpn] = index;
  };
  claim(requester_by_qpn_, route.requester.qpn, "requester");
  claim(responder_by_qpn_, route.responder.qpn, "responder");
  if (index >= routes_.size()) routes_.resize(index + 1);
  routes_[index] = {route, true};
}

}  // namespace etwire::nic
