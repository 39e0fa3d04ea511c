// Building the twin, its public queries and the fault hooks. The per-packet path is in
// twin_data_path.cc, PFC in twin_pfc.cc.
#include "twin/fabric/fabric_twin.h"

#include <utility>

#include <stdexcept>
#include <string>

#include "nic/pfc_frame.h"
#include "twin/fabric/setup_problems.h"
#include "twin/fabric/twin_event.h"
#include "twin/layout/setup_checks.h"

namespace etwire::twin {

namespace {

void check_probability(double probability) {
  if (!(probability >= 0 && probability <= 1)) {
    throw std::invalid_argument("fabric twin: drop probability must be between 0 and 1 (got " +
                                std::to_string(probability) + ")");
  }
}

}  // namespace

FabricTwin::FabricTwin(const config::FabricConfig& config, std::span<const TwinPortSpec> ports,
                       clock::Scheduler& scheduler, uint64_t seed)
    : FabricTwin(config, std::make_shared<FabricLayout>(check_fabric_settings(config), ports),
                 nullptr, scheduler, seed, nullptr, 0) {}

FabricTwin::FabricTwin(const config::FabricConfig& config, std::span<const TwinPortSpec> ports,
                       clock::Scheduler& scheduler, uint64_t seed,
                       const TwinPartitioning& partitioning, uint32_t partition)
    : FabricTwin(config, std::make_shared<FabricLayout>(check_fabric_settings(config), ports),
                 nullptr, scheduler, seed, &partitioning, partition) {}

FabricTwin::FabricTwin(const config::FabricConfig& config, const FabricLayout& layout,
                       clock::Scheduler& scheduler, uint64_t seed)
    : FabricTwin(check_fabric_settings(config), std::make_shared<FabricLayout>(layout), nullptr,
                 scheduler, seed, nullptr, 0) {}

FabricTwin::FabricTwin(const config::FabricConfig& config,
                       std::shared_ptr<const FabricLayout> layout, clock::Scheduler& scheduler,
                       uint64_t seed, const TwinPartitioning& partitioning, uint32_t partition)
    : FabricTwin(check_fabric_settings(config), nullptr, std::move(layout), scheduler, seed,
                 &partitioning, partition) {}

FabricTwin::FabricTwin(const config::FabricConfig& config, std::shared_ptr<FabricLayout> own,
                       std::shared_ptr<const FabricLayout> shared, clock::Scheduler& scheduler,
                       uint64_t seed, const TwinPartitioning* partitioning, uint32_t partition)
    : scheduler_(scheduler),
      start_(scheduler.now()),
      layout_(own ? own : std::move(shared)),
      own_layout_(std::move(own)),
      pfc_frame_bytes_(nic::pfc_frame(0, 0, 0, 0).wire_bytes),
      per_port_buffer_(config.buffer.mode != config::BufferMode::kShared),
      queue_packet_limit_(config.buffer.queue_packets),
      trimming_(config.trimming),
      partition_(partition) {
  if (auto problem = buffer_problem(config.buffer, *layout_)) throw SetupError(std::move(*problem));
  hold(partitioning);
  build_links(config, seed);
  build_switches(seed, config.buffer, config.load_balancing);
  schedule_faults(config);
}

void FabricTwin::accept_crossings(std::span<const Crossing> crossings) {
  for (const Crossing& crossing : crossings) {
    if (crossing.arrives_at < scheduler_.now()) {
      throw std::logic_error("fabric twin: a frame crossed into a partition after its arrival");
    }
    const uint32_t slot = crossing.link < link_slot_.size() ? link_slot_[crossing.link] : kNotHeld;
    // A link into this partition is one whose far end it keeps.
    if (slot == kNotHeld || links_[slot].to_slot == kNotHeld) {
      throw std::logic_error("fabric twin: a frame crossed into a partition on a link not into it");
    }
    if (crossing.pfc) {
      scheduler_.run_at(crossing.arrives_at, this,
                        twin_tag::make(TwinEvent::kPauseArrival,
                                       twin_tag::pause_frame(slot, crossing.packet.pfc_priority,
                                                             crossing.packet.pfc_quanta)));
      continue;
    }
    // As launch() does for a frame sent here: one arrival event per link, for its oldest frame.
    Link& link = links_[slot];
    const bool first_in_flight = link.in_flight.empty();
    const uint32_t packet_slot = pool_.acquire(crossing.packet);
    link.in_flight.push_back(InFlightPacket{packet_slot, crossing.arrives_at});
    if (first_in_flight) {
      scheduler_.run_at(
          crossing.arrives_at, this,
          twin_tag::make(TwinEvent::kFrameArrival, twin_tag::frame_arrival(slot, packet_slot)));
    }
  }
}

QueueSample FabricTwin::queue(size_t switch_port, uint8_t priority) const {
  if (priority >= kPriorities) {
    throw std::out_of_range("fabric twin: priority " + std::to_string(priority) + " is not 0..7");
  }
  const SwitchPort& port = switch_ports_[owned_slot(port_slot_, switch_port, "switch port")];
  const EgressQueueStats& stats = port.egress.stats(priority);
  const clock::Nanos now = scheduler_.now();
  QueueSample sample;
  sample.switch_port = static_cast<uint32_t>(switch_port);
  sample.priority = priority;
  sample.depth_bytes = stats.depth.bytes();
  sample.depth_packets = stats.depth.packets();
  sample.max_depth_bytes = stats.depth.max_bytes();
  sample.average_depth_bytes = stats.depth.average_bytes(now);
  sample.enqueued_packets = stats.enqueued_packets;
  sample.drops = stats.drops;
  sample.trimmed = stats.trimmed;
  sample.ecn_marked = stats.ecn_marked;
  sample.paused = port.egress.paused(priority, now);
  return sample;
}

clock::Nanos FabricTwin::pause_duration(uint16_t quanta, uint64_t rate_bps) const {
  // One quantum is 512 bit times, the time of 64 bytes at the link's rate (spec 3.6).
  return clock::LineRateTimer::duration(uint64_t{quanta} * 64, rate_bps);
}

void FabricTwin::check_cable(size_t cable) const {
  if (cable >= layout_->cables()) {
    throw std::invalid_argument("fabric twin: no cable " + std::to_string(cable) +
                                " (the fabric has " + std::to_string(layout_->cables()) + ")");
  }
}

void FabricTwin::set_frame_tap(Endpoint endpoint, FrameTap* tap) {
  const size_t count = endpoint.is_host() ? layout_->hosts() : layout_->switch_ports();
  if (endpoint.index >= count) {
    throw std::out_of_range("fabric twin: no " +
                            std::string(endpoint.is_host() ? "host " : "switch port ") +
                            std::to_string(endpoint.index));
  }
  for (Link& link : links_) {
    if (link.from == endpoint) link.sender_tap = tap;
    if (link.to == endpoint) link.receiver_tap = tap;
  }
}

void FabricTwin::set_drop_probability(size_t cable, double probability) {
  check_cable(cable);
  check_probability(probability);
  for_cable_links(cable, [&](Link& link) { link.drop_probability = probability; });
}

void FabricTwin::set_cable_up(size_t cable, bool up) {
  check_cable(cable);
  for_cable_links(cable, [&](Link& link) { link.up = up; });
}

void FabricTwin::schedule_cable_state(size_t cable, bool up, clock::Nanos at) {
  check_cable(cable);
  scheduler_.run_at(at, this, twin_tag::make(TwinEvent::kCableState, (uint64_t{up} << 32) | cable));
}

void FabricTwin::schedule_link_fault(size_t cable, bool up, clock::Nanos at,
                                     clock::Nanos detection) {
  schedule_cable_state(cable, up, at);
  scheduler_.run_at(at + detection, this,
                    twin_tag::make(TwinEvent::kRouteState, (uint64_t{up} << 32) | cable));
}

void FabricTwin::start_pfc_storm(size_t host, uint8_t priority, clock::Nanos from,
                                 clock::Nanos until) {
  if (host >= layout_->hosts()) {
    throw std::invalid_argument("fabric twin: PFC storm from port " + std::to_string(host) +
                                ", but the fabric has " + std::to_string(layout_->hosts()) +
                                " ports");
  }
  if (priority >= kPriorities) {
    throw std::invalid_argument("fabric twin: PFC storm on priority " + std::to_string(priority) +
                                ", which is not an 802.1p class (0..7)");
  }
  storms_.push_back(PfcStorm{static_cast<uint32_t>(host), priority, until});
  if (!owns_host(host)) return;  // its partition storms
  scheduler_.run_at(from, this, twin_tag::make(TwinEvent::kStormTick, storms_.size() - 1));
}

void FabricTwin::learn_cable_state(uint32_t cable, bool down) {
  if (!own_layout_) {
    own_layout_ = std::make_shared<FabricLayout>(*layout_);
    layout_ = own_layout_;
  }
  own_layout_->set_cable_known_down(cable, down);
}

void FabricTwin::prefetch(uint64_t tag) const {
  const uint64_t payload = twin_tag::payload(tag);
  switch (twin_tag::kind(tag)) {
    case TwinEvent::kFrameArrival: {
      const auto* link = reinterpret_cast<const char*>(&links_[twin_tag::link_of_arrival(payload)]);
      for (size_t line = 0; line < sizeof(Link); line += 64) __builtin_prefetch(link + line);
      const uint32_t hint = twin_tag::slot_hint_of_arrival(payload);
      if (hint != 0 && pool_.holds(hint - 1)) __builtin_prefetch(&pool_[hint - 1]);
      return;
    }
    case TwinEvent::kEgressWake: {
      const SwitchPort& port = switch_ports_[twin_tag::index_of(payload)];
      __builtin_prefetch(&port.egress);
      port.egress.prefetch_choice();
      __builtin_prefetch(&port.out_link);
      return;
    }
    default:
      return;
  }
}

void FabricTwin::on_event(uint64_t tag, clock::Nanos now) {
  const uint64_t payload = twin_tag::payload(tag);
  switch (twin_tag::kind(tag)) {
    case TwinEvent::kFrameArrival:
      frame_arrives(twin_tag::link_of_arrival(payload), now);
      return;
    case TwinEvent::kEgressWake: {
      const uint32_t index = twin_tag::index_of(payload);
      EgressPort& egress = switch_ports_[index].egress;
      // A wake re-armed earlier since this one was scheduled supersedes it.
      if (twin_tag::generation_of(payload) !=
          (egress.wake_generation & twin_tag::kGenerationMask)) {
        return;
      }
      egress.wake_at = clock::kNever;
      try_start(index, now);
      return;
    }
    case TwinEvent::kPauseArrival:
      pfc_frame_arrives(payload, now);
      return;
    case TwinEvent::kPauseRefresh:
      refresh_pause(payload, now);
      return;
    case TwinEvent::kStormTick:
      storm_tick(static_cast<uint32_t>(payload), now);
      return;
    case TwinEvent::kCableState:
      set_cable_up(static_cast<uint32_t>(payload), (payload >> 32) != 0);
      return;
    case TwinEvent::kFault:
      apply_fault(static_cast<uint32_t>(payload >> 1), (payload & 1) != 0);
      return;
    case TwinEvent::kRouteState:
      learn_cable_state(static_cast<uint32_t>(payload), (payload >> 32) == 0);
      return;
  }
}

}  // namespace etwire::twin
