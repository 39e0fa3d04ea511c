#include "control/resolve/twin_prediction.h"

#include "control/load/device_profile.h"

namespace etwire::control {

bool all_ports_on_loopback(const RunPlan& lab) {
  return all_ports_on_loopback(lab.config);
}

bool all_ports_on_loopback(const config::RunConfig& config) {
  for (const config::PortConfig& port : config.ports) {
    if (port.backend != config::Backend::kLoopback) return false;
  }
  return true;
}

PlanChange twin_prediction() {
  PlanChange change;
  change.apply = [](config::RunConfig& config) {
    for (config::PortConfig& port : config.ports) {
      port.backend = config::Backend::kLoopback;
      port.next_hop_mac.reset();
      // The devices' settings mean nothing on the twin: not "ignored" warnings either.
      port.dpdk.present = false;
      port.verbs.present = false;
    }
    config.verbs.present = false;
    config.telemetry.record.pcap = false;
  };
  change.forget_sections = [](SectionPresence& present) { present.dpdk = false; };
  change.settings = {"predict: the fabric twin in place of every port; no capture"};
  return change;
}

std::vector<std::string> prediction_profile(const RunPlan& lab,
                                            const std::vector<std::string>& extra) {
  std::vector<std::string> settings;
  if (!lab.config.fabric.profile.empty() && !all_ports_on_loopback(lab)) {
    settings = read_device_profile(lab.config.fabric.profile);
  }
  settings.insert(settings.end(), extra.begin(), extra.end());
  return settings;
}

}  // namespace etwire::control
