// Program generation speed and memory for large collectives (issue: a 1024-rank all-to-all, 1M
// flows, and a 1024-rank ring all-reduce with 64 chunks). Each mode runs in its own process so
// that its peak RSS is its own.
//
// Programs store one operation per chunk run (program.h): the ring covers all chunks with one
// operation per step and QP piece, so "operations" (what is stored) and "flows" (send chunk
// operations: the per-chunk, per-QP transfers the expanded program describes) differ by up to the
// chunk count.
//
//   bench_collectives --mode alltoall  [--ranks N] [--chunks K] [--qps Q] [--repeat R]
//       every member's program materialised at once
//   bench_collectives --mode ring      [--ranks N] [--chunks K] [--qps Q] [--repeat R]
//                     [--channels C] [--hosts H]
//       every member's program materialised at once; with C channels laid rail by rail over
//       hosts of H ranks (ring_layout.h)
//   bench_collectives --mode ring-stream [--ranks N] [--chunks K] [--qps Q] [--threads T]
//       members generated one at a time into a reused program, as a transport that starts each
//       member when it runs would; also reports one member on its own
//   Either ring mode takes --algo NAME for another all-reduce algorithm (tree, nvls, ...).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "collectives/generate.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace coll = etwire::collectives;

struct Options {
  std::string mode = "alltoall";
  uint32_t ranks = 1024;
  uint32_t chunks = 0;  // 0: 64 for the ring, 1 for the all-to-all
  uint32_t qps = 1;
  uint32_t threads = 1;
  uint32_t channels = 0;  // 0: one ring in group order (CollectiveSpec::channels unset)
  uint32_t hosts = 1;     // ranks per host
  int repeat = 3;
  coll::Algorithm algorithm = coll::Algorithm::kRing;  // of the ring modes' all-reduce
};

[[noreturn]] void usage(const char* problem) {
  std::fprintf(stderr,
               "bench_collectives: %s\nusage: bench_collectives [--mode alltoall|ring|ring-stream] "
               "[--ranks N] [--chunks K] [--qps Q] [--threads T] [--repeat R] [--channels C] "
               "[--hosts H] [--algo NAME]\n",
               problem);
  std::exit(2);
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) usage(("missing value for " + arg).c_str());
    const std::string value = argv[++i];
    if (arg == "--mode") {
      o.mode = value;
    } else if (arg == "--ranks") {
      o.ranks = static_cast<uint32_t>(std::stoul(value));
    } else if (arg == "--chunks") {
      o.chunks = static_cast<uint32_t>(std::stoul(value));
    } else if (arg == "--qps") {
      o.qps = static_cast<uint32_t>(std::stoul(value));
    } else if (arg == "--threads") {
      o.threads = std::max(1u, static_cast<uint32_t>(std::stoul(value)));
    } else if (arg == "--channels") {
      o.channels = static_cast<uint32_t>(std::stoul(value));
    } else if (arg == "--hosts") {
      o.hosts = std::max(1u, static_cast<uint32_t>(std::stoul(value)));
    } else if (arg == "--repeat") {
      o.repeat = std::max(1, std::stoi(value));
    } else if (arg == "--algo") {
      const auto algorithm = coll::parse_algorithm(value);
      if (!algorithm) usage(("unknown algorithm " + value).c_str());
      o.algorithm = *algorithm;
    } else {
      usage(("unknown option " + arg).c_str());
    }
  }
  return o;
}

std::string algorithm_label(const Options& o) {
  return std::string(coll::algorithm_name(o.algorithm));
}

uint64_t peak_rss_kb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_maxrss);
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

coll::CollectiveSpec make_spec(const Options& o, bool all_to_all) {
  coll::CollectiveSpec spec;
  spec.collective = all_to_all ? etwire::trace::CollectiveType::kAllToAll
                               : etwire::trace::CollectiveType::kAllReduce;
  spec.algorithm = all_to_all ? coll::Algorithm::kDirect : o.algorithm;
  for (uint32_t r = 0; r < o.ranks; ++r) spec.ranks.push_back(static_cast<int32_t>(r));
  spec.bytes = uint64_t{1} << 30;
  spec.chunks = o.chunks != 0 ? o.chunks : all_to_all ? 1 : 64;
  spec.qps = o.qps;
  spec.ranks_per_host = o.hosts;
  if (o.channels > 0) spec.channels = o.channels;
  return spec;
}

// Flows: send chunk operations, i.e. every send operation expanded into its chunks.
uint64_t flows_of(const coll::CollectiveProgram& program) {
  uint64_t flows = 0;
  for (size_t m = 0; m < program.programs(); ++m) {
    for (uint32_t i = 0; i < program.ops(m); ++i) {
      const coll::OpView op = program.op(m, i);
      if (op.is_send()) flows += op.chunks.chunk_count;
    }
  }
  return flows;
}

void materialise(const Options& o, bool all_to_all) {
  const coll::CollectiveSpec spec = make_spec(o, all_to_all);
  const coll::ProgramGenerator generator(spec);
  double best = 1e30;
  double first = 0;  // the process's first run: nothing of the heap reused yet
  coll::CollectiveProgram program;
  for (int r = 0; r < o.repeat; ++r) {
    program = coll::CollectiveProgram();  // release the previous run: peak RSS is one program
    coll::CollectiveProgram fresh;        // a fresh object: include allocation and page faults
    const auto start = Clock::now();
    generator.generate(fresh);
    const double seconds = seconds_since(start);
    if (r == 0) first = seconds;
    best = std::min(best, seconds);
    program = std::move(fresh);
  }
  const uint64_t flows = flows_of(program);
  const auto bytes = static_cast<double>(program.memory_bytes());
  std::printf(
      "%s: %u ranks, %u chunk(s), %u QP(s), %u channel(s), hosts of %u\n"
      "  %llu operations stored, %llu dependencies; expanded: %llu chunk operations, %llu flows "
      "(send chunk operations)\n"
      "  generate all members: %.3f s (best of %d; first run %.3f s), %.1f M operations/s, %.1f M "
      "flows/s\n"
      "  program arrays: %.1f MiB (%.1f bytes/operation, %.2f bytes/flow), peak RSS %.1f MiB\n",
      all_to_all ? "all-to-all direct" : ("all-reduce " + algorithm_label(o)).c_str(), o.ranks,
      spec.chunks, o.qps, generator.spec().channels(), o.hosts,
      static_cast<unsigned long long>(program.ops()),
      static_cast<unsigned long long>(program.dependencies()),
      static_cast<unsigned long long>(program.chunk_ops()), static_cast<unsigned long long>(flows),
      best, o.repeat, first, static_cast<double>(program.ops()) / best / 1e6,
      static_cast<double>(flows) / best / 1e6, bytes / (1 << 20),
      bytes / static_cast<double>(program.ops()), bytes / static_cast<double>(flows),
      static_cast<double>(peak_rss_kb()) / 1024);
}

void stream(const Options& o) {
  const coll::CollectiveSpec spec = make_spec(o, false);
  // One member alone (best of `repeat`).
  {
    const coll::ProgramGenerator generator(spec);
    coll::CollectiveProgram program;
    double best = 1e30;
    for (int r = 0; r < o.repeat; ++r) {
      const auto start = Clock::now();
      generator.generate_member(0, program);
      best = std::min(best, seconds_since(start));
    }
    std::printf(
        "all-reduce %s: %u ranks, %u chunks, %u QP(s), %u channel(s), hosts of %u\n  one member: "
        "%llu operations (%llu chunk operations) in %.3f ms, %.3f MiB of arrays\n",
        algorithm_label(o).c_str(), o.ranks, spec.chunks, o.qps, generator.spec().channels(),
        o.hosts, static_cast<unsigned long long>(program.ops()),
        static_cast<unsigned long long>(program.chunk_ops()), best * 1e3,
        static_cast<double>(program.memory_bytes()) / (1 << 20));
  }
  // Every member, one at a time per thread, each thread reusing one program object.
  std::vector<uint64_t> ops(o.threads, 0);
  std::vector<uint64_t> sends(o.threads, 0);
  const auto start = Clock::now();
  std::vector<std::thread> workers;
  for (uint32_t t = 0; t < o.threads; ++t) {
    workers.emplace_back([&, t] {
      const coll::ProgramGenerator generator(spec);
      coll::CollectiveProgram program;
      for (uint32_t p = t; p < o.ranks; p += o.threads) {
        generator.generate_member(p, program);
        ops[t] += program.ops();
        sends[t] += flows_of(program);
      }
    });
  }
  for (auto& w : workers) w.join();
  const double total = seconds_since(start);
  uint64_t all_ops = 0;
  uint64_t all_sends = 0;
  for (uint32_t t = 0; t < o.threads; ++t) {
    all_ops += ops[t];
    all_sends += sends[t];
  }
  std::printf(
      "  every member, streamed on %u thread(s): %llu flows (send chunk operations), %llu "
      "operations in "
      "%.3f s, %.1f M operations/s\n  peak RSS %.1f MiB\n",
      o.threads, static_cast<unsigned long long>(all_sends),
      static_cast<unsigned long long>(all_ops), total, static_cast<double>(all_ops) / total / 1e6,
      static_cast<double>(peak_rss_kb()) / 1024);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_args(argc, argv);
  if (o.mode == "alltoall") {
    materialise(o, true);
  } else if (o.mode == "ring") {
    materialise(o, false);
  } else if (o.mode == "ring-stream") {
    stream(o);
  } else {
    usage("unknown mode");
  }
  return 0;
}
