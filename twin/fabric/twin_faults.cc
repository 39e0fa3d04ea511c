// The faults a configuration schedules (fabric.faults) and the report of what they did. Names
// were checked when the configuration was loaded; they are checked again here because the twin
// is also built from configurations made in code.
#include <stdexcept>
#include <string>

#include "common/duration.h"
#include "twin/fabric/fabric_twin.h"
#include "twin/fabric/setup_problems.h"
#include "twin/fabric/twin_event.h"

namespace etwire::twin {

namespace {

std::string at_time(uint64_t ns) {
  return ns == 0 ? "0 s" : format_duration_ns(ns);
}

}  // namespace

void FabricTwin::schedule_faults(const config::FabricConfig& config) {
  if (auto problem = fault_problem(config.faults, *layout_)) throw SetupError(std::move(*problem));
  faults_ = config.faults;
  for (size_t index = 0; index < faults_.size(); ++index) {
    const config::FabricFault& fault = faults_[index];
    const auto at = start_ + static_cast<clock::Nanos>(fault.at_ns);
    const auto until = start_ + static_cast<clock::Nanos>(fault.until_ns);
    if (fault.kind == config::FaultKind::kPfcStorm) {
      const size_t host = *layout_->host_named(fault.port);  // fault_problem found it
      fault_targets_.push_back(static_cast<uint32_t>(host));
      start_pfc_storm(host, fault.priority, at, until);
      continue;
    }
    const size_t cable = *layout_->cable_named(fault.link);  // fault_problem found it
    fault_targets_.push_back(static_cast<uint32_t>(cable));
    if (fault.kind == config::FaultKind::kLinkDown) {
      const auto detection = static_cast<clock::Nanos>(fault.detection_ns);
      schedule_link_fault(cable, false, at, detection);
      if (fault.until_ns != 0) schedule_link_fault(cable, true, until, detection);
      continue;
    }
    scheduler_.run_at(at, this, twin_tag::make(TwinEvent::kFault, uint64_t{index} * 2));
    if (fault.until_ns != 0) {
      scheduler_.run_at(until, this, twin_tag::make(TwinEvent::kFault, uint64_t{index} * 2 + 1));
    }
  }
}

void FabricTwin::apply_fault(uint32_t index, bool ends) {
  const config::FabricFault& fault = faults_[index];
  const uint32_t cable = fault_targets_[index];
  const CableInfo& info = layout_->cable(cable);
  for_cable_links(cable, [&](Link& link) {
    if (fault.kind == config::FaultKind::kDegrade) {
      link.wire.set_rate(ends ? info.speed_bps : fault.speed_bps);
    } else {
      link.drop_probability = ends ? info.drop_probability : fault.drop_probability;
      link.corrupt_probability = ends ? 0 : fault.corrupt_probability;
      link.reorder_probability = ends ? 0 : fault.reorder_probability;
    }
  });
}

std::vector<std::string> FabricTwin::fault_report() const {
  return fault_report([this](const Endpoint& end) -> WireCounters {
    return end.is_host() ? host_counters(end.index) : switch_port_counters(end.index);
  });
}

std::vector<std::string> FabricTwin::fault_report(
    const std::function<WireCounters(const Endpoint&)>& counters_at) const {
  std::vector<std::string> lines;
  for (size_t index = 0; index < faults_.size(); ++index) {
    const config::FabricFault& fault = faults_[index];
    const uint32_t target = fault_targets_[index];
    std::string line = fault.key_path + ": ";
    const std::string span =
        " from " + at_time(fault.at_ns) +
        (fault.until_ns != 0 ? " to " + at_time(fault.until_ns) : " to the end of the run");
    if (fault.kind == config::FaultKind::kPfcStorm) {
      line += "port " + fault.port + " stormed PFC pauses on priority " +
              std::to_string(fault.priority) + span + ": " +
              std::to_string(counters_at({Endpoint::Kind::kHost, target}).pfc_pauses_sent) +
              " pauses sent by it";
      lines.push_back(std::move(line));
      continue;
    }
    // The counters of both ends of the cable.
    const CableInfo& cable = layout_->cable(target);
    WireCounters ends;
    for (const Endpoint& end : {cable.lower, cable.upper}) {
      const WireCounters c = counters_at(end);
      ends.drops_link_down += c.drops_link_down;
      ends.drops_fault += c.drops_fault;
      ends.drops_bad_icrc += c.drops_bad_icrc;
      ends.reordered += c.reordered;
    }
    line += "link " + fault.link;
    switch (fault.kind) {
      case config::FaultKind::kLinkDown: {
        uint64_t no_route = 0;
        for (uint32_t port = 0; port < layout_->switch_ports(); ++port) {
          no_route += counters_at({Endpoint::Kind::kSwitchPort, port}).drops_no_route;
        }
        line += " down" + span + ", routing learning of each change " +
                at_time(fault.detection_ns) + " later: " + std::to_string(ends.drops_link_down) +
                " frames lost on it; " + std::to_string(no_route) +
                " dropped in the fabric for want of a route";
        break;
      }
      case config::FaultKind::kDegrade:
        line += " at " + std::to_string(fault.speed_bps) + " b/s instead of " +
                std::to_string(cable.speed_bps) + span;
        break;
      case config::FaultKind::kLossy:
        line += " lossy" + span + ": " + std::to_string(ends.drops_fault) +
                " frames dropped on it (fault drops, with any fabric-wide ones), " +
                std::to_string(ends.drops_bad_icrc) +
                " delivered with a bad ICRC to a NIC that discarded them, " +
                std::to_string(ends.reordered) + " reordered";
        break;
      case config::FaultKind::kPfcStorm:
        break;
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace etwire::twin
