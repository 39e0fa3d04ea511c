// The transport on loopback NIC ports wired to the fabric twin, on a virtual clock: the data
// plane as CI runs it.
#pragma once

#include <string>
#include <vector>

#include "clock/virtual_clock.h"
#include "config/fabric_config.h"
#include "config/transport_config.h"
#include "tests/transport/recording_observer.h"
#include "transport/flow_record_csv.h"
#include "transport/transport.h"
#include "twin/fabric/fabric_twin.h"

namespace etwire::transport::testing {

inline std::vector<twin::TwinPortSpec> port_specs(size_t ports, uint64_t speed_bps) {
  std::vector<twin::TwinPortSpec> specs;
  for (size_t i = 0; i < ports; ++i) {
    std::string name = "p";
    name += std::to_string(i);
    specs.push_back({name, speed_bps});
  }
  return specs;
}

struct TwinRig {
  TwinRig(const config::FabricConfig& fabric_config,
          const config::TransportConfig& transport_config, size_t ports, uint64_t seed = 1,
          uint64_t speed_bps = 100'000'000'000)
      : fabric(fabric_config),
        config(transport_config),
        specs(port_specs(ports, speed_bps)),
        twin(fabric, specs, clock, seed),
        transport(config, clock, observer) {
    for (size_t i = 0; i < ports; ++i) transport.add_port(twin.port(i), {}, {});
  }

  void run() {
    while (!clock.idle()) clock.poll();
  }

  std::string records_csv() const {
    std::string csv(flow_csv_header());
    for (const auto& record : observer.finished) append_flow_csv(record, csv);
    return csv;
  }

  config::FabricConfig fabric;
  config::TransportConfig config;
  std::vector<twin::TwinPortSpec> specs;
  clock::VirtualClock clock;
  twin::FabricTwin twin;
  RecordingObserver observer;
  Transport transport;
};

}  // namespace etwire::transport::testing
