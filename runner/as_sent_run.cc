#include "runner/as_sent_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "clock/virtual_clock.h"
#include "cluster/session.h"
#include "control/load/device_profile.h"
#include "control/resolve/config_loader.h"
#include "control/resolve/twin_prediction.h"
#include "outputs/output_file.h"
#include "runner/captured_port_frames.h"
#include "runner/emulator_processes.h"
#include "runner/exit_codes.h"
#include "runner/predicted_run.h"
#include "twin/fabric/fabric_twin.h"
#include "twin/replay/as_sent_replay.h"

namespace etwire::runner {

namespace {

nlohmann::json tally_json(const twin::ArrivalTally& tally) {
  return {{"frames", tally.frames},
          {"data_frames", tally.data_frames},
          {"data_bytes", tally.data_bytes},
          {"ce_marked", tally.ce_marked},
          {"cnps", tally.cnps},
          {"pauses", tally.pauses},
          {"first_data_ns", tally.first_data},
          {"last_data_ns", tally.last_data}};
}

std::string delta(double lab, double twin) {
  if (lab == 0) return twin == 0 ? "" : "(lab 0)";
  return fmt::format("{:+.1f} %", 100.0 * (twin - lab) / lab);
}

void print_row(const char* what, double lab, double twin, const std::string& unit = "") {
  std::cout << fmt::format("  {:<22} {:>14} {:>14} {:>10}\n", what,
                           fmt::format("{:.6g}{}", lab, unit), fmt::format("{:.6g}{}", twin, unit),
                           delta(lab, twin));
}

void print_port(const PortReplay& port) {
  std::cout << fmt::format(
      "port {}: {} data frames sent to it; the twin's wire held {} of the {} it "
      "sent (longest {:.1f} us)\n",
      port.name, port.data_sent_to, port.twin.held, port.twin.sent,
      static_cast<double>(port.twin.longest_hold) / 1e3);
  std::cout << fmt::format("  {:<22} {:>14} {:>14} {:>10}\n", "", "lab", "twin", "twin-lab");
  const twin::ArrivalTally& lab = port.lab;
  const twin::ArrivalTally& twin = port.twin.arrived;
  print_row("data frames arrived", static_cast<double>(lab.data_frames),
            static_cast<double>(twin.data_frames));
  print_row("data frames lost", static_cast<double>(port.lost(lab)),
            static_cast<double>(port.lost(twin)));
  print_row("CE marked arrived", static_cast<double>(lab.ce_marked),
            static_cast<double>(twin.ce_marked));
  print_row("CNPs arrived", static_cast<double>(lab.cnps), static_cast<double>(twin.cnps));
  print_row("pauses arrived", static_cast<double>(lab.pauses), static_cast<double>(twin.pauses));
  if (lab.last_data >= 0 || twin.last_data >= 0) {
    print_row("last data arrived", static_cast<double>(lab.last_data) / 1e6,
              static_cast<double>(twin.last_data) / 1e6, " ms");
  }
}

nlohmann::json twin_counters_json(const LabReplay& replay) {
  const twin::WireCounters& sum = replay.fabric;
  return {{"end_ns", replay.result.end},
          {"events", replay.result.events},
          {"ecn_marked", sum.ecn_marked},
          {"drops", sum.drops()},
          {"drops_buffer", sum.drops_buffer},
          {"drops_fault", sum.drops_fault},
          {"drops_link_down", sum.drops_link_down},
          {"pfc_pauses_sent", sum.pfc_pauses_sent}};
}

// Prints the table and writes <out>/as-sent.json.
int report_as_sent(const AsSentRequest& request, const LabReplay& replay) {
  const nlohmann::json fabric = twin_counters_json(replay);
  const twin::AsSentResult& result = replay.result;
  std::cout << fmt::format(
      "As sent: the frames of {} replayed through the fabric twin ({} events, {:.3f} ms of "
      "traffic; {} frames neither RoCEv2 nor PFC passed over)\n",
      request.lab, result.events, static_cast<double>(result.end) / 1e6, replay.passed_over);
  nlohmann::json out_ports = nlohmann::json::array();
  uint64_t not_captured = 0;
  for (const PortReplay& port : replay.ports) {
    out_ports.push_back({{"name", port.name},
                         {"data_sent_to", port.data_sent_to},
                         {"sent", port.twin.sent},
                         {"held", port.twin.held},
                         {"longest_hold_ns", port.twin.longest_hold},
                         {"frames_not_captured", port.frames_not_captured},
                         {"lab", tally_json(port.lab)},
                         {"twin", tally_json(port.twin.arrived)}});
    if (port.data_sent_to > 0 || port.lab.frames > 0) print_port(port);
    not_captured += port.frames_not_captured;
  }
  if (not_captured > 0) {
    std::cerr << fmt::format(
        "warning: the lab's capture files lack {} frames their ports handed to them (a capture "
        "limit stopped them, or a full ring lost them: as-sent.json has them by port). The "
        "replay did not send the missing frames, and the lab's counts miss those that arrived\n",
        not_captured);
  }
  std::cout << fmt::format("twin: {} frames marked CE, {} dropped ({} by the buffer)\n",
                           fabric["ecn_marked"].get<uint64_t>(), fabric["drops"].get<uint64_t>(),
                           fabric["drops_buffer"].get<uint64_t>());
  const nlohmann::json document = {
      {"config", request.config}, {"lab", request.lab}, {"ports", out_ports}, {"twin", fabric}};
  const std::filesystem::path dir = request.out.empty()
                                        ? std::filesystem::path(request.lab) / "as-sent"
                                        : std::filesystem::path(request.out);
  try {
    std::filesystem::create_directories(dir);
    outputs::write_file_atomically((dir / "as-sent.json").string(), document.dump(2) + "\n");
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitFailure;
  }
  std::cout << fmt::format("as-sent replay in {}\n", (dir / "as-sent.json").string());
  return kExitOk;
}

}  // namespace

std::shared_ptr<const control::RunPlan> load_twin_plan(const std::string& config,
                                                       const std::vector<std::string>& overrides,
                                                       const std::string& profile,
                                                       const std::string& verb, bool quiet) {
  control::LoadOptions options;
  if (!profile.empty()) {
    try {
      options.overrides = control::read_device_profile(profile);
    } catch (const control::DeviceProfileError& e) {
      std::cerr << "error: " << e.what() << "\n";
      return nullptr;
    }
  }
  options.overrides.insert(options.overrides.end(), overrides.begin(), overrides.end());
  control::RunPlan lab = control::load_config_file(config, options);
  // A lab's configuration keeps its own ports as loaded: the profile it names is the twin's, so
  // it is read into the settings here (before --profile's and the command line's).
  if (lab.ok() && !lab.config.fabric.profile.empty() && !control::all_ports_on_loopback(lab)) {
    std::optional<std::vector<std::string>> settings =
        read_prediction_profile(lab, options.overrides);
    if (!settings) return nullptr;
    options.overrides = std::move(*settings);
    lab = control::load_config_file(config, options);
  }
  if (!lab.ok() || !lab.addresses) {
    settle_loaded_config(
        cluster::Session::current(), config, lab, false,
        fmt::format("{}: invalid: {} error{}; nothing was {}{}", config,
                    lab.diagnostics.error_count(), lab.diagnostics.error_count() == 1 ? "" : "s",
                    verb,
                    profile.empty() && lab.config.fabric.profile.empty()
                        ? ""
                        : fmt::format(" (the device profile {}'s settings count as --set "
                                      "before the command line's)",
                                      profile.empty() ? lab.config.fabric.profile : profile)));
    return nullptr;
  }
  // The twin's plan speaks for the replay: the lab's would warn that the fabric section is
  // ignored by devices, which is true of the lab run and not of this.
  auto plan = std::make_shared<const control::RunPlan>(
      control::all_ports_on_loopback(lab)
          ? lab
          : control::derive_plan(lab, control::twin_prediction(), options));
  const bool usable = plan->ok() && plan->twin.layout && plan->addresses;
  for (const control::Diagnostic& d : plan->diagnostics.items()) {
    if (!quiet || !usable) std::cerr << control::format_diagnostic(d) << "\n";
  }
  if (!usable) {
    std::cerr << fmt::format("error: {}: the fabric twin cannot be built from it{}\n", config,
                             plan->twin.problem ? ": " + plan->twin.problem->message() : "");
    return nullptr;
  }
  return plan;
}

LabReplay replay_lab(const control::RunPlan& plan, const std::string& lab) {
  const config::RunConfig& config = plan.config;
  const PortsByAddress addresses = ports_by_address(plan);
  clock::VirtualClock clock;
  twin::FabricTwin twin(config.fabric, *plan.twin.layout, clock, config.run.seed);
  const std::vector<std::unique_ptr<CapturedPortFrames>> captures =
      open_lab_captures(plan, lab, addresses);
  std::vector<twin::SentFrames*> sources;
  for (const auto& capture : captures) sources.push_back(capture.get());
  LabReplay replay;
  replay.result = twin::replay_as_sent(twin, clock, sources);
  for (const auto& capture : captures) capture->finish();
  replay.ports.resize(config.ports.size());
  for (size_t p = 0; p < replay.ports.size(); ++p) {
    PortReplay& port = replay.ports[p];
    port.name = config.ports[p].name;
    port.lab = captures[p]->received();
    port.twin = replay.result.hosts[p];
    replay.passed_over += captures[p]->not_replayed();
    if (const auto statistics = captures[p]->statistics()) {
      port.frames_not_captured =
          statistics->received - std::min(statistics->received, statistics->delivered);
    }
    for (const auto& capture : captures) {
      const std::vector<uint64_t>& sent = capture->data_sent_to();
      if (p < sent.size()) port.data_sent_to += sent[p];
    }
  }
  for (size_t p = 0; p < twin.layout().switch_ports(); ++p) {
    replay.fabric += twin.switch_port_counters(p);
  }
  for (size_t h = 0; h < twin.ports(); ++h) replay.fabric += twin.host_counters(h);
  return replay;
}

int replay_as_sent_run(const AsSentRequest& request) {
  if (cluster::Session::current().size() > 1) {
    std::cerr << "error: replay is not built for several processes; run it without mpirun\n";
    return kExitBadInput;
  }
  const auto plan = load_twin_plan(request.config, request.overrides, request.profile, "replayed");
  if (!plan) return kExitBadInput;
  if (plan->config.fabric.sender_jitter_ns > 0) {
    std::cout
        << "note: fabric.sender_jitter does not act here: frames go at their captured times\n";
  }
  try {
    return report_as_sent(request, replay_lab(*plan, request.lab));
  } catch (const nic::capture::CaptureReadError& e) {
    std::cerr << "error: " << e.what() << "\n";
  } catch (const std::invalid_argument& e) {
    std::cerr << fmt::format("error: {}: the fabric twin cannot be built: {}\n", request.config,
                             e.what());
  }
  return kExitBadInput;
}

}  // namespace etwire::runner
