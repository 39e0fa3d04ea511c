// Where each connection's frames go. Packets carry the QP's run number (unique in the run); frames
// carry its wire number, which its port numbers for itself, and the ranks' MAC and IP addresses.
// The directory holds them per connection (numbered 0, 1, ... as the data plane opens them),
// found by either half's run number, or by its port and wire number for a frame received.
// Filled when a connection opens (not per packet); read per packet with two indexed loads.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "nic/frame/wire_route.h"
#include "nic/packet.h"

namespace etwire::nic {

class WireDirectory {
 public:
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

  // Records connection `index`; throws std::invalid_argument for a wire number beyond 24 bits or a
  // number already in the same role (on the same port, for wire numbers).
  void add(uint32_t index, const WireRoute& route);

  // The route of connection `index`, or nullptr.
  const WireRoute* route(uint32_t index) const {
    return index < routes_.size() && routes_[index].known ? &routes_[index].route : nullptr;
  }
  // The connection whose responder (data arrives) or requester (ACK/NAK/CNP arrive) has run
  // number `qpn`; kNone when no connection has.
  uint32_t by_responder_qpn(uint32_t qpn) const {
    return qpn < responder_by_qpn_.size() ? responder_by_qpn_[qpn] : kNone;
  }
  uint32_t by_requester_qpn(uint32_t qpn) const {
    return qpn < requester_by_qpn_.size() ? requester_by_qpn_[qpn] : kNone;
  }
  // The connection of a RoCE packet to send: it carries the run number of the QP it goes to, the
  // responder's for data and the requester's for ACK, NAK and CNP.
  uint32_t connection_of(const Packet& packet) const {
    return packet.is_data() ? by_responder_qpn(packet.dest_qpn) : by_requester_qpn(packet.dest_qpn);
  }
  // The connection of a RoCE packet read from a frame that `port` received: it carries the wire
  // number of the QP it goes to.
  uint32_t connection_received(uint32_t port, const Packet& packet) const {
    if (port >= received_.size()) return kNone;
    const Received& at = received_[port];
    const std::vector<uint32_t>& by_qpn = packet.is_data() ? at.responders : at.requesters;
    return packet.dest_qpn < by_qpn.size() ? by_qpn[packet.dest_qpn] : kNone;
  }

 private:
  // A power of two in size (128 bytes): the bounds check of route() then divides by a shift, where
  // the 124 bytes of route and flag took a multiply by an inverse on every frame sent.
  struct alignas(128) Slot {
    WireRoute route;
    bool known = false;
  };
  // A port's QP halves by wire number.
  struct Received {
    std::vector<uint32_t> requesters;
    std::vector<uint32_t> responders;
  };
  std::vector<Slot> routes_;
  std::vector<uint32_t> requester_by_qpn_;
  std::vector<uint32_t> responder_by_qpn_;
  std::vector<Received> received_;
};

}  // namespace etwire::nic
