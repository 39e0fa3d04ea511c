// Faults of the configuration in whole runs on the twin (fabric.faults): a link that dies
// mid-run is routed around and its flows complete with retransmits, a leaf cut off from every
// spine fails the run loudly, and a PFC storm pauses the other NICs and stretches the victims'
// flows. The bundled 8-rank all-to-all on two leaves of four and two spines, 100G.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/testing/test_paths.h"

namespace etwire {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

struct FaultedRun {
  int code = -1;
  std::string output;
  nlohmann::json summary;
};

// Runs the all-to-all with `sets` (--set arguments) into `scratch`/`name`.
FaultedRun run_all_to_all(const fs::path& scratch, const std::string& name,
                          const std::string& sets) {
  const fs::path config = scratch / "alltoall.yaml";
  if (!fs::exists(config)) {
    std::ofstream(config)
        << "workload:\n  iterations: 4\n  jobs:\n    - trace: "
        << (etwire::testing::source_dir() / "configs/traces/alltoall_8r/alltoall").string()
        << "\nports:\n  - name: p\n    count: 8\n    speed: 100Gbps\n"
           "fabric:\n  topology: leaf-spine\n"
           "  leaf_spine: {ports_per_leaf: 4, spines: 2}\n";
  }
  std::string args = "run '" + config.string() + "' --out '" + (scratch / name).string() +
                     "' --no-progress --no-metrics " + sets;
  const auto result = etwire::testing::run_etwire(args);
  FaultedRun run{result.code, result.output, {}};
  std::ifstream in(scratch / name / "summary.json");
  if (in) run.summary = nlohmann::json::parse(in);
  return run;
}

uint64_t port_total(const nlohmann::json& summary, const char* counter) {
  uint64_t total = 0;
  for (const auto& port : summary["ports"]) total += port[counter].get<uint64_t>();
  return total;
}

std::string notes_of(const nlohmann::json& summary) {
  std::string text;
  for (const auto& note : summary["notes"]) text += note.get<std::string>() + "\n";
  return text;
}

// The second of four iterations runs from about 2.8 to 5.7 ms; its all-to-all is on the wire
// from about 3.0 ms.
TEST(FaultRun, ALinkDyingMidRunIsRoutedAroundAndItsFlowsCompleteWithRetransmits) {
  const auto scratch = etwire::testing::make_scratch_dir("fault-link-down");
  const FaultedRun run = run_all_to_all(
      scratch, "down",
      "--set 'fabric.faults=[{kind: link-down, link: leaf0/spine0, at: 4.5ms, detection: "
      "100us}]'");
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_EQ(run.summary["status"], "completed");
  EXPECT_EQ(run.summary["failed_flows"], 0);
  EXPECT_GT(port_total(run.summary, "retransmitted_packets"), 0u);
  const std::string notes = notes_of(run.summary);
  EXPECT_THAT(notes, HasSubstr("fabric.faults[0]: link leaf0/spine0 down from 4.5 ms"));
  EXPECT_THAT(notes, Not(HasSubstr(": 0 frames lost on it"))) << notes;
  EXPECT_THAT(run.output, HasSubstr("fabric.faults[0]"));  // the report shows it too
}

TEST(FaultRun, ALeafCutOffFromEverySpineFailsTheRunLoudly) {
  const auto scratch = etwire::testing::make_scratch_dir("fault-no-path");
  const FaultedRun run =
      run_all_to_all(scratch, "cut",
                     "--set transport.retransmit_timeout=1ms --set 'fabric.faults=["
                     "{kind: link-down, link: leaf0/spine0, at: 4.5ms, detection: 100us},"
                     "{kind: link-down, link: leaf0/spine1, at: 4.5ms, detection: 100us}]'");
  EXPECT_NE(run.code, 0) << run.output;
  EXPECT_EQ(run.summary["status"], "flows-failed");
  EXPECT_GT(run.summary["failed_flows"].get<uint64_t>(), 0u);
  EXPECT_THAT(notes_of(run.summary), HasSubstr("dropped in the fabric for want of a route"));
}

TEST(FaultRun, APfcStormPausesTheOtherNicsAndStretchesTheVictimsFlows) {
  const auto scratch = etwire::testing::make_scratch_dir("fault-storm");
  const FaultedRun calm = run_all_to_all(scratch, "calm", "--set fabric.pfc.enabled=true");
  const FaultedRun storm = run_all_to_all(
      scratch, "storm",
      "--set fabric.pfc.enabled=true --set 'fabric.faults=[{kind: pfc-storm, port: p5, at: 3ms, "
      "until: 4ms}]'");
  ASSERT_EQ(calm.code, 0) << calm.output;
  ASSERT_EQ(storm.code, 0) << storm.output;
  EXPECT_EQ(port_total(calm.summary, "pfc_pauses_received"), 0u);
  // The storm fills the queue toward p5; the switch pauses whoever feeds it, upstream.
  for (const auto& port : storm.summary["ports"]) {
    if (port["name"] == "p5") {
      EXPECT_GT(port["pfc_pauses_sent"].get<uint64_t>(), 0u);
    } else {
      EXPECT_GT(port["pfc_pauses_received"].get<uint64_t>(), 0u) << port["name"];
    }
  }
  const auto p99 = [](const FaultedRun& run) {
    return run.summary["fct"][0]["p99_ns"].get<uint64_t>();
  };
  EXPECT_GT(p99(storm), 2 * p99(calm));
  EXPECT_THAT(notes_of(storm.summary), HasSubstr("port p5 stormed PFC pauses on priority 3"));
}

}  // namespace
}  // namespace etwire
