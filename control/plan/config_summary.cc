#include "control/plan/config_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/duration.h"
#include "common/rate.h"

namespace etwire::control {

namespace {

std::string plural(size_t n, const char* word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

std::string describe_jobs(const RunPlan& loaded) {
  const auto& jobs = loaded.config.workload.jobs;
  std::string text = plural(jobs.size(), "job") + " (";
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (j > 0) text += ", ";
    text += jobs[j].name + ": ";
    if (j < loaded.traces.size() && loaded.traces[j]) {
      text += plural(static_cast<size_t>(loaded.traces[j]->world_size), "rank");
    } else if (jobs[j].world_size) {
      text += plural(static_cast<size_t>(*jobs[j].world_size), "rank");
    } else {
      text += "trace not read";
    }
    text += fmt::format(" x {}", plural(jobs[j].iterations, "iteration"));
  }
  return text + ")";
}

std::string describe_ports(const config::RunConfig& config) {
  // backend -> speed -> count, so "8 loopback ports at 100 Gb/s, 2 at 400 Gb/s".
  std::map<config::Backend, std::map<uint64_t, size_t>> groups;
  for (const auto& port : config.ports) ++groups[port.backend][port.speed_bps];
  std::string text;
  for (const auto& [backend, speeds] : groups) {
    bool first = true;
    for (const auto& [speed, count] : speeds) {
      if (!text.empty()) text += ", ";
      text += first ? fmt::format("{} {} port{} at {}", count, config::backend_name(backend),
                                  count == 1 ? "" : "s", format_rate(speed))
                    : fmt::format("{} at {}", count, format_rate(speed));
      first = false;
    }
  }
  return text.empty() ? "no ports" : text;
}

// What the transport does beyond classic RoCE, "" when nothing: sprayed source ports and
// out-of-order receivers (on every port, or on some).
std::string describe_transport_modes(const config::RunConfig& config) {
  const config::TransportConfig& t = config.transport;
  std::string text;
  if (t.entropy.mode == config::EntropyMode::kSpray) {
    text += fmt::format(", source ports sprayed over {} (every {})", t.entropy.values,
                        plural(t.entropy.every, "packet"));
  }
  size_t out_of_order = 0;
  for (size_t p = 0; p < config.ports.size(); ++p) {
    if (t.receiver_of(static_cast<uint32_t>(p)) == config::Receiver::kOutOfOrder) ++out_of_order;
  }
  if (out_of_order == config.ports.size() && out_of_order > 0) {
    text += ", out-of-order receivers";
  } else if (out_of_order > 0) {
    text += fmt::format(", out-of-order receivers on {} of {} ports", out_of_order,
                        config.ports.size());
  }
  return text;
}

// The switches' load balancing when not ECMP everywhere, trimming when on, a dynamic buffer,
// shapers and the device profile named; "" otherwise.
std::string describe_switch_modes(const config::FabricConfig& fabric) {
  const config::LoadBalancingConfig& lb = fabric.load_balancing;
  std::string text;
  if (!(lb.leaf == config::LoadBalancing::kEcmp && lb.spine == config::LoadBalancing::kEcmp &&
        lb.super_spine == config::LoadBalancing::kEcmp)) {
    text +=
        fmt::format(", load balancing {} at the leaves, {} at the spines",
                    config::load_balancing_name(lb.leaf), config::load_balancing_name(lb.spine));
    if (fabric.topology == config::Topology::kThreeTier) {
      text += fmt::format(", {} at the super-spines", config::load_balancing_name(lb.super_spine));
    }
  }
  if (fabric.trimming.enabled) text += ", trimming";
  if (fabric.buffer.mode == config::BufferMode::kDynamic) {
    text += fmt::format(", dynamic buffer thresholds (alpha {})", fabric.buffer.alpha);
  }
  if (fabric.shaper.shapes()) {
    text += fmt::format(", every switch port shaped to {}", format_rate(fabric.shaper.rate_bps));
  }
  const auto shaped =
      std::count_if(fabric.port_overrides.begin(), fabric.port_overrides.end(),
                    [&](const config::FabricPortOverride& o) {
                      return o.shaper.shapes() && o.shaper.rate_bps != fabric.shaper.rate_bps;
                    });
  if (shaped > 0) text += fmt::format(", shapers toward {} of the ports", shaped);
  if (!fabric.profile.empty()) text += fmt::format(", device profile {}", fabric.profile);
  return text;
}

}  // namespace

std::string describe_fabric(const RunPlan& loaded) {
  const config::FabricConfig& fabric = loaded.config.fabric;
  std::string text = fmt::format("{} twin", config::topology_name(fabric.topology));
  if (loaded.twin.layout && fabric.topology != config::Topology::kSingleSwitch) {
    const twin::FabricLayout& layout = *loaded.twin.layout;
    text += fmt::format(" of {} leaves", layout.leaves());
    if (fabric.topology == config::Topology::kThreeTier) {
      text += fmt::format(" in {} pods", layout.pods());
    }
    text += fmt::format(", {} spine{}{}", layout.spines(), layout.spines() == 1 ? "" : "s",
                        fabric.topology == config::Topology::kThreeTier ? " per pod" : "");
    if (layout.planes() > 1) text += fmt::format(" in each of {} planes", layout.planes());
    text += fmt::format(", {} x {} per leaf-spine pair", layout.links(),
                        format_rate(layout.uplink_speed_bps()));
    if (fabric.topology == config::Topology::kThreeTier) {
      text += fmt::format(", {} super-spine{} per spine, {} x {} per spine-super-spine pair",
                          layout.super_spines(), layout.super_spines() == 1 ? "" : "s",
                          layout.super_links(), format_rate(layout.spine_uplink_speed_bps()));
    }
  }
  text += fmt::format(", cables {} one way, switches {}",
                      format_duration_ns(fabric.propagation_delay_ns),
                      format_duration_ns(fabric.switch_latency_ns));
  text += describe_switch_modes(fabric);
  if (!fabric.infragraph_nics.empty()) {
    text += fmt::format(" (fabric.infragraph: {} host NICs)", fabric.infragraph_nics.size());
  }
  return text;
}

std::string summarize_config(const RunPlan& loaded) {
  const config::RunConfig& config = loaded.config;
  bool twin = false;
  for (const auto& port : config.ports) twin = twin || port.backend == config::Backend::kLoopback;
  std::string text = fmt::format(
      "{}, {}, PMTU {}{}, {}, DCQCN {}", describe_jobs(loaded), describe_ports(config),
      config.transport.pmtu, config.transport.pmtu_auto ? " (auto)" : "",
      config::rdma_op_name(config.transport.op), config.transport.dcqcn.enabled ? "on" : "off");
  text += describe_transport_modes(config);
  if (twin) text += ", " + describe_fabric(loaded);
  return text;
}

}  // namespace etwire::control
