// What arrived at one port, counted the same way for the frames a lab port captured coming in and
// for the frames the twin delivers in a replay of what the lab sent, so the two can stand side
// by side.
#pragma once

#include <cstdint>

#include "clock/time.h"
#include "nic/packet.h"

namespace etwire::twin {

struct ArrivalTally {
  uint64_t frames = 0;       // RoCE frames
  uint64_t data_frames = 0;  // of those, data
  uint64_t data_bytes = 0;   // their payload bytes
  uint64_t ce_marked = 0;    // RoCE frames that arrived with ECN CE
  uint64_t cnps = 0;
  uint64_t pauses = 0;           // PFC frames with quanta above 0
  clock::Nanos first_data = -1;  // when the first data frame arrived; -1 for none
  clock::Nanos last_data = -1;   // and the last

  void count(const nic::Packet& packet, clock::Nanos at) {
    if (packet.kind == nic::PacketKind::kPfcPause) {
      if (packet.pfc_quanta > 0) ++pauses;
      return;
    }
    if (packet.kind != nic::PacketKind::kRoce) return;
    ++frames;
    if (packet.ecn == nic::ecn::kCe) ++ce_marked;
    if (packet.opcode == nic::opcode::kCnp) ++cnps;
    if (!packet.is_data()) return;
    ++data_frames;
    data_bytes += packet.payload_bytes;
    if (first_data < 0) first_data = at;
    last_data = at;
  }
};

}  // namespace etwire::twin
