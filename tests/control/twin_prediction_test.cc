// run --predict's plan: derived from the lab's, every port a loopback port on the fabric twin,
// no next hop and no capture, the lab's trace sets and placement kept; and checked as a twin run
// is, fabric.infragraph's NICs against the twin's ports included.
#include "control/resolve/twin_prediction.h"

#include <gtest/gtest.h>

#include "tests/control/test_configs.h"

namespace etwire::control {
namespace {

using testing::shipped_config;

TEST(TwinPrediction, PutsLoopbackPortsInPlaceOfTheLabsAndKeepsItsTraces) {
  const RunPlan lab = load_config_file(shipped_config("dpdk-ring.yaml"),
                                       LoadOptions{{"telemetry.record.pcap=true"}, true});
  ASSERT_TRUE(lab.ok()) << lab.diagnostics.to_text();
  EXPECT_FALSE(all_ports_on_loopback(lab));
  EXPECT_FALSE(lab.twin.ports) << "the lab's ports are cabled to a device, not to the twin";
  const RunPlan prediction = derive_plan(lab, twin_prediction());
  ASSERT_TRUE(prediction.ok()) << prediction.diagnostics.to_text();
  EXPECT_TRUE(all_ports_on_loopback(prediction));
  EXPECT_FALSE(prediction.config.telemetry.record.pcap);
  ASSERT_TRUE(prediction.twin.layout);
  EXPECT_EQ(prediction.twin.layout->hosts(), 2u);
  ASSERT_TRUE(prediction.trace_sets[0] && lab.trace_sets[0]);
  EXPECT_EQ(prediction.trace_sets[0]->files().size(), lab.trace_sets[0]->files().size());
  ASSERT_TRUE(prediction.placements[0]);
  EXPECT_EQ(prediction.placements[0]->port_of_rank, lab.placements[0]->port_of_rank);
  EXPECT_NE(prediction.config_digest, lab.config_digest);
  // The lab's device sections (dpdk:, each port's dpdk:) mean nothing on the twin: the
  // prediction does not warn that they are ignored, as it would for a file that has them.
  EXPECT_EQ(lab.diagnostics.warning_count(), 0u) << lab.diagnostics.to_text();
  EXPECT_EQ(prediction.diagnostics.warning_count(), 0u) << prediction.diagnostics.to_text();
  // The lab's plan is as it was.
  EXPECT_EQ(lab.config.ports[0].backend, config::Backend::kDpdk);
  EXPECT_TRUE(lab.config.telemetry.record.pcap);
}

TEST(TwinPrediction, HoldsTheGraphsNicsAgainstTheTwinsPorts) {
  // Two DPDK ports and a graph of eight host NICs: nothing to hold against in the lab, whose
  // ports face a device; the prediction puts two ports on a twin of eight.
  const std::string graph =
      (etwire::testing::source_dir() / "tests/control/configs/infragraph/clos-2x2.yaml").string();
  const RunPlan lab = load_config_file(shipped_config("dpdk-ring.yaml"),
                                       LoadOptions{{"fabric.infragraph=" + graph}, true});
  ASSERT_TRUE(lab.ok()) << lab.diagnostics.to_text();
  const RunPlan prediction = derive_plan(lab, twin_prediction());
  EXPECT_FALSE(prediction.ok());
  bool found = false;
  for (const Diagnostic& d : prediction.diagnostics.items()) {
    found =
        found ||
        (d.key_path == "fabric.infragraph" &&
         d.message.find("the graph cables 8 NICs of its hosts to switches") != std::string::npos &&
         d.message.find("the run has 2 ports on the fabric twin") != std::string::npos);
  }
  EXPECT_TRUE(found) << prediction.diagnostics.to_text();
}

}  // namespace
}  // namespace etwire::control
