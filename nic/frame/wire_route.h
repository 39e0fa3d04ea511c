// Where a connection's frames go: each half's port, QP number and the queue of the port that
// drives it, and the addresses of both directions (data from the requester, ACK, NAK and CNP
// from the responder). What a frame backend needs to address a connection's packets; made when
// the connection opens, never per packet.
#pragma once

#include <cstdint>

#include "nic/frame/wire_format.h"

namespace etwire::nic {

struct WireEnd {
  uint32_t port = 0;   // the port's index in the run
  uint32_t qpn = 0;    // QP number on the wire
  uint16_t queue = 0;  // the port's queue pair (and so the worker) that drives this end
};

struct WireRoute {
  WireEnd requester;
  WireEnd responder;
  frame::FrameAddresses forward;   // requester to responder: data
  frame::FrameAddresses backward;  // responder to requester: ACK, NAK, CNP
};

}  // namespace etwire::nic
