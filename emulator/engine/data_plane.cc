#include "emulator/engine/data_plane.h"

#include "control/traffic_plan.h"

namespace etwire::engine {

double goodput_bytes_per_second(const control::RunConfig& config, size_t port) {
  const double payload = config.transport.pmtu;
  const double overhead = control::per_packet_overhead(config, config.ports[port]);
  return payload / (payload + overhead) * static_cast<double>(config.ports[port].speed_bps) / 8.0;
}

}  // namespace etwire::engine
