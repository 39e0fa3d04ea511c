// What the verbs backend costs over the loopback backend on the same workload, both in virtual
// time over the same fabric twin: the loopback data plane drives etwire's transport directly; the
// verbs data plane posts work requests to the software RNIC, polls its completion queues and joins
// the flows, and the RNIC moves the bytes between registered buffers. Same run, same machine:
// the ratio is what the verbs layer adds per message and per work request.
//
//   bench_verbs [ranks] [bytes] [iterations]      (default 8 ranks, 64 MiB, 4 iterations)
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "control/resolve/config_loader.h"
#include "dataplane/loopback/loopback_data_plane.h"
#include "dataplane/verbs/verbs_backend.h"
#include "engine/run_engine.h"
#include "trace/synth/synth.h"

namespace {

using namespace etwire;

struct Timing {
  double seconds = 0;
  uint64_t flows = 0;
  uint64_t events = 0;
};

Timing run(const std::string& text, const std::filesystem::path& dir, bool verbs) {
  auto loaded = control::load_config_text(text, (dir / "bench.yaml").string(), dir.string());
  if (!loaded.ok()) {
    fmt::print(stderr, "{}", loaded.diagnostics.to_text());
    std::exit(2);
  }
  engine::RunOptions options;
  options.data_plane = verbs ? dataplane::DataPlaneFactory(dataplane::make_verbs_data_plane)
                             : dataplane::loopback_data_plane_factory();
  engine::RunEngine engine(loaded, options);
  const auto start = std::chrono::steady_clock::now();
  const engine::RunResults& results = engine.run();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (results.status != engine::RunStatus::kCompleted) {
    fmt::print(stderr, "run did not complete: {}\n", results.diagnosis);
    std::exit(1);
  }
  return {seconds, results.flows, results.events};
}

}  // namespace

int main(int argc, char** argv) {
  const int32_t ranks = argc > 1 ? std::atoi(argv[1]) : 8;
  const uint64_t bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 64ull << 20;
  const uint32_t iterations = argc > 3 ? static_cast<uint32_t>(std::atoi(argv[3])) : 4;
  const auto dir =
      std::filesystem::temp_directory_path() / fmt::format("etwire-bench-verbs-{}", getpid());
  std::filesystem::create_directories(dir);
  synth::MicrobenchSpec spec;
  spec.bytes = bytes;
  spec.ranks = ranks;
  spec.iterations = iterations;
  synth::write_microbench(spec, (dir / "ar").string());

  const std::string common = fmt::format(
      "run: {{name: bench, seed: 1}}\n"
      "workload:\n  jobs:\n    - {{name: j, trace: {}}}\n"
      "collectives: {{algorithms: {{all_reduce: ring}}}}\n",
      (dir / "ar").string());
  const std::string loopback =
      common +
      fmt::format("ports:\n  - {{name: p, count: {}, speed: 100Gbps, mtu: 4200}}\n", ranks);
  fmt::print("{} ranks, all_reduce of {} B, {} iterations, ring, 100 Gb/s single switch\n", ranks,
             bytes, iterations);
  fmt::print("{:<34} {:>9} {:>8} {:>12} {:>7}\n", "data plane", "wall_s", "flows", "events",
             "ratio");
  const Timing base = run(loopback, dir, false);
  fmt::print("{:<34} {:>9.3f} {:>8} {:>12} {:>7.2f}\n", "loopback", base.seconds, base.flows,
             base.events, 1.0);
  for (const char* max_message : {"1MiB", "64KiB"}) {
    const std::string verbs =
        common + fmt::format(
                     "ports:\n  - {{name: p, count: {}, speed: 100Gbps, mtu: 4200, ipv4: "
                     "10.1.0.1, backend: verbs, verbs: {{device: \"d{{i}}\"}}}}\n"
                     "verbs: {{rnic: software, max_message: {}}}\n",
                     ranks, max_message);
    const Timing t = run(verbs, dir, true);
    fmt::print("{:<34} {:>9.3f} {:>8} {:>12} {:>7.2f}\n",
               fmt::format("verbs, software RNIC, {} WRs", max_message), t.seconds, t.flows,
               t.events, t.seconds / base.seconds);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
