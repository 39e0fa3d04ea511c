// `etwire synth moe-mix`: all-reduces and all-to-alls interleaved in every iteration of one trace
// per rank, the workload of the Chakra paper's hardware-in-the-loop case study.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/synth_output.h"
#include "cli/synth_rank_table.h"
#include "cli/synth_subcommands.h"
#include "common/units.h"
#include "runner/exit_codes.h"
#include "trace/synth/moe_mix.h"

namespace etwire::cli {

namespace {

struct MoeMixOptions {
  SynthOutput output;
  synth::MoeMixSpec spec;
  std::string allreduce_bytes = "16MiB";
  std::string alltoall_bytes = "4MiB";
};

}  // namespace

CommandAction add_synth_moe_mix_command(CLI::App& synth) {
  auto opts = std::make_shared<MoeMixOptions>();
  auto* cmd = synth.add_subcommand(
      "moe-mix",
      "Per iteration, compute steps each followed by an all-to-all on the critical path, with "
      "all-reduces overlapping them: the Chakra paper's HIL workload in one trace per rank");
  add_synth_output_options(cmd, opts->output);
  cmd->add_option("-n,--ranks", opts->spec.ranks, "Number of ranks (files)")
      ->check(CLI::Range(2, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--allreduce-bytes", opts->allreduce_bytes, "comm_size of each all-reduce")
      ->capture_default_str();
  cmd->add_option("--alltoall-bytes", opts->alltoall_bytes,
                  "comm_size of each all-to-all (what each rank sends, to all ranks)")
      ->capture_default_str();
  cmd->add_option("--allreduce-count", opts->spec.allreduces, "All-reduces per iteration")
      ->capture_default_str();
  cmd->add_option("--alltoall-count", opts->spec.alltoalls, "All-to-alls per iteration")
      ->capture_default_str();
  cmd->add_option("--compute-us", opts->spec.compute_us,
                  "Compute before each step's collectives, in microseconds (0 = none)")
      ->capture_default_str();
  cmd->add_option("-i,--iterations", opts->spec.iterations, "Iterations per trace")
      ->capture_default_str();

  return [opts]() -> int {
    auto parse = [](const std::string& flag, const std::string& text, uint64_t& into) {
      auto bytes = parse_bytes(text);
      if (!bytes) {
        std::cerr << fmt::format("error: --{}: \"{}\" is not a byte size (e.g. 4096, 64KiB)\n",
                                 flag, text);
        return false;
      }
      into = *bytes;
      return true;
    };
    synth::MoeMixSpec spec = opts->spec;
    if (!parse("allreduce-bytes", opts->allreduce_bytes, spec.allreduce_bytes) ||
        !parse("alltoall-bytes", opts->alltoall_bytes, spec.alltoall_bytes)) {
      return runner::kExitBadInput;
    }
    if (auto problem = synth::validate(spec)) {
      std::cerr << fmt::format("error: --{}: {}\n", problem->flag, problem->message);
      return runner::kExitBadInput;
    }
    // Per iteration and rank: the collectives, and a COMP node before each all-to-all.
    const uint64_t per_iteration = uint64_t{spec.allreduces} + 2 * uint64_t{spec.alltoalls} + 1;
    if (auto problem = synth_nodes_problem(static_cast<uint64_t>(spec.ranks),
                                           per_iteration * spec.iterations)) {
      std::cerr << fmt::format("error: --iterations: {}\n", *problem);
      return runner::kExitBadInput;
    }
    SynthStaging staging(opts->output.prefix);
    auto summary =
        synth::write_moe_mix(spec, staging.prefix(), synth_write_format(opts->output.format));
    staging.commit();
    for (std::string& path : summary.paths) path = staging.final_path(path);
    summary.comm_groups_path = staging.final_path(summary.comm_groups_path);
    std::cout << synth_files_line(summary.paths);
    std::cout << fmt::format(
        "wrote comm groups: {} (group {}: all-reduces, group {}: all-to-alls, every rank in "
        "each)\n",
        summary.comm_groups_path, synth::kMoeMixAllReduceGroup, synth::kMoeMixAllToAllGroup);
    std::cout << "ops per rank trace (count / bytes):\n" << rank_ops_table(summary.ranks);
    return runner::kExitOk;
  };
}

}  // namespace etwire::cli
