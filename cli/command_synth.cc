// `etwire synth`: writes valid Chakra trace sets without a GPU cluster.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "common/units.h"
#include "trace/synth/synth.h"

namespace etwire::cli {

namespace {

struct SynthOptions {
  std::string out;
  std::string format = "et";
  // microbench
  std::string collective = "all_reduce";
  std::string bytes = "1MiB";
  int32_t ranks = 8;
  uint32_t iterations = 1;
  uint64_t compute_us = 0;
  std::string pg_name;
  // graph
  uint64_t nodes = 1000;
  uint32_t fan_out = 8;
  uint32_t shuffle_window = 0;
  uint64_t seed = 1;
};

trace::WriteFormat parse_format(const std::string& text) {
  if (text == "et") return trace::WriteFormat::kBinary;
  if (text == "et.gz" || text == "gz") return trace::WriteFormat::kBinaryGzip;
  return trace::WriteFormat::kFeederJson;  // validated by CLI11 before we get here
}

void make_parent_dir(const std::string& prefix) {
  std::filesystem::path parent = std::filesystem::path(prefix).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
}

void report(const std::vector<std::string>& paths) {
  uint64_t total = 0;
  for (const auto& p : paths) total += std::filesystem::file_size(p);
  std::cout << fmt::format("wrote {} rank file{} ({}): {}{}\n", paths.size(),
                           paths.size() == 1 ? "" : "s", format_bytes(total), paths.front(),
                           paths.size() > 1 ? " ..." : "");
}

}  // namespace

CommandAction add_synth_command(CLI::App& app) {
  auto opts = std::make_shared<SynthOptions>();
  auto* synth = app.add_subcommand(
      "synth", "Write a synthetic Chakra trace set: a collective microbenchmark or a large graph");
  synth->require_subcommand(1);

  auto add_common = [opts](CLI::App* cmd) {
    cmd->add_option("-o,--out", opts->out,
                    "Output prefix: files are written as PREFIX.<rank>.et (directories are made)")
        ->required();
    cmd->add_option("--format", opts->format, "File format: et, et.gz (gzip) or json (feeder JSON)")
        ->check(CLI::IsMember({"et", "et.gz", "gz", "json"}))
        ->capture_default_str();
  };

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

  return [opts, micro, graph]() -> int {
    const auto format = parse_format(opts->format);
    make_parent_dir(opts->out);
    if (micro->parsed()) {
      synth::MicrobenchSpec spec;
      if (opts->collective == "send_recv" || opts->collective == "sendrecv") {
        spec.collective.reset();
      } else if (auto type = trace::parse_collective_type(opts->collective)) {
        spec.collective = *type;
      } else {
        std::cerr << fmt::format("error: --collective: unknown collective \"{}\"\n",
                                 opts->collective);
        return kExitBadInput;
      }
      auto bytes = parse_bytes(opts->bytes);
      if (!bytes) {
        std::cerr << fmt::format("error: --bytes: \"{}\" is not a byte size (e.g. 4096, 64KiB)\n",
                                 opts->bytes);
        return kExitBadInput;
      }
      if (!spec.collective && opts->ranks < 2) {
        std::cerr << "error: --collective send_recv needs --ranks 2 or more\n";
        return kExitBadInput;
      }
      spec.bytes = *bytes;
      spec.ranks = opts->ranks;
      spec.iterations = opts->iterations;
      spec.compute_us = opts->compute_us;
      if (!opts->pg_name.empty()) spec.pg_name = opts->pg_name;
      report(synth::write_microbench(spec, opts->out, format));
      return kExitOk;
    }
    synth::GraphSpec spec;
    spec.nodes_per_rank = opts->nodes;
    spec.ranks = opts->ranks;
    spec.fan_out = opts->fan_out;
    spec.shuffle_window = opts->shuffle_window;
    spec.seed = opts->seed;
    (void)graph;
    report(synth::write_graph(spec, opts->out, format));
    return kExitOk;
  };
}

}  // namespace etwire::cli
