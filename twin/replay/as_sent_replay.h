// The twin fed what a lab's ports actually sent: every frame enters the fabric at the host it
// left from, at the time it left (its capture's stamp), instead of when the transport's pacing
// would have sent it. Nothing reacts: the twin's switches queue, mark, pause and drop these frames
// as their model says, and what each host receives is counted. Beside the ideal sender's
// prediction this separates "the sender was not ideal" from "the device differs from its model".
//
// A host's wire still runs at its port's speed: a frame stamped before the previous one is out
// starts when the wire frees (held), as a NIC sends a burst handed to it at one instant.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "clock/time.h"
#include "clock/virtual_clock.h"
#include "nic/packet.h"
#include "twin/fabric/fabric_twin.h"
#include "twin/replay/arrival_tally.h"

namespace etwire::twin {

// A frame to send: when, counted from the replay's start, and the packet (src_port the host that
// sends it, dst_port the host it is addressed to).
struct SentFrame {
  clock::Nanos at = 0;
  nic::Packet packet;
};

// One host's frames, in the order it sent them.
class SentFrames {
 public:
  // The next frame into `out`; false when there is none.
  virtual bool next(SentFrame& out) = 0;

 protected:
  ~SentFrames() = default;
};

struct ReplayedHost {
  uint64_t sent = 0;  // frames put on its wire
  uint64_t held = 0;  // of those, started later than stamped: the wire was busy
  clock::Nanos longest_hold = 0;
  ArrivalTally arrived;  // what the twin delivered to it
};

struct AsSentResult {
  std::vector<ReplayedHost> hosts;  // by the twin's host index
  clock::Nanos end = 0;             // when the last frame was delivered or lost
  uint64_t events = 0;
};

// Sends `sources[h]`'s frames (nullptr: none) from host h of `twin` on `clock`, which the twin
// runs on and which stands at 0, then runs the twin until no frame is left in it. Frames go at
// their times, in time order across hosts (a host's own frames in its order). The twin's own
// counters (drops, marks, pauses) hold the rest of the story afterwards.
AsSentResult replay_as_sent(FabricTwin& twin, clock::VirtualClock& clock,
                            std::span<SentFrames* const> sources);

}  // namespace etwire::twin
