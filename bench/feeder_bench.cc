// Feeder throughput and memory on a large synthetic trace: decode only, then the feeder end to end
// (open + read + resolve + issue + complete) with 1 and with 64 nodes in flight. Each mode runs in
// a fresh process so that its peak RSS is its own.
//
//   bench_feeder [--mode all|decode|decode_ring|inflight1|inflight64] [--nodes N] [--shuffle N]
//                [--window N] [--policy NAME] [--repeat N] [FILE]
//
// FILE defaults to $TMPDIR/etwire-bench/graph_<nodes>.0.et and is generated with
// synth::write_graph when absent (a FILE ending in ".0.et" names the prefix to generate).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "trace/feeder/feeder.h"
#include "trace/node_source.h"
#include "trace/synth/synth.h"

namespace {

using Clock = std::chrono::steady_clock;
using etwire::feeder::Feeder;
using etwire::feeder::FeederOptions;
using etwire::feeder::IssuedNode;

struct Options {
  std::string mode = "all";
  uint64_t nodes = 5000000;
  uint32_t shuffle = 0;
  uint32_t window = FeederOptions{}.window;
  etwire::feeder::Policy policy = etwire::feeder::Policy::kFifo;
  int repeat = 3;
  std::string file;
};

struct Result {
  uint64_t nodes = 0;
  double seconds = 0;
  uint64_t peak_live = 0;
  uint64_t peak_rss_kb = 0;
};

[[noreturn]] void usage(const char* problem) {
  std::fprintf(stderr,
               "bench_feeder: %s\nusage: bench_feeder [--mode all|decode|inflight1|inflight64] "
               "[--nodes N] [--shuffle N] [--window N] [--policy fifo|start-time|comm-first] "
               "[--repeat N] [FILE]\n",
               problem);
  std::exit(2);
}

Options parse_args(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value for " + arg).c_str());
      return argv[++i];
    };
    if (arg == "--mode") {
      options.mode = value();
    } else if (arg == "--nodes") {
      options.nodes = std::stoull(value());
    } else if (arg == "--shuffle") {
      options.shuffle = static_cast<uint32_t>(std::stoul(value()));
    } else if (arg == "--window") {
      options.window = static_cast<uint32_t>(std::stoul(value()));
    } else if (arg == "--policy") {
      auto policy = etwire::feeder::parse_policy(value());
      if (!policy) usage("unknown policy");
      options.policy = *policy;
    } else if (arg == "--repeat") {
      options.repeat = std::max(1, std::stoi(value()));
    } else if (!arg.empty() && arg[0] == '-') {
      usage(("unknown option " + arg).c_str());
    } else {
      options.file = arg;
    }
  }
  if (options.file.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp ? tmp : "/tmp") + "/etwire-bench";
    std::string name = "graph_" + std::to_string(options.nodes);
    if (options.shuffle != 0) name += "_shuffle" + std::to_string(options.shuffle);
    options.file = dir + "/" + name + ".0.et";
  }
  return options;
}

void generate_if_absent(const Options& options) {
  if (std::filesystem::exists(options.file)) return;
  const std::string suffix = ".0.et";
  if (options.file.size() <= suffix.size() ||
      options.file.compare(options.file.size() - suffix.size(), suffix.size(), suffix) != 0) {
    throw std::runtime_error(options.file + " does not exist and does not end in .0.et");
  }
  std::string prefix = options.file.substr(0, options.file.size() - suffix.size());
  std::filesystem::path dir = std::filesystem::path(prefix).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir);
  etwire::synth::GraphSpec spec;
  spec.nodes_per_rank = options.nodes;
  spec.ranks = 1;
  spec.shuffle_window = options.shuffle;
  std::fprintf(stderr, "generating %s (%llu nodes)...\n", options.file.c_str(),
               static_cast<unsigned long long>(options.nodes));
  auto start = Clock::now();
  etwire::synth::write_graph(spec, prefix);
  std::fprintf(stderr, "generated in %.1f s\n",
               std::chrono::duration<double>(Clock::now() - start).count());
}

uint64_t peak_rss_kb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_maxrss);
}

Result run_decode(const Options& options) {
  Result result;
  auto start = Clock::now();
  std::unique_ptr<etwire::trace::NodeSource> source = etwire::trace::open_node_source(options.file);
  etwire::trace::TraceNode node;
  while (source->next(node)) ++result.nodes;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

// Decodes into `window` nodes used in turn, as the feeder's slots are: separates the cost of
// decoding into memory that has gone cold from the cost of the feeder's own bookkeeping.
Result run_decode_ring(const Options& options) {
  Result result;
  auto start = Clock::now();
  std::unique_ptr<etwire::trace::NodeSource> source = etwire::trace::open_node_source(options.file);
  std::vector<etwire::trace::TraceNode> ring(std::max<uint32_t>(options.window, 1));
  size_t at = 0;
  while (source->next(ring[at])) {
    ++result.nodes;
    if (++at == ring.size()) at = 0;
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

Result run_feeder(const Options& options, size_t max_in_flight) {
  Result result;
  auto start = Clock::now();
  FeederOptions feeder_options;
  feeder_options.window = options.window;
  feeder_options.policy = options.policy;
  Feeder feeder(etwire::trace::open_node_source(options.file), feeder_options);
  // Completes the oldest in-flight node first, as a simple engine would.
  std::vector<IssuedNode> in_flight(max_in_flight);
  size_t oldest = 0;
  size_t count = 0;
  for (;;) {
    while (count < max_in_flight) {
      std::optional<IssuedNode> issued = feeder.next();
      if (!issued) break;
      in_flight[(oldest + count) % max_in_flight] = *issued;
      ++count;
    }
    if (count == 0) break;
    feeder.complete(in_flight[oldest]);
    oldest = (oldest + 1) % max_in_flight;
    --count;
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (!feeder.done()) throw std::runtime_error("feeder stopped before the end of the trace");
  result.nodes = feeder.stats().nodes_completed;
  result.peak_live = feeder.stats().peak_live_nodes;
  return result;
}

// Runs one mode `repeat` times in this process and prints one line: the best run.
int run_child(const Options& options) {
  Result best;
  for (int i = 0; i < options.repeat; ++i) {
    Result result;
    if (options.mode == "decode") {
      result = run_decode(options);
    } else if (options.mode == "decode_ring") {
      result = run_decode_ring(options);
    } else if (options.mode == "inflight1") {
      result = run_feeder(options, 1);
    } else if (options.mode == "inflight64") {
      result = run_feeder(options, 64);
    } else {
      usage("unknown mode");
    }
    if (i == 0 || result.seconds < best.seconds) best = result;
  }
  best.peak_rss_kb = peak_rss_kb();
  std::printf("RESULT %s %llu %.6f %llu %llu\n", options.mode.c_str(),
              static_cast<unsigned long long>(best.nodes), best.seconds,
              static_cast<unsigned long long>(best.peak_live),
              static_cast<unsigned long long>(best.peak_rss_kb));
  return 0;
}

std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::optional<Result> run_in_fresh_process(const char* self, const Options& options,
                                           const std::string& mode) {
  std::string command = quoted(self) + " --mode " + mode + " --window " +
                        std::to_string(options.window) + " --policy " +
                        std::string(etwire::feeder::policy_name(options.policy)) + " --repeat " +
                        std::to_string(options.repeat) + " " + quoted(options.file);
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  char line[512];
  std::optional<Result> result;
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    char name[64];
    unsigned long long nodes = 0, peak_live = 0, rss = 0;
    double seconds = 0;
    if (std::sscanf(line, "RESULT %63s %llu %lf %llu %llu", name, &nodes, &seconds, &peak_live,
                    &rss) == 5) {
      result = Result{nodes, seconds, peak_live, rss};
    }
  }
  if (pclose(pipe) != 0) return std::nullopt;
  return result;
}

int run_all(const char* self, const Options& options) {
  generate_if_absent(options);
  uint64_t bytes = std::filesystem::file_size(options.file);
  std::printf(
      "feeder benchmark: %s (%.1f MB), window %u, policy %s, best of %d, one process "
      "per mode\n\n",
      options.file.c_str(), static_cast<double>(bytes) / 1e6, options.window,
      std::string(etwire::feeder::policy_name(options.policy)).c_str(), options.repeat);
  std::printf("%-24s %10s %9s %12s %10s %13s %11s\n", "mode", "nodes", "seconds", "nodes/s",
              "vs decode", "peak RSS MB", "peak live");
  struct Row {
    const char* mode;
    const char* label;
  };
  const Row rows[] = {{"decode", "decode only"},
                      {"decode_ring", "decode, window of nodes"},
                      {"inflight1", "feeder, 1 in flight"},
                      {"inflight64", "feeder, 64 in flight"}};
  double decode_rate = 0;
  int status = 0;
  for (const Row& row : rows) {
    std::optional<Result> result = run_in_fresh_process(self, options, row.mode);
    if (!result) {
      std::printf("%-24s failed\n", row.label);
      status = 1;
      continue;
    }
    double rate = static_cast<double>(result->nodes) / result->seconds;
    if (std::string(row.mode) == "decode") decode_rate = rate;
    bool decode_only = std::string(row.mode).rfind("decode", 0) == 0;
    std::string peak_live = decode_only ? "-" : std::to_string(result->peak_live);
    std::printf("%-24s %10llu %9.3f %10.2f M %9.2fx %13.1f %11s\n", row.label,
                static_cast<unsigned long long>(result->nodes), result->seconds, rate / 1e6,
                decode_rate > 0 ? rate / decode_rate : 0.0,
                static_cast<double>(result->peak_rss_kb) / 1024.0, peak_live.c_str());
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options options = parse_args(argc, argv);
    if (options.mode == "all") {
      std::error_code error;
      std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
      return run_all(error ? argv[0] : self.c_str(), options);
    }
    generate_if_absent(options);
    return run_child(options);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench_feeder: %s\n", error.what());
    return 1;
  }
}
