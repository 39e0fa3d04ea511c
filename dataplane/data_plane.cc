#include "dataplane/data_plane.h"

#include "nic/port_frame_format.h"

namespace etwire::dataplane {

double goodput_bytes_per_second(const config::RunConfig& config, size_t port) {
  const double payload = config.transport.pmtu;
  const double overhead = nic::data_packet_overhead(nic::frame_format(config, config.ports[port]));
  return payload / (payload + overhead) * static_cast<double>(config.ports[port].speed_bps) / 8.0;
}

}  // namespace etwire::dataplane
