#include "runner/emulator_processes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iostream>

#include "cluster/agreement.h"
#include "cluster/exit_agreement.h"
#include "common/duration.h"
#include "control/plan/config_summary.h"
#include "control/plan/inputs_digest.h"
#include "runner/data_plane_choice.h"
#include "runner/exit_codes.h"

namespace etwire::runner {

namespace {

// Round trips per process for its clock offset: the shortest of them bounds the error.
constexpr int kClockRounds = 64;
std::string signed_duration(int64_t ns) {
  return fmt::format("{}{}", ns < 0 ? "-" : "+",
                     format_duration_ns(static_cast<uint64_t>(ns < 0 ? -ns : ns)));
}

// A fabric twin spread over the processes: at least one partition each, and what is not built
// for it yet.
std::string spread_problem(const config::RunConfig& config, size_t processes) {
  const uint32_t partitions = config.fabric.partitions;
  if (partitions < processes) {
    return fmt::format(
        "{}: the launcher started {} processes to spread the fabric twin over, but it has {} "
        "partitions (fabric.partitions), at least one for each process: run mpirun -np {} or "
        "fewer, or cut the twin into {} or more",
        config.source_file, processes, partitions, partitions, processes);
  }
  if (config.telemetry.record.pcap) {
    return fmt::format(
        "{}: telemetry.record.pcap with the fabric twin spread over {} processes: not built yet "
        "(each process would capture only its own partitions' frames); run it in one process, or "
        "without the capture",
        config.source_file, processes);
  }
  return "";
}

// The configuration's emulators are these processes: as many, each on the host it names.
std::string placement_problem(const config::RunConfig& config,
                              const std::vector<cluster::ProcessReport>& reports) {
  if (twin_spread_over(config, static_cast<int>(reports.size()))) {
    return spread_problem(config, reports.size());
  }
  const size_t emulators = std::max<size_t>(1, config.emulators.size());
  if (emulators != reports.size()) {
    const bool twin = config.emulators.empty() && !config.ports.empty() &&
                      std::all_of(config.ports.begin(), config.ports.end(), [](const auto& port) {
                        return port.backend == config::Backend::kLoopback;
                      });
    return fmt::format(
        "{} describes {} emulator process{}, but the launcher started {}: run mpirun -np {}{}",
        config.source_file, emulators, emulators == 1 ? "" : "es", reports.size(), emulators,
        twin ? fmt::format(", or cut the fabric twin into {} or more partitions "
                           "(fabric.partitions) to spread it over the processes",
                           reports.size())
             : "");
  }
  for (const config::EmulatorConfig& emulator : config.emulators) {
    const std::string& host = reports[emulator.rank].host;
    if (!emulator.host.empty() && emulator.host != host) {
      return fmt::format(
          "emulator \"{}\" ({}) is to run on host {}, but its process (MPI rank {}) runs on {}: "
          "list the hosts in the launcher's hostfile in the order of the emulators' ranks",
          emulator.name, emulator.key_path, emulator.host, emulator.rank, host);
    }
  }
  return "";
}

}  // namespace

bool twin_spread_over(const config::RunConfig& config, int processes) {
  return processes > 1 && config.emulators.empty() && config.fabric.partitions > 1;
}

std::string launcher_needed(const config::RunConfig& config) {
  if (config.emulators.size() <= 1) return "";
  const bool devices = std::any_of(config.ports.begin(), config.ports.end(), [&](const auto& port) {
    return port.backend == config::Backend::kDpdk ||
           (port.backend == config::Backend::kVerbs &&
            config.verbs.rnic == config::RnicKind::kHardware);
  });
  if (!devices) return "";
  std::vector<std::string> names;
  for (const config::EmulatorConfig& emulator : config.emulators) names.push_back(emulator.name);
  return fmt::format(
      "{}: its ports are split between {} emulators ({}), one process each, which an MPI "
      "launcher starts: run it under mpirun -np {} (docs/lab-multi-host.md); alone, this process "
      "would drive only {}'s ports",
      config.source_file, names.size(), fmt::join(names, ", "), names.size(), names.front());
}

int join_emulator_processes(const cluster::Session& session, const ProcessSetup& setup,
                            std::vector<cluster::ClockOffset>* offsets_out) {
  if (!session.mpi()) {
    const std::string problem =
        setup.loaded != nullptr ? launcher_needed(setup.loaded->config) : std::string();
    if (problem.empty()) return kExitOk;
    std::cerr << fmt::format("error: {}\n", problem);
    return kExitBadInput;
  }
  cluster::ProcessReport mine;
  mine.host = session.host();
  mine.error = setup.error;
  if (setup.loaded != nullptr && mine.error.empty()) {
    try {
      mine.digest = control::inputs_digest(*setup.loaded);
    } catch (const std::exception& e) {
      mine.error = e.what();
    }
  }
  std::vector<cluster::ProcessReport> reports;
  for (const std::string& text : session.all_gather(cluster::encode_report(mine))) {
    reports.push_back(cluster::decode_report(text));
  }
  std::string problem = cluster::disagreement(reports).value_or("");
  if (problem.empty()) problem = placement_problem(setup.loaded->config, reports);
  if (!problem.empty()) {
    if (session.rank() == 0) std::cerr << fmt::format("error: {}\n", problem);
    return kExitBadInput;
  }
  session.barrier();
  const std::vector<cluster::ClockOffset> offsets = session.clock_offsets(kClockRounds);
  if (offsets_out != nullptr) *offsets_out = offsets;
  if (session.rank() == 0) {
    const auto& emulators = setup.loaded->config.emulators;
    for (size_t p = 0; p < offsets.size(); ++p) {
      std::string name = "emulator";
      for (const auto& e : emulators) {
        if (e.rank == p) name = fmt::format("emulator \"{}\"", e.name);
      }
      if (p == 0) {
        std::cerr << fmt::format("{}: process 0 on host {}, the reference clock\n", name,
                                 reports[p].host);
        continue;
      }
      std::cerr << fmt::format(
          "{}: process {} on host {}, clock offset to process 0 {} ± {} ({} round trips over "
          "MPI, shortest {})\n",
          name, p, reports[p].host, signed_duration(offsets[p].offset_ns),
          format_duration_ns(static_cast<uint64_t>(offsets[p].error_ns)), offsets[p].samples,
          format_duration_ns(static_cast<uint64_t>(offsets[p].round_trip_ns)));
    }
  }
  return kExitOk;
}

int settle_loaded_config(const cluster::Session& session, const std::string& config_file,
                         const control::RunPlan& loaded, bool usable, const std::string& invalid,
                         std::vector<cluster::ClockOffset>* offsets) {
  if (session.rank() == 0 || !usable) std::cerr << loaded.diagnostics.to_text();
  ProcessSetup setup{config_file, &loaded, ""};
  if (!usable) {
    std::cerr << invalid << "\n";
    setup.loaded = nullptr;
    setup.error = invalid;
    join_emulator_processes(session, setup);
    return kExitBadInput;
  }
  spdlog::debug(
      "loaded {}{}: {}", config_file,
      loaded.settings.empty() ? "" : fmt::format(" with {}", fmt::join(loaded.settings, ", ")),
      control::summarize_config(loaded));
  return join_emulator_processes(session, setup, offsets);
}

namespace {

// 1 when a DPDK port of this emulator is a net_memif client (it connects to a server that must
// already listen), else 0.
int setup_turn(const config::RunConfig& config, uint32_t emulator) {
  for (const config::PortConfig& port : config.ports) {
    if (port.backend != config::Backend::kDpdk || !config::drives_port(config, port, emulator)) {
      continue;
    }
    const std::string& vdev = port.dpdk.vdev;
    if (vdev.rfind("net_memif", 0) == 0 && vdev.find("role=client") != std::string::npos) return 1;
  }
  return 0;
}

}  // namespace

int set_up_every_process(const cluster::Session& session, const config::RunConfig& config,
                         const std::function<void()>& setup) {
  if (!session.mpi()) return set_up(setup);
  int code = kExitOk;
  cluster::in_turns(session, setup_turn(config, static_cast<uint32_t>(session.rank())), 2,
                    [&] { code = set_up(setup); });
  const std::vector<int> codes = cluster::gather_exit_codes(session, code);
  std::vector<std::string> failed;
  int first = kExitOk;
  for (size_t p = 0; p < codes.size(); ++p) {
    if (codes[p] == kExitOk) continue;
    failed.push_back(std::to_string(p));
    if (first == kExitOk) first = codes[p];
  }
  if (first != kExitOk && session.rank() == 0) {
    std::cerr << fmt::format(
        "error: emulator process{} {} could not set up (see {} error above); nothing was run\n",
        failed.size() == 1 ? "" : "es", fmt::join(failed, ", "),
        failed.size() == 1 ? "its" : "their");
  }
  return first;
}

void release_every_process(const cluster::Session& session, const config::RunConfig& config,
                           const std::function<void()>& release) {
  // The reverse of setting up: servers first, while their clients wait, so that a client sees
  // its server go away before it stops its own device, not while it does.
  cluster::in_turns(session, setup_turn(config, static_cast<uint32_t>(session.rank())), 2, release);
}

int processes_before_on_host(const cluster::Session& session) {
  const std::vector<std::string>& hosts = session.hosts();
  return static_cast<int>(
      std::count(hosts.begin(), hosts.begin() + session.rank(), session.host()));
}

}  // namespace etwire::runner
