// How the fabric twin is cut into partitions that run on separate clocks (and threads): which
// partition owns each switch and each host, and what crosses between them. A partition follows
// the fabric: a group of leaves (of pods, in a three-tier fabric) with their hosts, and a share of
// the switches above them. A partition owns everything that happens at its nodes: a frame is sent
// by the partition of the link's sending end and arrives in the partition of its receiving end.
// A frame on a cable cut by the partitioning is a Crossing, handed over between windows; it
// arrives no sooner than the cable's propagation delay after it started, which is what lets the
// partitions run a window of that length each without hearing from the others.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "clock/time.h"
#include "nic/packet.h"
#include "twin/link.h"

namespace etwire::twin {

class FabricLayout;

struct TwinPartitioning {
  uint32_t count = 1;
  std::vector<uint32_t> of_switch;  // by switch index
  std::vector<uint32_t> of_host;    // by host index
};

// `count` partitions of `layout`: leaves in `count` consecutive groups (whole pods when a
// three-tier fabric has at least `count` pods), each host with its leaf, spines and super-spines
// dealt in consecutive groups. The groups of leaves (or pods) are cut so that each carries about
// as much of `host_weights` as the others (what each host moves, by host index: the traffic
// plan's bytes), each with one leaf (or pod) at least; without weights, or with none above 0,
// they hold about as many leaves (or pods). Throws std::invalid_argument when `count` is 0, or
// above 1 on a fabric with fewer leaves than partitions (a single switch has none).
TwinPartitioning partition_fabric(const FabricLayout& layout, uint32_t count,
                                  std::span<const uint64_t> host_weights = {});

// The partition that owns `end`: a host's, or the switch's of a switch port.
uint32_t partition_of(const FabricLayout& layout, const TwinPartitioning& partitioning,
                      const Endpoint& end);

// How far the partitions may run apart: the shortest propagation delay of a cable whose ends are
// in different partitions (a PFC frame, which skips the forwarding latency, is the fastest
// crossing); 0 when nothing is cut. Throws std::invalid_argument for a cut cable without a delay.
clock::Nanos partition_lookahead(const FabricLayout& layout, const TwinPartitioning& partitioning);

// A frame on a cut cable: it arrives at `arrives_at` at the far end of link `link`.
struct Crossing {
  clock::Nanos arrives_at = 0;
  uint32_t link = 0;
  // A PFC frame's class and quanta travel in `packet` (pfc_priority, pfc_quanta).
  bool pfc = false;
  nic::Packet packet;
};

}  // namespace etwire::twin
