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

// Stream numbers of the seeded PRNGs: one per link for fault drops, one per switch port for ECN,
// one per host link for sender jitter.
constexpr uint64_t kFaultStreams = uint64_t{1} << 40;
constexpr uint64_t kEcnStreams = uint64_t{2} << 40;
constexpr uint64_t kJitterStreams = uint64_t{3} << 40;

void check_probability(double probability) {
  if (!(probability >= 0 && probability <= 1)) {
    throw std::invalid_argument("fabric twin: drop probability must be between 0 and 1 (got " +
                                std::to_string(probability) + ")");
  }
}

}  // namespace

FabricTwin::FabricTwin(const config::FabricConfig& config, std::span<const TwinPortSpec> ports,
                       clock::Scheduler& scheduler, uint64_t seed)
    : FabricTwin(config, FabricLayout(check_fabric_settings(config), ports), scheduler, seed,
                 nullptr, 0) {}

FabricTwin::FabricTwin(const config::FabricConfig& config, std::span<const TwinPortSpec> ports,
                       clock::Scheduler& scheduler, uint64_t seed,
                       const TwinPartitioning& partitioning, uint32_t partition)
    : FabricTwin(config, FabricLayout(check_fabric_settings(config), ports), scheduler, seed,
                 &partitioning, partition) {}

FabricTwin::FabricTwin(const config::FabricConfig& config, const FabricLayout& layout,
                       clock::Scheduler& scheduler, uint64_t seed)
    : FabricTwin(check_fabric_settings(config), FabricLayout(layout), scheduler, seed, nullptr, 0) {
}

FabricTwin::FabricTwin(const config::FabricConfig& config, const FabricLayout& layout,
                       clock::Scheduler& scheduler, uint64_t seed,
                       const TwinPartitioning& partitioning, uint32_t partition)
    : FabricTwin(check_fabric_settings(config), FabricLayout(layout), scheduler, seed,
                 &partitioning, partition) {}

FabricTwin::FabricTwin(const config::FabricConfig& config, FabricLayout layout,
                       clock::Scheduler& scheduler, uint64_t seed,
                       const TwinPartitioning* partitioning, uint32_t partition)
    : scheduler_(scheduler),
      start_(scheduler.now()),
      layout_(std::move(layout)),
      pfc_frame_bytes_(nic::pfc_frame(0, 0, 0, 0).wire_bytes),
      per_port_buffer_(config.buffer.mode == config::BufferMode::kPerPort),
      queue_packet_limit_(config.buffer.queue_packets) {
  const auto switch_latency = static_cast<clock::Nanos>(config.switch_latency_ns);

  links_.resize(2 * layout_.cables());
  for (uint32_t cable = 0; cable < layout_.cables(); ++cable) {
    const CableInfo& info = layout_.cable(cable);
    const Endpoint ends[2][2] = {{info.lower, info.upper}, {info.upper, info.lower}};
    for (uint32_t direction = 0; direction < 2; ++direction) {
      const uint32_t id = 2 * cable + direction;
      Link& link = links_[id];
      link.wire = clock::LineRateTimer(info.speed_bps);
      link.from = ends[direction][0];
      link.to = ends[direction][1];
      link.propagation_ns = static_cast<clock::Nanos>(info.propagation_ns);
      link.frame_delay_ns = link.propagation_ns + (link.to.is_host() ? 0 : switch_latency);
      link.drop_probability = info.drop_probability;
      link.fault_rng = SplitMix64::for_stream(seed, kFaultStreams + id);
      if (link.from.is_host()) {
        link.jitter_ns = static_cast<clock::Nanos>(config.sender_jitter_ns);
        link.jitter_rng = SplitMix64::for_stream(seed, kJitterStreams + id);
      }
    }
  }

  hosts_.reserve(layout_.hosts());
  for (uint32_t host = 0; host < layout_.hosts(); ++host) {
    const uint32_t cable = layout_.switch_port(layout_.host_switch_port(host)).cable;
    hosts_.push_back(Host{
        LoopbackPort(*this, host, layout_.cable(cable).speed_bps), {}, 2 * cable, 2 * cable + 1});
  }

  switch_ports_.reserve(layout_.switch_ports());
  for (uint32_t index = 0; index < layout_.switch_ports(); ++index) {
    const SwitchPortInfo& info = layout_.switch_port(index);
    const CableInfo& cable = layout_.cable(info.cable);
    const bool upper_end = cable.upper == Endpoint{Endpoint::Kind::kSwitchPort, index};
    SwitchPort port{EgressPort(start_),
                    PfcIngress(cable.pfc),
                    RedMarker(cable.ecn, cable.speed_bps),
                    SplitMix64::for_stream(seed, kEcnStreams + index),
                    {},
                    info.switch_index,
                    upper_end ? 2 * info.cable : 2 * info.cable + 1,
                    upper_end ? 2 * info.cable + 1 : 2 * info.cable,
                    // Re-send a pause at half its lifetime: early enough that the partner never
                    // resumes in between, even with a frame of delay on the way.
                    pause_duration(0xFFFF, cable.speed_bps) / 2};
    switch_ports_.push_back(std::move(port));
  }

  if (auto problem = buffer_problem(config.buffer, layout_)) throw SetupError(std::move(*problem));
  buffers_.reserve(layout_.switches());
  for (size_t index = 0; index < layout_.switches(); ++index) {
    const SwitchInfo& info = layout_.switch_info(index);
    buffers_.emplace_back(config.buffer, info.first_port, info.ports);
  }
  partition_ = partition;
  if (partitioning != nullptr) cut(*partitioning);
  schedule_faults(config);
}

void FabricTwin::cut(const TwinPartitioning& partitioning) {
  if (partitioning.of_host.size() != hosts_.size() ||
      partitioning.of_switch.size() != layout_.switches() || partition_ >= partitioning.count ||
      partitioning.count >= kNoCrossing) {
    throw std::invalid_argument("fabric twin: the partitioning is not of this fabric");
  }
  host_partition_ = partitioning.of_host;
  crossings_out_.resize(partitioning.count);
  for (Link& link : links_) {
    const uint32_t far = partition_of(layout_, partitioning, link.to);
    if (partition_of(layout_, partitioning, link.from) == partition_ && far != partition_) {
      link.crosses_to = static_cast<uint16_t>(far);
    }
  }
}

void FabricTwin::accept_crossings(std::span<const Crossing> crossings) {
  for (const Crossing& crossing : crossings) {
    if (crossing.arrives_at < scheduler_.now()) {
      throw std::logic_error("fabric twin: a frame crossed into a partition after its arrival");
    }
    if (crossing.pfc) {
      scheduler_.run_at(
          crossing.arrives_at, this,
          twin_tag::make(TwinEvent::kPauseArrival,
                         twin_tag::pause_frame(crossing.link, crossing.packet.pfc_priority,
                                               crossing.packet.pfc_quanta)));
      continue;
    }
    // As launch() does for a frame sent here: one arrival event per link, for its oldest frame.
    Link& link = links_[crossing.link];
    const bool first_in_flight = link.in_flight.empty();
    link.in_flight.push_back(InFlightPacket{pool_.acquire(crossing.packet), crossing.arrives_at});
    if (first_in_flight) {
      scheduler_.run_at(crossing.arrives_at, this,
                        twin_tag::make(TwinEvent::kFrameArrival, crossing.link));
    }
  }
}

QueueSample FabricTwin::queue(size_t switch_port, uint8_t priority) const {
  if (priority >= kPriorities) {
    throw std::out_of_range("fabric twin: priority " + std::to_string(priority) + " is not 0..7");
  }
  const SwitchPort& port = switch_ports_.at(switch_port);
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
  sample.ecn_marked = stats.ecn_marked;
  sample.paused = port.egress.paused(priority, now);
  return sample;
}

clock::Nanos FabricTwin::pause_duration(uint16_t quanta, uint64_t rate_bps) const {
  // One quantum is 512 bit times, the time of 64 bytes at the link's rate (spec 3.6).
  return clock::LineRateTimer::duration(uint64_t{quanta} * 64, rate_bps);
}

void FabricTwin::check_cable(size_t cable) const {
  if (cable >= layout_.cables()) {
    throw std::invalid_argument("fabric twin: no cable " + std::to_string(cable) +
                                " (the fabric has " + std::to_string(layout_.cables()) + ")");
  }
}

void FabricTwin::set_frame_tap(Endpoint endpoint, FrameTap* tap) {
  const size_t count = endpoint.is_host() ? hosts_.size() : switch_ports_.size();
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
  links_[2 * cable].drop_probability = probability;
  links_[2 * cable + 1].drop_probability = probability;
}

void FabricTwin::set_cable_up(size_t cable, bool up) {
  check_cable(cable);
  links_[2 * cable].up = up;
  links_[2 * cable + 1].up = up;
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
  if (host >= hosts_.size()) {
    throw std::invalid_argument("fabric twin: PFC storm from port " + std::to_string(host) +
                                ", but the fabric has " + std::to_string(hosts_.size()) + " ports");
  }
  if (priority >= kPriorities) {
    throw std::invalid_argument("fabric twin: PFC storm on priority " + std::to_string(priority) +
                                ", which is not an 802.1p class (0..7)");
  }
  storms_.push_back(PfcStorm{static_cast<uint32_t>(host), priority, until});
  if (!owns_host(host)) return;  // its partition storms
  scheduler_.run_at(from, this, twin_tag::make(TwinEvent::kStormTick, storms_.size() - 1));
}

void FabricTwin::on_event(uint64_t tag, clock::Nanos now) {
  const uint64_t payload = twin_tag::payload(tag);
  switch (twin_tag::kind(tag)) {
    case TwinEvent::kFrameArrival:
      frame_arrives(static_cast<uint32_t>(payload), now);
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
      layout_.set_cable_known_down(static_cast<uint32_t>(payload), (payload >> 32) == 0);
      return;
  }
}

}  // namespace etwire::twin
