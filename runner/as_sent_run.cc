#include "runner/as_sent_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "clock/virtual_clock.h"
#include "cluster/session.h"
#include "control/resolve/config_loader.h"
#include "control/resolve/twin_prediction.h"
#include "outputs/output_file.h"
#include "runner/captured_port_frames.h"
#include "runner/emulator_processes.h"
#include "runner/exit_codes.h"
#include "twin/fabric/fabric_twin.h"
#include "twin/replay/as_sent_replay.h"

namespace etwire::runner {

namespace {

PortsByAddress ports_by_address(const control::RunPlan& plan) {
  PortsByAddress ports;
  const auto add = [&ports](size_t port, const config::Ipv4Address& v4,
                            const std::optional<config::Ipv6Address>& v6) {
    std::array<uint8_t, 16> bytes{};
    for (int i = 0; i < 4; ++i) bytes[i] = static_cast<uint8_t>(v4.value >> (24 - 8 * i));
    ports.emplace(address_key(4, bytes), port);
    if (v6) ports.emplace(address_key(6, v6->bytes), port);
  };
  for (size_t p = 0; p < plan.config.ports.size(); ++p) {
    add(p, plan.config.ports[p].ipv4, plan.config.ports[p].ipv6);
  }
  for (size_t job = 0; job < plan.addresses->jobs(); ++job) {
    for (const control::RankEndpoint& rank : plan.addresses->job(job)) {
      if (rank.host >= 0) add(rank.port, rank.ipv4, rank.ipv6);
    }
  }
  return ports;
}

struct PortReplay {
  std::string name;
  uint64_t frames_not_captured = 0;  // handed to the lab's capture, not in its file
  uint64_t data_sent_to = 0;
  twin::ArrivalTally lab;
  twin::ReplayedHost twin;
};

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
  print_row("data frames lost",
            static_cast<double>(port.data_sent_to - std::min(port.data_sent_to, lab.data_frames)),
            static_cast<double>(port.data_sent_to - std::min(port.data_sent_to, twin.data_frames)));
  print_row("CE marked arrived", static_cast<double>(lab.ce_marked),
            static_cast<double>(twin.ce_marked));
  print_row("CNPs arrived", static_cast<double>(lab.cnps), static_cast<double>(twin.cnps));
  print_row("pauses arrived", static_cast<double>(lab.pauses), static_cast<double>(twin.pauses));
  if (lab.last_data >= 0 || twin.last_data >= 0) {
    print_row("last data arrived", static_cast<double>(lab.last_data) / 1e6,
              static_cast<double>(twin.last_data) / 1e6, " ms");
  }
}

}  // namespace

namespace {

// The twin's plan of the lab's configuration (as `run --predict` makes it), or nullptr after
// printing why there is none.
std::shared_ptr<const control::RunPlan> prediction_plan(const AsSentRequest& request) {
  control::LoadOptions options;
  options.overrides = request.overrides;
  const control::RunPlan lab = control::load_config_file(request.config, options);
  const cluster::Session& session = cluster::Session::current();
  if (settle_loaded_config(session, request.config, lab, lab.ok() && lab.addresses.has_value(),
                           fmt::format("{}: invalid: {} error{}; nothing was replayed",
                                       request.config, lab.diagnostics.error_count(),
                                       lab.diagnostics.error_count() == 1 ? "" : "s")) != kExitOk) {
    return nullptr;
  }
  auto plan = std::make_shared<const control::RunPlan>(
      control::all_ports_on_loopback(lab)
          ? lab
          : control::derive_plan(lab, control::twin_prediction(), options));
  if (!plan->ok() || !plan->twin.layout || !plan->addresses) {
    for (const control::Diagnostic& d : plan->diagnostics.items()) {
      std::cerr << control::format_diagnostic(d) << "\n";
    }
    std::cerr << fmt::format("error: {}: the fabric twin cannot be built from it{}\n",
                             request.config,
                             plan->twin.problem ? ": " + plan->twin.problem->message() : "");
    return nullptr;
  }
  return plan;
}

// Opens every port's capture; throws CaptureReadError naming a missing or unreadable one.
std::vector<std::unique_ptr<CapturedPortFrames>> open_captures(const control::RunPlan& plan,
                                                               const std::string& lab,
                                                               const PortsByAddress& ports) {
  std::vector<std::unique_ptr<CapturedPortFrames>> captures;
  for (size_t p = 0; p < plan.config.ports.size(); ++p) {
    const std::filesystem::path path =
        std::filesystem::path(lab) / "capture" / (plan.config.ports[p].name + ".pcapng");
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error)) {
      throw nic::capture::CaptureReadError(
          fmt::format("{}: no such capture file: the lab run must record its frames "
                      "(telemetry.record.pcap: true) into {}",
                      path.string(), lab));
    }
    captures.push_back(
        std::make_unique<CapturedPortFrames>(path.string(), p, plan.config.ports[p].qos, ports));
  }
  std::optional<clock::Nanos> origin;
  for (const auto& capture : captures) {
    if (const auto first = capture->first_stamp())
      origin = std::min(origin.value_or(*first), *first);
  }
  for (const auto& capture : captures) capture->set_origin(origin.value_or(0));
  return captures;
}

nlohmann::json twin_counters_json(const twin::FabricTwin& twin, const twin::AsSentResult& result) {
  twin::WireCounters sum;
  for (size_t p = 0; p < twin.layout().switch_ports(); ++p) sum += twin.switch_port_counters(p);
  for (size_t h = 0; h < twin.ports(); ++h) sum += twin.host_counters(h);
  return {{"end_ns", result.end},
          {"events", result.events},
          {"ecn_marked", sum.ecn_marked},
          {"drops", sum.drops()},
          {"drops_buffer", sum.drops_buffer},
          {"drops_fault", sum.drops_fault},
          {"drops_link_down", sum.drops_link_down},
          {"pfc_pauses_sent", sum.pfc_pauses_sent}};
}

// Prints the table and writes <out>/as-sent.json.
int report_as_sent(const AsSentRequest& request, const twin::FabricTwin& twin,
                   const twin::AsSentResult& result, const std::vector<PortReplay>& ports,
                   uint64_t passed_over) {
  const nlohmann::json fabric = twin_counters_json(twin, result);
  std::cout << fmt::format(
      "As sent: the frames of {} replayed through the fabric twin ({} events, {:.3f} ms of "
      "traffic; {} frames neither RoCEv2 nor PFC passed over)\n",
      request.lab, result.events, static_cast<double>(result.end) / 1e6, passed_over);
  nlohmann::json out_ports = nlohmann::json::array();
  uint64_t not_captured = 0;
  for (const PortReplay& port : ports) {
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

int replay_as_sent_run(const AsSentRequest& request) {
  if (cluster::Session::current().size() > 1) {
    std::cerr << "error: replay is not built for several processes; run it without mpirun\n";
    return kExitBadInput;
  }
  const auto plan = prediction_plan(request);
  if (!plan) return kExitBadInput;
  const config::RunConfig& config = plan->config;
  const PortsByAddress addresses = ports_by_address(*plan);
  clock::VirtualClock clock;
  std::unique_ptr<twin::FabricTwin> built;
  try {
    built = std::make_unique<twin::FabricTwin>(config.fabric, *plan->twin.layout, clock,
                                               config.run.seed);
  } catch (const std::invalid_argument& e) {
    std::cerr << fmt::format("error: {}: the fabric twin cannot be built: {}\n", request.config,
                             e.what());
    return kExitBadInput;
  }
  twin::FabricTwin& twin = *built;
  if (config.fabric.sender_jitter_ns > 0) {
    std::cout
        << "note: fabric.sender_jitter does not act here: frames go at their captured times\n";
  }
  std::vector<std::unique_ptr<CapturedPortFrames>> captures;
  twin::AsSentResult result;
  try {
    captures = open_captures(*plan, request.lab, addresses);
    std::vector<twin::SentFrames*> sources;
    for (const auto& capture : captures) sources.push_back(capture.get());
    result = twin::replay_as_sent(twin, clock, sources);
    for (const auto& capture : captures) capture->finish();
  } catch (const nic::capture::CaptureReadError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  }
  std::vector<PortReplay> ports(config.ports.size());
  uint64_t passed_over = 0;
  for (size_t p = 0; p < ports.size(); ++p) {
    ports[p].name = config.ports[p].name;
    ports[p].lab = captures[p]->received();
    ports[p].twin = result.hosts[p];
    passed_over += captures[p]->not_replayed();
    if (const auto statistics = captures[p]->statistics()) {
      ports[p].frames_not_captured =
          statistics->received - std::min(statistics->received, statistics->delivered);
    }
    for (const auto& capture : captures) {
      const std::vector<uint64_t>& sent = capture->data_sent_to();
      if (p < sent.size()) ports[p].data_sent_to += sent[p];
    }
  }
  return report_as_sent(request, twin, result, ports, passed_over);
}

}  // namespace etwire::runner
