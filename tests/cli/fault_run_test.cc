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

// Every port's drops are the sum of its drops by cause.
void expect_drops_add_up(const nlohmann::json& summary) {
  for (const auto& port : summary["ports"]) {
    uint64_t causes = 0;
    for (const char* cause :
         {"drops_buffer", "drops_link_down", "drops_fault", "drops_bad_icrc", "drops_other"}) {
      causes += port[cause].get<uint64_t>();
    }
    EXPECT_EQ(causes, port["drops"].get<uint64_t>()) << port.dump();
  }
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
  // A link between switches is no port's cable: what it lost is in the fault's note, not in a
  // port's drops.
  expect_drops_add_up(run.summary);
  EXPECT_EQ(port_total(run.summary, "drops_fault") + port_total(run.summary, "drops_bad_icrc"), 0u);
}

TEST(FaultRun, DropsAreSplitByCause) {
  const auto scratch = etwire::testing::make_scratch_dir("fault-drop-causes");
  const FaultedRun run =
      run_all_to_all(scratch, "lossy",
                     "--set 'fabric.faults=[{kind: lossy, link: p0, drop_probability: 0.01, "
                     "corrupt_probability: 0.02}]'");
  ASSERT_EQ(run.code, 0) << run.output;
  expect_drops_add_up(run.summary);
  // Lost on p0's cable: counted at p0. Damaged there: discarded by whichever NIC received them.
  EXPECT_GT(run.summary["ports"][0]["drops_fault"].get<uint64_t>(), 0u);
  EXPECT_EQ(port_total(run.summary, "drops_fault"),
            run.summary["ports"][0]["drops_fault"].get<uint64_t>());
  EXPECT_GT(port_total(run.summary, "drops_bad_icrc"), 0u);
  EXPECT_EQ(port_total(run.summary, "drops_link_down"), 0u);
  EXPECT_EQ(port_total(run.summary, "drops_other"), 0u);

  // A port's own cable down for a while: its frames lost there are link-down drops.
  const FaultedRun down = run_all_to_all(
      scratch, "down",
      "--set 'fabric.faults=[{kind: link-down, link: p1, at: 4.5ms, until: 4.7ms, detection: "
      "100us}]'");
  ASSERT_EQ(down.code, 0) << down.output;
  expect_drops_add_up(down.summary);
  EXPECT_GT(down.summary["ports"][1]["drops_link_down"].get<uint64_t>(), 0u);
  EXPECT_EQ(port_total(down.summary, "drops_link_down"),
            down.summary["ports"][1]["drops_link_down"].get<uint64_t>());
}

TEST(FaultRun, ALeafCutOffFromEverySpineFailsTheRunLoudly) {
  const auto scratch = etwire::testing::make_scratch_dir("fault-no-path");
  const FaultedRun run =
      run_all_to_all(scratch, "cut",
                     "--set transport.retransmit_timeout=1ms --set 'fabric.faults=["
                     "{kind: link-down, link: leaf0/spine0, at: 4.5ms, detection: 100us},"
                     "{kind: link-down, link: leaf0/spine1, at: 4.5ms, detection: 100us}]' "
                     ">/dev/null");  // the report aside: run.output is stderr alone
  EXPECT_NE(run.code, 0) << run.output;
  EXPECT_EQ(run.summary["status"], "flows-failed");
  EXPECT_GT(run.summary["failed_flows"].get<uint64_t>(), 0u);
  // Stderr says so, not only the exit code: a script may keep the report elsewhere.
  EXPECT_THAT(run.output, HasSubstr("error: " + run.summary["failed_flows"].dump() + " of " +
                                    run.summary["flows"].dump() + " flows failed ("))
      << run.output;
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
