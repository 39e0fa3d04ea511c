#include "runner/calibrate_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>
#include <span>
#include <sstream>

#include "control/load/device_profile.h"
#include "control/resolve/config_loader.h"
#include "nic/capture/capture_reader.h"
#include "outputs/output_file.h"
#include "runner/as_sent_run.h"
#include "runner/device_fit.h"
#include "runner/exit_codes.h"
#include "runner/profile_search.h"
#include "runner/queue_crossings.h"

namespace etwire::runner {

namespace {

// What reached the calibrated port in one run: in the lab, in the twin as configured, in the twin
// with the profile.
struct Residuals {
  std::string lab;
  PortReplay before;
  PortReplay after;
};

double percent(double lab, double twin) {
  return lab == 0 ? 0 : 100 * (twin - lab) / lab;
}

std::string residual_line(const Residuals& r) {
  const PortReplay& b = r.before;
  const PortReplay& a = r.after;
  return fmt::format(
      "{}: CE marks lab {}, twin {} ({:+.1f} %), profile {} ({:+.1f} %); lost lab {}, twin {}, "
      "profile {}; last data lab {:.3f} ms, twin {:.3f} ms, profile {:.3f} ms",
      r.lab, b.lab.ce_marked, b.twin.arrived.ce_marked,
      percent(b.lab.ce_marked, b.twin.arrived.ce_marked), a.twin.arrived.ce_marked,
      percent(b.lab.ce_marked, a.twin.arrived.ce_marked), b.lost(b.lab), b.lost(b.twin.arrived),
      a.lost(a.twin.arrived), b.lab.last_data / 1e6, b.twin.arrived.last_data / 1e6,
      a.twin.arrived.last_data / 1e6);
}

std::string fit_lines(const DeviceFit& fit, const std::string& port, uint64_t configured) {
  std::ostringstream out;
  out << fmt::format(
      "port {}: {} data frames sent to it, {} lost, {} arrived with no copy in a sender's "
      "capture; a frame is {} B on the wire\n",
      port, fit.sent, fit.lost, fit.unmatched, fit.frame_bytes);
  out << fmt::format("rate: {} bps {} (configured {} bps)\n", fit.rate_bps,
                     fit.rate_measured
                         ? fmt::format("from {} arrivals behind a queue", fit.busy_pairs)
                         : std::string("as configured: the queue never stayed busy"),
                     configured);
  out << fmt::format("least delay: {} ns{}\n", fit.least_delay,
                     fit.propagation_ns
                         ? fmt::format(" (propagation {} ns a cable)", *fit.propagation_ns)
                         : std::string(" (not a single switch: not fitted)"));
  out << fmt::format("queue: 99.9 % of frames found at most {} frames{}\n", fit.most_frames_ahead,
                     fit.queue_packets ? fmt::format("; it holds {} packets", *fit.queue_packets)
                                       : std::string("; nothing lost: its size is not fitted"));
  if (fit.marking) {
    const twin::MarkingFit& m = *fit.marking;
    out << fmt::format(
        "marking: kmin {} frames, kmax {}, pmax {}, average weight {}; {} marks seen, {:.0f} "
        "expected by the curve on the same queues\n",
        m.kmin, m.kmax, m.pmax, m.weight, m.marked, m.expected_marks);
  } else {
    out << "marking: no frame came out marked: not fitted\n";
  }
  return out.str();
}

// The configured port the most data frames were sent to in `replay`.
size_t busiest_port(const LabReplay& replay) {
  size_t best = 0;
  for (size_t p = 1; p < replay.ports.size(); ++p) {
    if (replay.ports[p].data_sent_to > replay.ports[best].data_sent_to) best = p;
  }
  return best;
}

std::string profile_text(const CalibrateRequest& request, const std::string& fit,
                         const std::vector<Residuals>& residuals,
                         const std::vector<std::string>& overrides) {
  std::ostringstream out;
  out << "# etwire device profile: the device under test as the fabric twin models it, fitted by\n"
         "# `etwire calibrate` to the frames that crossed it. Use it with\n"
         "#   etwire run CONFIG --predict --profile FILE   or   etwire replay CONFIG LAB --profile "
         "FILE\n"
         "# or name it in the configuration: fabric: {profile: FILE}\n"
         "#\n";
  std::istringstream lines(fit);
  for (std::string line; std::getline(lines, line);) out << "# " << line << "\n";
  out << "# residuals (replayed as sent; twin: as configured, profile: with this profile):\n";
  for (const Residuals& r : residuals) out << "#   " << residual_line(r) << "\n";
  out << "fitted_from:\n";
  for (const std::string& lab : request.labs) out << "  - \"" << lab << "\"\n";
  out << "set:\n";
  for (const std::string& o : overrides) out << "  - \"" << o << "\"\n";
  return out.str();
}

}  // namespace

namespace {

// The configured port named `name`, or the busiest of the first run when `name` is empty;
// nullopt after printing why there is none.
std::optional<size_t> calibrated_port(const control::RunPlan& plan, const std::string& name,
                                      const LabReplay& first) {
  if (name.empty()) return busiest_port(first);
  for (size_t p = 0; p < plan.config.ports.size(); ++p) {
    if (plan.config.ports[p].name == name) return p;
  }
  std::string known;
  for (const config::PortConfig& port : plan.config.ports) known += " " + port.name;
  std::cerr << fmt::format("error: --port {}: no such port (the configuration has:{})\n", name,
                           known);
  return std::nullopt;
}

DeviceFit fit_from(const control::RunPlan& plan, const std::vector<CrossingsTo>& runs,
                   size_t port) {
  DeviceFitInput input;
  input.runs = runs;
  input.configured_rate_bps = plan.config.ports[port].speed_bps;
  for (const config::PortConfig& p : plan.config.ports)
    input.port_speeds_bps.push_back(p.speed_bps);
  input.switch_latency_ns = static_cast<clock::Nanos>(plan.config.fabric.switch_latency_ns);
  input.single_switch = plan.config.fabric.topology == config::Topology::kSingleSwitch;
  return fit_device(input);
}

// The configuration's marking curve in frames of the fit's size, its pmax and weight the nearest
// the search steps through; nullopt where it does not mark.
std::optional<twin::MarkingFit> configured_marking(const control::RunPlan& plan,
                                                   const DeviceFit& fit) {
  const config::EcnMarking& ecn = plan.config.fabric.ecn;
  if (!ecn.enabled) return std::nullopt;
  const auto nearest = [](std::span<const double> ladder, double value) {
    return *std::min_element(ladder.begin(), ladder.end(), [&](double a, double b) {
      return std::abs(std::log(a / value)) < std::abs(std::log(b / value));
    });
  };
  twin::MarkingFit m;
  m.kmin =
      static_cast<uint32_t>(std::llround(static_cast<double>(ecn.kmin_bytes) / fit.frame_bytes));
  m.kmax = std::max(
      m.kmin + 1,
      static_cast<uint32_t>(std::llround(static_cast<double>(ecn.kmax_bytes) / fit.frame_bytes)));
  m.pmax = nearest(twin::pmax_ladder(), ecn.pmax);
  m.weight = nearest(averaging_weights(), ecn.average_weight);
  return m;
}

int calibrate(const CalibrateRequest& request, const control::RunPlan& plan) {
  const std::optional<size_t> port =
      calibrated_port(plan, request.port,
                      request.port.empty() ? replay_lab(plan, request.labs.front()) : LabReplay{});
  if (!port) return kExitBadInput;
  const std::string& name = plan.config.ports[*port].name;
  std::vector<CrossingsTo> runs;
  for (const std::string& lab : request.labs) {
    runs.push_back(collect_crossings(plan, lab, *port));
    if (runs.back().crossings.empty()) {
      std::cerr << fmt::format(
          "error: {}: no data frame crossed to port {} that its sender's capture holds: nothing "
          "to calibrate from\n",
          lab, name);
      return kExitBadInput;
    }
  }
  const DeviceFit fit = fit_from(plan, runs, *port);
  const uint64_t configured = plan.config.ports[*port].speed_bps;
  const auto choice = choose_profile({request.config, request.overrides, request.labs, *port,
                                      configured, configured_marking(plan, fit)},
                                     fit);
  if (!choice) return kExitFailure;
  // The profile the configuration names was the starting point of every replay: the written one
  // holds its settings too, before the fit's, so that naming it instead keeps them.
  std::vector<std::string> overrides;
  if (!plan.config.fabric.profile.empty()) {
    overrides = control::read_device_profile(plan.config.fabric.profile);
  }
  overrides.insert(overrides.end(), choice->overrides.begin(), choice->overrides.end());
  std::vector<Residuals> residuals;
  for (size_t i = 0; i < request.labs.size(); ++i) {
    residuals.push_back({request.labs[i], choice->configured[i], choice->replays[i]});
  }
  const std::string fit_text =
      fit_lines(fit, name, configured) +
      fmt::format(
          "profile: {} settings{}, chosen by {} replays as sent (residual {:.3f}; {:.3f} "
          "as configured)\n",
          choice->overrides.size(),
          plan.config.fabric.profile.empty()
              ? ""
              : fmt::format(" after the {} of {} (fabric.profile)",
                            overrides.size() - choice->overrides.size(),
                            plan.config.fabric.profile),
          choice->replays_run, choice->score, choice->configured_score);
  std::cout << fit_text;
  std::cout << "residuals, replayed as sent (twin: as configured; profile: with the fit):\n";
  for (const Residuals& r : residuals) std::cout << "  " << residual_line(r) << "\n";
  const std::string out =
      request.out.empty()
          ? (std::filesystem::path(request.labs.front()) / "device-profile.yaml").string()
          : request.out;
  try {
    outputs::write_file_atomically(out, profile_text(request, fit_text, residuals, overrides));
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitFailure;
  }
  std::cout << fmt::format("device profile in {}\n", out);
  return kExitOk;
}

}  // namespace

int calibrate_run(const CalibrateRequest& request) {
  const auto plan = load_twin_plan(request.config, request.overrides, "", "calibrated");
  if (!plan) return kExitBadInput;
  try {
    return calibrate(request, *plan);
  } catch (const nic::capture::CaptureReadError& e) {
    std::cerr << "error: " << e.what() << "\n";
  } catch (const std::invalid_argument& e) {
    std::cerr << fmt::format("error: {}: {}\n", request.config, e.what());
  } catch (const control::DeviceProfileError& e) {
    std::cerr << "error: " << e.what() << " (fabric.profile)\n";
  }
  return kExitBadInput;
}

}  // namespace etwire::runner
