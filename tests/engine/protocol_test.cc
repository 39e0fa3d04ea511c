// The protocols on the wire (docs/collectives.md, "Protocols"): LL doubles a collective's wire
// bytes and LL128 adds a flag word per 120 bytes, each cutting it into its own messages; and a
// connection holds at most a window of slices in flight, so on a long link the receiver's credits,
// not the line rate, set the pace.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "control/resolve/config_loader.h"
#include "engine/run_engine.h"
#include "tests/testing/loopback_options.h"
#include "tests/testing/test_paths.h"
#include "trace/synth/synth.h"

namespace etwire::engine {
namespace {

namespace fs = std::filesystem;

// One `collective` of `bytes` over `ranks` ranks, one per 100 Gb/s loopback port on one switch;
// `extra` is appended to the configuration.
CollectiveRecord run_one(trace::CollectiveType collective, const std::string& name, uint64_t bytes,
                         int32_t ranks, const std::string& extra) {
  const fs::path dir = testing::make_scratch_dir("engine-protocol-" + name);
  synth::MicrobenchSpec spec;
  spec.collective = collective;
  spec.bytes = bytes;
  spec.ranks = ranks;
  const std::string prefix = (dir / "t").string();
  synth::write_microbench(spec, prefix);
  const std::string text = fmt::format(
      "run: {{name: test, seed: 1}}\nworkload:\n  jobs:\n    - trace: {}\n"
      "ports:\n  - {{name: h, count: {}, backend: loopback, speed: 100Gbps, mtu: 4200}}\n{}",
      prefix, ranks, extra);
  auto loaded = control::load_config_text(text, (dir / "test.yaml").string(), dir.string());
  EXPECT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  RunEngine engine(loaded, testing::loopback());
  const RunResults results = engine.run();
  EXPECT_EQ(results.status, RunStatus::kCompleted) << results.diagnosis;
  EXPECT_EQ(results.failed_flows, 0u);
  EXPECT_EQ(results.collectives.size(), 1u);
  return results.collectives.empty() ? CollectiveRecord{} : results.collectives[0];
}

CollectiveRecord all_reduce(const std::string& name, uint64_t bytes, int32_t ranks,
                            const std::string& extra) {
  return run_one(trace::CollectiveType::kAllReduce, name, bytes, ranks, extra);
}

TEST(Protocols, LlDoublesTheWireBytesAndLl128AddsAFlagWordPer120) {
  constexpr uint64_t kBytes = 8 << 20;  // 1 MiB blocks on 8 ranks
  const CollectiveRecord simple = all_reduce("simple", kBytes, 8, "");
  const CollectiveRecord ll = all_reduce("ll", kBytes, 8, "collectives: {protocol: ll}\n");
  const CollectiveRecord ll128 = all_reduce("ll128", kBytes, 8, "collectives: {protocol: ll128}\n");
  // A ring all-reduce: 2 (n - 1) blocks from each of n ranks.
  EXPECT_EQ(simple.wire_bytes, 2u * 7 * 8 * (1 << 20));
  EXPECT_EQ(ll.wire_bytes, 2 * simple.wire_bytes);
  // Each block is one full LL128 message of 576,000 data bytes and the rest, padded to a line.
  const uint64_t block_wire = 614400 + (((1 << 20) - 576000 + 119) / 120) * 128;
  EXPECT_EQ(ll128.wire_bytes, 2u * 7 * 8 * block_wire);
  // Messages: one slice of 1 MiB per Simple block, 32 of 32 KiB per LL block, two per LL128.
  EXPECT_EQ(ll.flows, 32 * simple.flows);
  EXPECT_EQ(ll128.flows, 2 * simple.flows);
  // Bandwidth-bound: LL's time is close to twice Simple's, LL128's about 16/15 of it.
  const double ll_ratio = static_cast<double>(ll.cct()) / static_cast<double>(simple.cct());
  const double ll128_ratio = static_cast<double>(ll128.cct()) / static_cast<double>(simple.cct());
  EXPECT_GT(ll_ratio, 1.9);
  EXPECT_LT(ll_ratio, 2.1);
  EXPECT_GT(ll128_ratio, 1.03);
  EXPECT_LT(ll128_ratio, 1.12);
  // The algorithm's bytes stay the data's: busbw falls with the protocol's overhead.
  EXPECT_EQ(ll.algbw_bytes, simple.algbw_bytes);
}

// Two ranks on a switch whose links take 1 ms each way: a round trip (data out over two links,
// the acknowledgement back over two) is at least 4 ms, so a connection with W slices of 1 MiB
// in flight moves at most W MiB per round trip, far below the line rate. The window is the
// buffer: 4 MiB by default, in four slices of two of its eight slots; 32 MiB in 32 slices.
TEST(Protocols, TheReceiversCreditsPaceALongLink) {
  constexpr uint64_t kBytes = 64 << 20;  // two steps of 32 slices each way
  const std::string link = "fabric: {propagation_delay: 1ms}\n";
  const CollectiveRecord four = all_reduce("window4", kBytes, 2, link);
  const CollectiveRecord many =
      all_reduce("window32", kBytes, 2,
                 link + "collectives: {buffer_size: 32MiB, slots: 64, slice_slots: 2}\n");
  constexpr double kRoundTripNs = 4e6;
  constexpr double kSliceNs = (1 << 20) * 8 / 100.0;  // one slice at the line rate
  // Each step's last four slices leave seven round trips after its first (slice k waits for the
  // acknowledgement of slice k - 4) and arrive half a trip later; the next step needs them.
  EXPECT_GE(static_cast<double>(four.cct()), 2 * 7.5 * kRoundTripNs);
  EXPECT_LE(static_cast<double>(four.cct()), 1.1 * (16 * kRoundTripNs + 64 * kSliceNs));
  // With 32 slices in flight each step is one round trip and its bytes at the line rate.
  EXPECT_LE(static_cast<double>(many.cct()), 1.1 * 2 * (kRoundTripNs + 33 * kSliceNs));
  EXPECT_EQ(four.wire_bytes, many.wire_bytes);
}

// Each rank of an all-to-all sends to every other on a connection of its own, each with its own
// window of credits (the engine finds a connection's window by the last one its sender used, and
// an all-to-all's sender moves between them). On 1 ms links with windows of 4 slices every
// connection's 16 slices take at least 3.5 round trips; with 32 slices a window holds them all.
TEST(Protocols, EachConnectionOfAnAllToAllHasItsOwnCredits) {
  constexpr int32_t kRanks = 3;
  constexpr uint64_t kBytes = uint64_t{kRanks} * (16 << 20);  // 16 MiB to each peer
  const std::string link = "fabric: {propagation_delay: 1ms}\n";
  const CollectiveRecord four =
      run_one(trace::CollectiveType::kAllToAll, "a2a-window4", kBytes, kRanks, link);
  const CollectiveRecord many =
      run_one(trace::CollectiveType::kAllToAll, "a2a-window32", kBytes, kRanks,
              link + "collectives: {buffer_size: 32MiB, slots: 64, slice_slots: 2}\n");
  constexpr double kRoundTripNs = 4e6;
  constexpr double kSliceNs = (1 << 20) * 8 / 100.0;
  // Slice k waits for the acknowledgement of slice k - 4: the last of 16 leaves three round
  // trips after the first and arrives half a trip later.
  EXPECT_GE(static_cast<double>(four.cct()), 3.5 * kRoundTripNs);
  // All of a rank's 32 slices in flight at once: one trip and its bytes at the line rate.
  EXPECT_LE(static_cast<double>(many.cct()), 1.1 * (kRoundTripNs + 33 * kSliceNs));
  EXPECT_LT(many.cct(), four.cct());
  EXPECT_EQ(four.wire_bytes, many.wire_bytes);
}

// Under auto each collective runs the protocol the tuner picks for its size: on eight
// single-rank servers at 100 Gb/s, LL for 64 KiB and Simple for 64 MiB.
TEST(Protocols, AutoRunsEachCollectiveInItsPick) {
  const std::string tuned = "collectives: {protocol: auto}\n";
  const CollectiveRecord small = all_reduce("auto-small", 64 << 10, 8, tuned);
  const CollectiveRecord small_simple = all_reduce("simple-small", 64 << 10, 8, "");
  EXPECT_EQ(small.protocol, config::Protocol::kLl);
  EXPECT_EQ(small.wire_bytes, 2 * small_simple.wire_bytes);
  const CollectiveRecord large = all_reduce("auto-large", 64 << 20, 8, tuned);
  EXPECT_EQ(large.protocol, config::Protocol::kSimple);
  EXPECT_EQ(large.wire_bytes, uint64_t{2} * 7 * ((64u << 20) / 8) * 8);  // 2 (n - 1) blocks a rank
}

}  // namespace
}  // namespace etwire::engine
