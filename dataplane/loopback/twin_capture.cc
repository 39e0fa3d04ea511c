#include "dataplane/loopback/twin_capture.h"

#include <fmt/format.h>

#include <array>
#include <stdexcept>

#include "twin/layout/configured_layout.h"

namespace etwire::dataplane {

namespace {

// The twin is driven on a virtual clock: a small ring per port is enough, since a full one makes
// the port wait for the writer rather than lose a frame, and a twin may capture at thousands of
// ports. 512 frames (as before rings were sized by bytes), and fewer where frames of a large MTU
// would take more than 4 MiB.
constexpr uint32_t kRingSlots = 512;
constexpr uint64_t kRingBytes = uint64_t{4} << 20;

// The MAC a PFC frame from this end of a twin cable carries as its source: a run port's own, or,
// since the twin's switches have no addresses, one made from the switch port's index (locally
// administered).
std::array<uint8_t, 6> pause_source(const config::RunConfig& config, twin::Endpoint endpoint) {
  if (endpoint.is_host()) {
    return endpoint.index < config.ports.size()
               ? config.ports[endpoint.index].mac.bytes
               : twin::aggregation_host_mac(endpoint.index -
                                            static_cast<uint32_t>(config.ports.size()))
                     .bytes;
  }
  const uint32_t index = endpoint.index;
  return {0x02,
          0x00,
          0x5e,
          static_cast<uint8_t>(index >> 16),
          static_cast<uint8_t>(index >> 8),
          static_cast<uint8_t>(index)};
}

}  // namespace

TwinCapture::TwinCapture(const config::RunConfig& config, const twin::FabricLayout& layout,
                         const AttachTap& attach)
    : config_(config),
      payload_(config.transport.pmtu, config.transport.pmtu),
      frames_(config, kRingBytes, kRingSlots) {
  // The run's ports; an aggregation host's frames are those at the ports of the members.
  for (uint32_t port = 0; port < config.ports.size(); ++port) {
    add_point(layout, attach, {twin::Endpoint::Kind::kHost, port}, frames_.add_ring(port));
  }
  for (const config::CapturedSwitchPort& wanted : config.telemetry.capture.switch_ports) {
    uint32_t index = 0;
    while (index < layout.switch_ports() && layout.switch_port(index).name != wanted.name) ++index;
    if (index == layout.switch_ports()) {
      throw std::invalid_argument(fmt::format("{}: {}: no switch port \"{}\" on the fabric twin",
                                              config.source_file, wanted.key_path, wanted.name));
    }
    add_point(layout, attach, {twin::Endpoint::Kind::kSwitchPort, index},
              frames_.add_switch_port(wanted.name));
  }
}

TwinCapture::~TwinCapture() = default;

void TwinCapture::add_point(const twin::FabricLayout& layout, const AttachTap& attach,
                            twin::Endpoint endpoint, nic::capture::FrameCaptureRing& ring) {
  const twin::Endpoint peer = endpoint.is_host()
                                  ? twin::Endpoint{twin::Endpoint::Kind::kSwitchPort,
                                                   layout.host_switch_port(endpoint.index)}
                                  : layout.switch_port(endpoint.index).peer;
  points_.push_back(std::make_unique<TwinCapturePoint>(directory_, payload_, ring, frames_.writer(),
                                                       pause_source(config_, endpoint),
                                                       pause_source(config_, peer)));
  attach(endpoint, points_.back().get());
}

void TwinCapture::add_connection(const WireConnection& connection) {
  directory_.add(connections_++, wire_route(connection, config_));
}

void TwinCapture::begin(const std::string& dir, clock::Nanos clock_now) {
  frames_.open(dir);
  frames_.begin(clock_now);
}

void TwinCapture::stop() {
  frames_.stop();
}

std::vector<std::string> TwinCapture::notes() const {
  std::vector<std::string> notes = frames_.notes();
  uint64_t unaddressed = 0;
  for (const auto& point : points_) unaddressed += point->unaddressed();
  if (unaddressed > 0) {
    notes.push_back(
        fmt::format("capture: {} packets of no known connection were not captured", unaddressed));
  }
  return notes;
}

}  // namespace etwire::dataplane
