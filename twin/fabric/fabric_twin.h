// The fabric twin: a discrete-event model of the network the loopback NIC ports are cabled to,
// on a clock::Scheduler (a VirtualClock in practice). Port i is host i; Packet::dst_port and
// src_port are these indexes. Links serialize at their rate and add their propagation delay;
// switches are store-and-forward with a fixed forwarding latency, strict-priority egress queues,
// a shared or per-port buffer with tail drop, RED/ECN marking and PFC. Fault hooks drop packets,
// take links down and make a NIC port flood PFC pauses. Everything random draws from PRNG streams
// derived from one seed: the same inputs and seed give the same run. docs/fabric-twin.md
// describes the model and its simplifications.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "clock/scheduler.h"
#include "config/fabric_config.h"
#include "twin/fabric/loopback_port.h"
#include "twin/layout/fabric_layout.h"
#include "twin/layout/twin_partition.h"
#include "twin/link.h"
#include "twin/packet_pool.h"
#include "twin/prng.h"
#include "twin/queue_sample.h"
#include "twin/switch/egress_port.h"
#include "twin/switch/load_balancer.h"
#include "twin/switch/pfc_ingress.h"
#include "twin/switch/red_marker.h"
#include "twin/switch/switch_buffer.h"
#include "twin/switch/token_bucket.h"
#include "twin/wire_counters.h"

namespace etwire::twin {

class FabricTwin final : private clock::EventHandler {
 public:
  // Throws std::invalid_argument for a setup that cannot be modelled. The scheduler's pending
  // events point at the twin: do not run the scheduler after the twin is destroyed.
  FabricTwin(const config::FabricConfig& config, std::span<const TwinPortSpec> ports,
             clock::Scheduler& scheduler, uint64_t seed);
  // Partition `partition` of the twin cut by `partitioning` (twin_partition.h), on a scheduler of
  // its own: it reads the whole layout, but holds only the hosts and switches it owns and the
  // links that touch them, and acts only at those. A frame it sends on a cable into another
  // partition goes to crossings_to(that partition) instead of the wire's far end, which the other
  // partition's accept_crossings() takes it up at; the configured faults act in every partition
  // on its own copy of the links, storms only at the owner's host.
  FabricTwin(const config::FabricConfig& config, std::span<const TwinPortSpec> ports,
             clock::Scheduler& scheduler, uint64_t seed, const TwinPartitioning& partitioning,
             uint32_t partition);
  // The same two on a layout laid out already from `config` and the ports (the plan's,
  // RunPlan::twin): the whole twin keeps a copy instead of laying it out again; partitions share
  // one (the layout changes only when routing learns of a dead link, and a partition then
  // reroutes on a copy of its own).
  FabricTwin(const config::FabricConfig& config, const FabricLayout& layout,
             clock::Scheduler& scheduler, uint64_t seed);
  FabricTwin(const config::FabricConfig& config, std::shared_ptr<const FabricLayout> layout,
             clock::Scheduler& scheduler, uint64_t seed, const TwinPartitioning& partitioning,
             uint32_t partition);
  FabricTwin(const FabricTwin&) = delete;
  FabricTwin& operator=(const FabricTwin&) = delete;
  ~FabricTwin() = default;

  size_t ports() const { return layout_->hosts(); }
  // The loopback NIC of host `host`; std::out_of_range when another partition owns it.
  LoopbackPort& port(size_t host) { return hosts_[owned_slot(host_slot_, host, "host")].port; }
  // The whole twin's layout is one object for its life; a partition's is shared with the other
  // partitions, and replaced by a copy of its own when it first reroutes.
  const FabricLayout& layout() const { return *layout_; }

  // Counters of a host's NIC side and of a switch port (global index), as this twin counted
  // them: a partition counts at its own ports, and at another's the frames lost on a cable into
  // it that went down under them; all zero where it counted nothing.
  const WireCounters& host_counters(size_t host) const;
  const WireCounters& switch_port_counters(size_t switch_port) const;
  // A switch port's egress queue (global index); std::out_of_range when another partition owns
  // the port.
  QueueSample queue(size_t switch_port, uint8_t priority) const;
  // Calls visit(const QueueSample&) for every switch egress queue this twin owns, ports in index
  // order, priorities 0..7 within a port: the poll for telemetry.
  template <typename Visitor>
  void for_each_queue(Visitor&& visit) const {
    for (const SwitchPort& port : switch_ports_) {
      for (uint8_t priority = 0; priority < kPriorities; ++priority) {
        visit(queue(port.global_index, priority));
      }
    }
  }
  // Shows `tap` every frame the port `endpoint` (a host, or a switch port by global index) sends
  // and receives from now on; nullptr stops it. The tap must outlive the twin or be removed.
  void set_frame_tap(Endpoint endpoint, FrameTap* tap);

  // What this twin holds: its own hosts and switch ports (every one unpartitioned) and the links
  // with an end at one of them.
  struct Held {
    size_t hosts = 0;
    size_t switch_ports = 0;
    size_t links = 0;
  };
  Held held() const { return {hosts_.size(), switch_ports_.size(), links_.size()}; }

  // Packets on a wire or in a switch queue right now (of this partition, crossings not included).
  size_t packets_in_fabric() const { return pool_.live(); }

  // Partitions: whether this twin acts at host `host` (always, unpartitioned); the frames sent
  // into partition `partition` since it last took them (it clears the list); taking up frames
  // other partitions sent into this one, all arriving no sooner than the scheduler's now.
  bool owns_host(size_t host) const {
    return partitioning_.of_host.empty() || partitioning_.of_host[host] == partition_;
  }
  std::vector<Crossing>& crossings_to(uint32_t partition) { return crossings_out_.at(partition); }
  void accept_crossings(std::span<const Crossing> crossings);

  // Fault hooks. Cables are the layout's (host_cable(h) == h, uplink_cable(leaf, spine)); each
  // hook applies to both directions of the cable.
  void set_drop_probability(size_t cable, double probability);
  void set_cable_up(size_t cable, bool up);
  // Takes the cable down (or up) at `at`.
  void schedule_cable_state(size_t cable, bool up, clock::Nanos at);
  // The same, and the fabric's routing learns of it `detection` later (FabricLayout::
  // set_cable_known_down): until then traffic hashed onto a cable gone down is lost, and a cable
  // back up stays unused.
  void schedule_link_fault(size_t cable, bool up, clock::Nanos at, clock::Nanos detection);
  // Host `host` sends PFC pauses (quanta 0xFFFF) on `priority` from `from` until `until`, each
  // before the previous would expire, as a NIC with a stuck receive path does. The last pause
  // runs out its time after `until`.
  void start_pfc_storm(size_t host, uint8_t priority, clock::Nanos from, clock::Nanos until);
  // What each fault of the configuration (fabric.faults, scheduled when the twin is built) did so
  // far, a line each: when it acted and what it cost, from the counters of its link or port.
  std::vector<std::string> fault_report() const;
  // The same from counters kept elsewhere (a partitioned twin's sums over its partitions).
  std::vector<std::string> fault_report(
      const std::function<WireCounters(const Endpoint&)>& counters_at) const;

 private:
  friend class LoopbackPort;

  // `config` checked (check_fabric_settings) and a layout laid out from it: `own`, the twin's
  // alone, which it reroutes on in place (layout() stays the same object), or else `shared` with
  // other partitions, copied when it first reroutes.
  FabricTwin(const config::FabricConfig& config, std::shared_ptr<FabricLayout> own,
             std::shared_ptr<const FabricLayout> shared, clock::Scheduler& scheduler, uint64_t seed,
             const TwinPartitioning* partitioning, uint32_t partition);
  // Routing learns that a cable went down or came back: on this twin's own copy of the layout.
  void learn_cable_state(uint32_t cable, bool down);
  // What this twin holds (all of it unpartitioned): the links, hosts and switch ports, and
  // where it keeps each (twin_holdings.cc).
  void hold(const TwinPartitioning* partitioning);
  bool owns(const Endpoint& end) const;
  void build_links(const config::FabricConfig& config, uint64_t seed);
  void build_switches(uint64_t seed, const config::SwitchBuffer& buffer,
                      const config::LoadBalancingConfig& load_balancing);

  // A slot of host_slot_ or port_slot_: the index among hosts_ or switch_ports_; with kForeign,
  // the index in foreign_counters_ (another partition's port at the far end of a cable into
  // this one); kNotHeld: neither.
  static constexpr uint32_t kNotHeld = UINT32_MAX;
  static constexpr uint32_t kForeign = 1u << 31;
  // The slot of an owned host or switch port by global index; std::out_of_range otherwise.
  uint32_t owned_slot(const std::vector<uint32_t>& slots, size_t index, const char* what) const;

  struct Host {
    LoopbackPort port;
    WireCounters counters;
    uint32_t out_link = 0;
  };

  struct SwitchPort {
    uint32_t global_index = 0;
    uint32_t buffer = 0;  // the switch's, in buffers_ and balancers_
    EgressPort egress;
    PfcIngress pfc;
    RedMarker red;
    SplitMix64 ecn_rng;
    WireCounters counters;
    uint32_t switch_index = 0;
    uint32_t out_link = 0;
    clock::Nanos pause_refresh_ns = 0;  // how long before re-sending a pause still needed
    std::array<RedMarker::Average, kPriorities> red_average{};  // when `red` averages or spreads
  };

  struct PfcStorm {
    uint32_t host = 0;
    uint8_t priority = 0;
    clock::Nanos until = 0;
  };

  void on_event(uint64_t tag, clock::Nanos now) override;
  void prefetch(uint64_t tag) const override;

  // Data path. Hosts, switch ports and links are named by where this twin keeps them (their
  // slots), packets in the pool by theirs.
  void transmit_from_host(uint32_t host_slot, const nic::Packet& packet, clock::Nanos now);
  void launch(uint32_t link, uint32_t slot, uint32_t bytes, clock::Nanos now, WireCounters& sender);
  void frame_arrives(uint32_t link, clock::Nanos now);
  void deliver_to_host(uint32_t host_slot, uint32_t slot, clock::Nanos now);
  void arrive_at_switch(uint32_t switch_port, uint32_t slot, clock::Nanos now);
  // A packet the egress queue had no room for: cut to its headers when trimming, else dropped.
  void trim_or_drop(uint32_t egress_index, uint32_t slot, clock::Nanos now);
  void try_start(uint32_t switch_port, clock::Nanos now);
  // RED on an ECN-capable packet of a port's queue; a marked packet becomes CE and is counted.
  // `joining`: the packet is joining the queue at `now` (else leaving it).
  void mark_if_congested(SwitchPort& port, uint8_t priority, nic::Packet& packet, bool joining,
                         clock::Nanos now);
  void wake_at(uint32_t switch_port, clock::Nanos at);

  // PFC.
  void send_pfc_frame(uint32_t link, uint8_t priority, uint16_t quanta, clock::Nanos now,
                      WireCounters& sender);
  void pfc_frame_arrives(uint64_t payload, clock::Nanos now);
  void owe_pfc_frame(uint32_t switch_port, uint8_t priority, uint16_t quanta, clock::Nanos now);
  void refresh_pause(uint64_t payload, clock::Nanos now);
  void storm_tick(uint32_t storm, clock::Nanos now);

  // Faults of the configuration (twin_faults.cc). A degrade or lossy fault starts and ends by a
  // kFault event (its index, and whether it ends); link-down and storms use the hooks above.
  void schedule_faults(const config::FabricConfig& config);
  void apply_fault(uint32_t index, bool ends);
  std::vector<config::FabricFault> faults_;
  std::vector<uint32_t> fault_targets_;  // per fault: its cable, or its host for a storm
  clock::Nanos pause_duration(uint16_t quanta, uint64_t rate_bps) const;

  // The counters of a held endpoint (owned or foreign).
  WireCounters& counters_of(Endpoint endpoint) {
    const uint32_t slot = (endpoint.is_host() ? host_slot_ : port_slot_)[endpoint.index];
    if ((slot & kForeign) != 0) return foreign_counters_[slot & ~kForeign];
    return endpoint.is_host() ? hosts_[slot].counters : switch_ports_[slot].counters;
  }
  void check_cable(size_t cable) const;
  // Calls visit(Link&) for each direction of a cable this twin holds (none, or both).
  template <typename Visit>
  void for_cable_links(size_t cable, Visit&& visit) {
    for (const size_t id : {2 * cable, 2 * cable + 1}) {
      if (link_slot_[id] != kNotHeld) visit(links_[link_slot_[id]]);
    }
  }

  clock::Scheduler& scheduler_;
  clock::Nanos start_;
  // The twin's own layout (own_layout_), or one shared with the other partitions until this
  // twin reroutes on a copy of its own.
  std::shared_ptr<const FabricLayout> layout_;
  std::shared_ptr<FabricLayout> own_layout_;
  uint32_t pfc_frame_bytes_;  // wire bytes of a PFC frame
  // Shares by port (per-port and dynamic buffers): lossless traffic then goes into its ingress
  // port's share, which PFC bounds.
  bool per_port_buffer_;
  uint32_t queue_packet_limit_;  // fabric.buffer.queue_packets; 0: none
  config::TrimmingConfig trimming_;
  PacketPool pool_;
  // What this twin holds, in the order of the fabric's indexes; events name them by where they
  // are kept here, crossings by the fabric's index.
  std::vector<Link> links_;
  std::vector<Host> hosts_;
  std::vector<SwitchPort> switch_ports_;
  std::vector<SwitchBuffer> buffers_;    // one per switch held
  std::vector<LoadBalancer> balancers_;  // one per switch held
  bool balancing_ = false;               // some switch held is not in ECMP mode
  // fabric.shaper: the bucket of each switch port held (by slot), when any port is shaped; kept
  // apart from the ports, whose data path then pays one test of shaping_ per frame.
  std::vector<TokenBucket> shapers_;
  bool shaping_ = false;
  std::vector<uint32_t> link_slot_;    // by global link: index in links_, or kNotHeld
  std::vector<uint32_t> link_global_;  // by index in links_: the global link
  std::vector<uint32_t> host_slot_;    // by global host (see kForeign)
  std::vector<uint32_t> port_slot_;    // by global switch port (see kForeign)
  std::vector<WireCounters> foreign_counters_;
  std::vector<PfcStorm> storms_;
  uint32_t partition_ = 0;
  TwinPartitioning partitioning_;                     // its vectors empty when unpartitioned
  std::vector<std::vector<Crossing>> crossings_out_;  // by destination partition
};

}  // namespace etwire::twin
