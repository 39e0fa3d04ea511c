// What the in-process DPDK data plane tests share: the EAL starts once per process, with one
// set of arguments, which every test of this binary gives; the flows a run reports, kept; and
// the 8-rank all-to-all they replay, in a scratch directory of the suite.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "engine/flow_sink.h"
#include "tests/testing/test_paths.h"
#include "trace/synth/synth.h"
#include "transport/flow_record.h"

namespace etwire::dataplane {

// Three lcores whatever the machine has: lcore 2 shares CPU 0 with the main lcore.
inline constexpr const char* kShellEalArgs =
    R"([--no-pci, --no-huge, --no-shconf, -m, "512", --lcores, "0@0,1@1,2@0"])";

struct Collect final : engine::FlowSink {
  void append(const transport::FlowRecord& record) override { records.push_back(record); }
  void flush() override {}
  std::vector<transport::FlowRecord> records;
};

// Writes an all-to-all of `bytes` over 8 ranks, twice, as trace `prefix`; returns the prefix.
inline std::string write_all_to_all(const std::string& prefix, uint64_t bytes) {
  synth::MicrobenchSpec spec;
  spec.collective = trace::CollectiveType::kAllToAll;
  spec.bytes = bytes;
  spec.ranks = 8;
  spec.iterations = 2;
  synth::write_microbench(spec, prefix);
  return prefix;
}

// A suite's scratch directory and the all-to-all of `kBytes` it replays, made once per suite.
template <uint64_t kBytes>
class AllToAllSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = etwire::testing::make_scratch_dir("dpdk-a2a-" + std::to_string(kBytes));
    trace_ = write_all_to_all((dir_ / "t").string(), kBytes);
  }

  static inline std::filesystem::path dir_;
  static inline std::string trace_;
};

}  // namespace etwire::dataplane
