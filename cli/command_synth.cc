// `etwire synth`: writes valid Chakra trace sets without a GPU cluster.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/synth_output.h"
#include "cli/synth_subcommands.h"
#include "common/units.h"
#include "runner/exit_codes.h"
#include "trace/synth/synth.h"

namespace etwire::cli {

namespace {

struct SynthOptions {
  SynthOutput output;
  // microbench
  std::string collective = "all_reduce";
  std::string bytes = "1MiB";
  int32_t ranks = 8;
  uint32_t iterations = 1;
  uint64_t compute_us = 0;
  std::string pg_name;
  std::vector<bool> involved_dim;
  // graph
  uint64_t nodes = 1000;
  uint32_t fan_out = 8;
  uint32_t shuffle_window = 0;
  uint64_t seed = 1;
};

// synth microbench: one collective (or a send/recv ring) per iteration on every rank.
int write_microbench(const SynthOptions& opts, synth::WriteFormat format) {
  // Each iteration: the collective (a send and a recv for send_recv), and a COMP node before it.
  const uint64_t per_iteration = 2 + (opts.compute_us > 0 ? 1 : 0);
  if (auto problem = synth_nodes_problem(static_cast<uint64_t>(opts.ranks),
                                         uint64_t{opts.iterations} * per_iteration)) {
    std::cerr << fmt::format("error: --iterations: {}\n", *problem);
    return runner::kExitBadInput;
  }
  synth::MicrobenchSpec spec;
  if (opts.collective == "send_recv" || opts.collective == "sendrecv") {
    spec.collective.reset();
  } else if (auto type = trace::parse_collective_type(opts.collective)) {
    spec.collective = *type;
  } else {
    std::cerr << fmt::format("error: --collective: unknown collective \"{}\"\n", opts.collective);
    return runner::kExitBadInput;
  }
  auto bytes = parse_bytes(opts.bytes);
  if (!bytes) {
    std::cerr << fmt::format("error: --bytes: \"{}\" is not a byte size (e.g. 4096, 64KiB)\n",
                             opts.bytes);
    return runner::kExitBadInput;
  }
  if (!spec.collective && opts.ranks < 2) {
    std::cerr << "error: --collective send_recv needs --ranks 2 or more\n";
    return runner::kExitBadInput;
  }
  spec.bytes = *bytes;
  spec.ranks = opts.ranks;
  spec.iterations = opts.iterations;
  spec.compute_us = opts.compute_us;
  if (!opts.pg_name.empty()) spec.pg_name = opts.pg_name;
  spec.involved_dim = opts.involved_dim;
  SynthStaging staging(opts.output.prefix);
  std::vector<std::string> paths = synth::write_microbench(spec, staging.prefix(), format);
  staging.commit();
  for (std::string& path : paths) path = staging.final_path(path);
  std::cout << synth_files_line(paths);
  return runner::kExitOk;
}

// synth graph: hub -> fan-out COMP nodes -> fan-in, repeated.
int write_graph(const SynthOptions& opts, synth::WriteFormat format) {
  if (auto problem = synth_nodes_problem(static_cast<uint64_t>(opts.ranks), opts.nodes)) {
    std::cerr << fmt::format("error: --nodes: {}\n", *problem);
    return runner::kExitBadInput;
  }
  synth::GraphSpec spec;
  spec.nodes_per_rank = opts.nodes;
  spec.ranks = opts.ranks;
  spec.fan_out = opts.fan_out;
  spec.shuffle_window = opts.shuffle_window;
  spec.seed = opts.seed;
  SynthStaging staging(opts.output.prefix);
  std::vector<std::string> paths = synth::write_graph(spec, staging.prefix(), format);
  staging.commit();
  for (std::string& path : paths) path = staging.final_path(path);
  std::cout << synth_files_line(paths);
  return runner::kExitOk;
}

}  // namespace

CommandAction add_synth_command(CLI::App& app) {
  auto opts = std::make_shared<SynthOptions>();
  auto* synth = app.add_subcommand(
      "synth",
      "Write a synthetic Chakra trace set: a collective microbenchmark, a large graph, transformer "
      "training steps under TP/SP/DP/FSDP/PP/EP, or the all-reduce + all-to-all mix");
  synth->require_subcommand(1);

  auto add_common = [opts](CLI::App* cmd) { add_synth_output_options(cmd, opts->output); };

  auto* micro = synth->add_subcommand(
      "microbench", "One collective (or a send/recv ring) per iteration on every rank");
  add_common(micro);
  micro
      ->add_option("-c,--collective", opts->collective,
                   "all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, gather, "
                   "scatter, reduce_scatter_block, barrier, or send_recv (rank r sends to r+1)")
      ->capture_default_str();
  micro->add_option("-b,--bytes", opts->bytes, "comm_size per collective, e.g. 4096, 64KiB, 1GiB")
      ->capture_default_str();
  micro->add_option("-n,--ranks", opts->ranks, "Number of ranks (files)")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  micro->add_option("-i,--iterations", opts->iterations, "Collectives per rank, chained")
      ->check(CLI::Range(1u, 100000000u))
      ->capture_default_str();
  micro
      ->add_option("--compute-us", opts->compute_us,
                   "A COMP node of this many microseconds before each collective (0 = none)")
      ->capture_default_str();
  micro->add_option("--pg", opts->pg_name, "pg_name to write on collectives (default: none)");
  micro
      ->add_option("--dims", opts->involved_dim,
                   "involved_dim to write on collectives, e.g. true,true (default: none)")
      ->delimiter(',');

  auto* graph = synth->add_subcommand(
      "graph", "A large dependency graph: hub -> fan-out COMP nodes -> fan-in, repeated");
  add_common(graph);
  graph->add_option("-N,--nodes", opts->nodes, "Nodes per rank")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40))
      ->capture_default_str();
  graph->add_option("-n,--ranks", opts->ranks, "Number of ranks (files)")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  graph->add_option("--fan-out", opts->fan_out, "COMP nodes each hub fans out to")
      ->check(CLI::Range(1u, 1000000u))
      ->capture_default_str();
  graph
      ->add_option("--shuffle-window", opts->shuffle_window,
                   "Shuffle records within groups of this many, so children precede parents")
      ->capture_default_str();
  graph->add_option("--seed", opts->seed, "Seed for the shuffle")->capture_default_str();

  // Each registers its subcommand last: that is the one to ask whether it was parsed.
  CommandAction model_action = add_synth_model_command(*synth);
  CLI::App* model = synth->get_subcommands({}).back();
  CommandAction moe_mix_action = add_synth_moe_mix_command(*synth);
  CLI::App* moe_mix = synth->get_subcommands({}).back();

  return [opts, micro, model, model_action, moe_mix, moe_mix_action]() -> int {
    if (model->parsed()) return model_action();
    if (moe_mix->parsed()) return moe_mix_action();
    const auto format = synth_write_format(opts->output.format);
    if (micro->parsed()) return write_microbench(*opts, format);
    return write_graph(*opts, format);
  };
}

}  // namespace etwire::cli
