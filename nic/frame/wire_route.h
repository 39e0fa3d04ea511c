// Where a connection's frames go: each half's port, QP numbers and the queue of the port that
// drives it, and the addresses of both directions (data from the requester, ACK, NAK and CNP
// from the responder). What a frame backend needs to address a connection's packets; made when
// the connection opens, never per packet.
#pragma once

#include <cstdint>

#include "nic/frame/wire_format.h"

namespace etwire::nic {

struct WireEnd {
  uint32_t port = 0;      // the port's index in the run
  uint32_t qpn = 0;       // the QP's number in the run, which packets carry (qp_numbering.h)
  uint16_t queue = 0;     // the port's queue pair (and so the worker) that drives this end
  uint32_t wire_qpn = 0;  // its number on the wire, its port's own; 0: the same as qpn
  uint32_t on_wire() const { return wire_qpn != 0 ? wire_qpn : qpn; }
};

struct WireRoute {
  WireEnd requester;
  WireEnd responder;
  frame::FrameAddresses forward;   // requester to responder: data
  frame::FrameAddresses backward;  // responder to requester: ACK, NAK, CNP

  // The wire number of the QP a packet of this connection goes to (data to the responder, the
  // rest to the requester), which its frame carries in place of the run number.
  uint32_t wire_dest_qpn(const Packet& packet) const {
    return packet.is_data() ? responder.on_wire() : requester.on_wire();
  }
  // The run number of the same QP, for a packet read from a frame.
  uint32_t run_dest_qpn(const Packet& packet) const {
    return packet.is_data() ? responder.qpn : requester.qpn;
  }
};

}  // namespace etwire::nic
