// `fabric:` — the twin of the network that the loopback NIC's ports are wired to: topology,
// link delays, switch buffer, ECN marking, PFC, and per-port exceptions. Ports of other backends
// are cabled to real equipment, so the twin ignores them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etwire::config {

enum class Topology : uint8_t {
  kSingleSwitch,  // every port on one switch
  kLeafSpine,     // ports attached to leaves, leaves fully meshed to spines
  kThreeTier,     // leaf-spine pods, each spine meshed to its own group of super-spines
};
// "single-switch", "leaf-spine", "three-tier"
std::string_view topology_name(Topology topology);

enum class BufferMode : uint8_t {
  kShared,   // one pool for every port of a switch
  kPerPort,  // the size split evenly between a switch's ports
  // One pool, each port's share bounded by `alpha` times what the pool has free (dynamic
  // thresholds, as shared-buffer switch MMUs bound a queue).
  kDynamic,
};
std::string_view buffer_mode_name(BufferMode mode);  // "shared", "per-port", "dynamic"

enum class EcmpHash : uint8_t {
  kUdpSourcePort,  // the RoCEv2 entropy field alone
  kFiveTuple,      // addresses, protocol and both UDP ports
};
std::string_view ecmp_hash_name(EcmpHash hash);  // "udp-source-port", "five-tuple"

// How a switch spreads packets over the equal links toward their destination.
enum class LoadBalancing : uint8_t {
  kEcmp,      // a flow's hash picks one link for all its packets
  kSpray,     // every packet picks anew, in the order LoadBalancingConfig::spray names
  kFlowlet,   // a flow keeps its link until it pauses longer than the flowlet gap
  kAdaptive,  // every packet takes the link with the least queued, unless its hashed one is close
};
std::string_view load_balancing_name(LoadBalancing mode);  // "ecmp", "spray", "flowlet", "adaptive"

// The order a spraying switch deals packets to its links in.
enum class SprayOrder : uint8_t {
  kRandom,      // each packet a link drawn at random (seeded)
  kRoundRobin,  // the links of a group in turn
  kEntropy,     // the hash of the packet's entropy field (RoCEv2's UDP source port) alone
};
std::string_view spray_order_name(SprayOrder order);  // "random", "round-robin", "entropy"

// Where a switch decides whether to mark a packet: as it leaves the egress queue (the depth it
// sees is the backlog still behind it, so the mark carries news of the queue as it is now) or as
// it joins the queue (the mark then waits out the whole queue ahead of it before it is seen).
enum class EcnMarkPoint : uint8_t {
  kDequeue,
  kEnqueue,
};
std::string_view ecn_mark_point_name(EcnMarkPoint point);  // "dequeue", "enqueue"

// How RED spaces its marks in the ramp between Kmin and Kmax (twin/switch/red_marker.h).
enum class EcnSpacing : uint8_t {
  kIndependent,  // each packet drawn on its own, with the ramp's probability p
  kUniform,      // Floyd and Jacobson: gaps between marks spread evenly over 1 .. 1/p packets
  kWait,         // RED's "wait" variant (ns-2 and ns-3's default): gaps over 1/p .. 2/p packets
};
std::string_view ecn_spacing_name(EcnSpacing spacing);  // "independent", "uniform", "wait"

// RED-style marking on egress queue depth: no marks below Kmin, probability rising linearly to
// Pmax at Kmax, every packet above Kmax. Defaults: NVIDIA's example thresholds for 100G ports and
// the DCQCN paper's Pmax.
struct EcnMarking {
  bool enabled = true;
  uint64_t kmin_bytes = 150'000;
  uint64_t kmax_bytes = 1'500'000;
  double pmax = 0.01;
  EcnMarkPoint mark_at = EcnMarkPoint::kDequeue;
  // RED's queue weight w_q: the marking decision goes by an exponentially weighted moving average
  // of the depth packets find as they join (twin/switch/red_marker.h). 1: the depth itself.
  double average_weight = 1.0;
  // RED's spacing of marks by the count since the last one (twin/switch/red_marker.h).
  EcnSpacing spacing = EcnSpacing::kIndependent;
  // RED's gentle region: above Kmax the probability rises on from Pmax to 1 at 2 x Kmax, rather
  // than every packet being marked.
  bool gentle = false;
};

// Priority flow control: an ingress queue above XOFF pauses the upstream sender on that priority
// until it drains below XON.
struct PfcConfig {
  bool enabled = false;
  uint64_t xoff_bytes = 256 * 1024;
  uint64_t xon_bytes = 128 * 1024;
  std::vector<uint8_t> priorities{3};  // lossless priorities
};

struct LeafSpineConfig {
  uint32_t ports_per_leaf = 0;  // ports attached to each leaf (required for leaf-spine)
  uint32_t spines = 2;
  // Downlink capacity / uplink capacity per leaf. Resolved: when uplink_speed is given this is
  // derived from it, otherwise uplinks run at ports_per_leaf x port speed / (spines x this).
  double oversubscription = 1.0;
  uint64_t uplink_speed_bps = 0;  // resolved speed of each leaf-spine link
  // Parallel links between each leaf and each spine, each of uplink_speed: ECMP picks one of
  // spines x links at a leaf, and one of the links at a spine.
  uint32_t links = 1;
  EcmpHash ecmp = EcmpHash::kUdpSourcePort;
  // Mixed into every switch's ECMP hash: another seed, other paths for the same flows.
  uint64_t ecmp_seed = 0;
};

// `fabric.load_balancing`: a mode per switch tier and the settings of the modes.
struct LoadBalancingConfig {
  LoadBalancing leaf = LoadBalancing::kEcmp;
  LoadBalancing spine = LoadBalancing::kEcmp;
  LoadBalancing super_spine = LoadBalancing::kEcmp;
  SprayOrder spray = SprayOrder::kRandom;
  // A flow idle longer than this starts a new flowlet, which may take another link: long
  // enough that its earlier packets have left the queues behind, so it does not reorder them.
  uint64_t flowlet_gap_ns = 50'000;
  // How many more bytes an adaptive switch lets the hashed link's queue hold than the least
  // loaded link's before it sends the packet elsewhere (0: to the least loaded whenever it is
  // less loaded).
  uint64_t adaptive_bias_bytes = 0;

  bool uses(LoadBalancing mode) const {
    return leaf == mode || spine == mode || super_spine == mode;
  }
};

// `fabric.trimming`: a switch that would drop a data packet for want of buffer cuts it to its
// headers and forwards those in a class of their own, so the receiver learns of the loss at once.
struct TrimmingConfig {
  bool enabled = false;
  // The 802.1p class the headers travel in: the highest by default, ahead of the queues that
  // overflowed. Lossy whatever PFC says of the class, as a header is never paused for.
  uint8_t priority = 7;
  // The headers wait apart from the switch buffer (which is full when they are cut), in at most
  // this many bytes of their class's queue on each egress port; beyond it they are dropped.
  uint64_t queue_bytes = 64 * 1024;
};

// Three-tier Clos: consecutive leaves form pods, each a leaf-spine fabric of its own; spine s of
// every pod connects to the same group of super_spines super-spines (spine s's group), which
// join the pods.
struct ThreeTierConfig {
  uint32_t leaves_per_pod = 0;  // required for three-tier
  uint32_t super_spines = 2;    // in each spine's group
  // Parallel links between each spine and each super-spine of its group.
  uint32_t links = 1;
  // Downlink capacity / uplink capacity per spine. Resolved as leaf_spine's: uplinks run at the
  // spine's leaf links' capacity / (super_spines x links x this) unless uplink_speed is given.
  double oversubscription = 1.0;
  uint64_t uplink_speed_bps = 0;  // resolved speed of each spine-super-spine link
};

// Rail-optimized wiring on a leaf-spine or three-tier fabric: every nics_per_host consecutive
// ports are one server's NICs, and NIC i of the servers of a group of ports_per_leaf servers all
// attach to rail leaf i of that group. With planes > 1 the fabric is that many separate networks,
// rail i in plane i % planes, each with its own spines (and super-spines): traffic between
// planes has no path.
struct RailsConfig {
  uint32_t nics_per_host = 0;  // 0: no rails, ports attach to leaves in port order
  uint32_t planes = 1;
};

struct SwitchBuffer {
  uint64_t size_bytes = 32ull << 20;
  // Bytes every switch port may always buffer for the packets it receives, taken out of the size
  // before the rest is shared (switch MMUs call it the ingress minimum guarantee).
  uint64_t ingress_reserve_bytes = 16 * 1024;
  BufferMode mode = BufferMode::kShared;
  // kDynamic: a port's share may hold at most this many times the bytes the pool has free.
  double alpha = 1.0;
  // A drop-tail limit in packets on each egress queue (each class of each switch port), as a
  // router's queue counted in packets (Linux pfifo, ns-3's "100p"); 0: bytes alone limit it.
  uint32_t queue_packets = 0;
};

// A token-bucket shaper on a switch's egress port (as Linux tbf shapes one): tokens fill at
// `rate_bps` up to `burst_bytes`, and a frame starts only once the bucket holds its wire bytes,
// which it takes. A burst after an idle spell leaves at the link's speed, then frames follow at
// the rate. PFC frames pass unshaped. rate_bps 0: no shaper.
struct Shaper {
  uint64_t rate_bps = 0;
  uint64_t burst_bytes = 0;

  bool shapes() const { return rate_bps != 0; }
};

// Settings for the link of one port, replacing the fabric-wide ones. Fully resolved: fields the
// override does not name hold the fabric-wide value.
struct FabricPortOverride {
  std::string port;
  std::string key_path;
  EcnMarking ecn;
  PfcConfig pfc;
  Shaper shaper;  // of the switch port facing this port
  uint64_t propagation_delay_ns = 0;
  double drop_probability = 0;  // fault injection: each packet on the link dropped with this p
};

// A fault the twin injects at a given virtual time of the run.
enum class FaultKind : uint8_t {
  kLinkDown,  // the link goes down at `at` (back up at `until`); routing learns `detection` later
  kDegrade,   // the link runs at `speed` from `at` (back to its own at `until`)
  kPfcStorm,  // a port sends PFC pauses on `priority` from `at` to `until`
  kLossy,     // the link drops, corrupts and reorders frames with these probabilities
};
// "link-down", "degrade", "pfc-storm", "lossy"
std::string_view fault_kind_name(FaultKind kind);

struct FabricFault {
  FaultKind kind = FaultKind::kLinkDown;
  std::string key_path;  // "fabric.faults[0]"
  // link-down, degrade, lossy: a switch port's name (either end of the cable: "leaf0/spine1",
  // "leaf0/spine1:2", "spine0/super1") or a port's (its cable to the fabric).
  std::string link;
  std::string port;  // pfc-storm: the port that sends the pauses
  uint64_t at_ns = 0;
  uint64_t until_ns = 0;  // 0: until the run ends (required for pfc-storm)
  uint64_t detection_ns = 1'000'000;
  uint64_t speed_bps = 0;
  uint8_t priority = 3;
  double drop_probability = 0;
  double corrupt_probability = 0;  // the frame arrives with a bad ICRC: the receiving NIC drops it
  double reorder_probability = 0;  // the frame leaving a switch port overtakes the one ahead of it
};

// A host NIC of fabric.infragraph, in the graph's order: the run's k-th port on the twin is its
// k-th NIC, at its link's bandwidth (checked once the run's ports are known).
struct InfraGraphNic {
  std::string name;                       // the NIC's end in the graph, "host.0.nic.0"
  std::optional<uint64_t> bandwidth_bps;  // its link's, when the graph gives one
  std::string link;                       // the link's name
  std::string edge;                       // where the graph cables it, "edges[0]"
};

struct FabricConfig {
  Topology topology = Topology::kSingleSwitch;
  uint64_t propagation_delay_ns = 1'000;  // one way, per link
  uint64_t switch_latency_ns = 500;       // forwarding delay of each switch
  // A sender's timing noise: each frame a port sends reaches its switch a uniformly drawn
  // 0 .. sender_jitter later than the wire let it out (frames keep their order), as a host's send
  // loop and kernel delay frames a lab sender puts out. 0: an ideal, exactly paced sender.
  uint64_t sender_jitter_ns = 0;
  SwitchBuffer buffer;
  EcnMarking ecn;
  PfcConfig pfc;
  Shaper shaper;  // on every switch port's egress
  LeafSpineConfig leaf_spine;
  ThreeTierConfig three_tier;
  RailsConfig rails;
  LoadBalancingConfig load_balancing;
  TrimmingConfig trimming;
  double drop_probability = 0;  // on every link
  // The twin in this many partitions of its leaves, each on a clock of its own, which threads run
  // side by side (parallel virtual time, docs/fabric-twin.md). Part of the model: results depend
  // on it, never on the threads.
  uint32_t partitions = 1;
  std::vector<FabricPortOverride> port_overrides;
  std::vector<FabricFault> faults;             // in file order
  std::vector<InfraGraphNic> infragraph_nics;  // fabric.infragraph's host NICs; none without it
  // fabric.profile: a device profile (etwire calibrate writes one), its path resolved against the
  // configuration's directory; "" for none. Its settings apply wherever the twin stands for the
  // device under test (a run on the twin, run --predict's prediction, replay), never to the ports
  // of a run on devices: a profile's port speed is the device's queue rate, not the lab's link.
  std::string profile;

  // The settings that apply to a port's link: its override, else the fabric-wide ones.
  const FabricPortOverride* override_for(std::string_view port) const;
};

}  // namespace etwire::config
