// fabric.profile: a configuration names the device profile its twin takes. On a run whose ports
// are all on the twin the loader applies it, before --set; a lab's configuration keeps its own
// ports, and its prediction takes the profile (prediction_profile). A profile that cannot be
// read, or that names another, is refused at the key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "control/load/device_profile.h"
#include "control/resolve/twin_prediction.h"
#include "tests/control/test_configs.h"

namespace etwire::control {
namespace {

using testing::dpdk_ring_pair;
using testing::kMinimalConfig;

// A scratch folder holding `profile.yaml` with these `set` entries.
std::filesystem::path folder_with_profile(const std::string& name,
                                          const std::vector<std::string>& set) {
  const std::filesystem::path dir = etwire::testing::make_scratch_dir("named-profile-" + name);
  std::ofstream out(dir / "profile.yaml");
  out << "# fitted by hand\nset:\n";
  for (const std::string& entry : set) out << "  - \"" << entry << "\"\n";
  return dir;
}

// `yaml` loaded as if it were configs/inline.yaml (the bundled trace resolves), with `--set`s.
RunPlan load(const std::string& yaml, const std::vector<std::string>& overrides) {
  LoadOptions options;
  options.overrides = overrides;
  options.read_traces = false;
  return load_config_text(yaml, "inline.yaml", (etwire::testing::source_dir() / "configs").string(),
                          options);
}

TEST(NamedProfile, AppliesToARunOnTheTwinBeforeTheCommandLine) {
  const std::filesystem::path dir = folder_with_profile(
      "twin", {"fabric.ecn.kmin=20000", "fabric.ecn.kmax=60000", "ports[0].speed=30Mbps"});
  const std::string named = "fabric.profile=" + (dir / "profile.yaml").string();
  const RunPlan plan = load(kMinimalConfig, {named});
  ASSERT_TRUE(plan.ok()) << plan.diagnostics.to_text();
  EXPECT_EQ(plan.config.fabric.profile, (dir / "profile.yaml").string());
  EXPECT_EQ(plan.config.fabric.ecn.kmin_bytes, 20000u);
  EXPECT_EQ(plan.config.ports[0].speed_bps, 30'000'000u);
  EXPECT_TRUE(all_ports_on_loopback(plan));
  EXPECT_TRUE(prediction_profile(plan, {}).empty()) << "applied already";
  // The command line's --set comes after the profile's and wins.
  const RunPlan overridden = load(kMinimalConfig, {named, "fabric.ecn.kmin=30000"});
  ASSERT_TRUE(overridden.ok()) << overridden.diagnostics.to_text();
  EXPECT_EQ(overridden.config.fabric.ecn.kmin_bytes, 30000u);
  EXPECT_EQ(overridden.config.fabric.ecn.kmax_bytes, 60000u);
  // Without the key the same file is the configuration's own.
  EXPECT_NE(load(kMinimalConfig, {}).config.fabric.ecn.kmin_bytes, 20000u);
}

TEST(NamedProfile, ALabRunKeepsItsPortsAndItsPredictionTakesTheProfile) {
  const std::filesystem::path dir =
      folder_with_profile("lab", {"ports[0].speed=30Mbps", "fabric.ecn.kmin=20000"});
  const std::string named = "fabric.profile=" + (dir / "profile.yaml").string();
  const RunPlan lab = load(dpdk_ring_pair("", ""), {named});
  ASSERT_TRUE(lab.ok()) << lab.diagnostics.to_text();
  EXPECT_EQ(lab.config.fabric.profile, (dir / "profile.yaml").string());
  EXPECT_NE(lab.config.ports[0].speed_bps, 30'000'000u) << "a profile's speed is the device's";
  EXPECT_NE(lab.config.fabric.ecn.kmin_bytes, 20000u);
  // The prediction: the profile's settings, then a profile from the command line.
  EXPECT_EQ(prediction_profile(lab, {"fabric.ecn.kmin=25000"}),
            (std::vector<std::string>{"ports[0].speed=30Mbps", "fabric.ecn.kmin=20000",
                                      "fabric.ecn.kmin=25000"}));
}

TEST(NamedProfile, ResolvesAgainstTheConfigurationsFolder) {
  const std::filesystem::path dir = folder_with_profile("relative", {"fabric.ecn.kmin=20000"});
  std::ofstream(dir / "run.yaml")
      << "workload:\n  jobs:\n    - trace: "
      << (etwire::testing::source_dir() / "configs/traces/allreduce_8r/allreduce").string()
      << "\nports:\n  - name: p\n    count: 8\n"
         "fabric:\n  profile: profile.yaml\n";
  LoadOptions options;
  options.read_traces = false;
  const RunPlan plan = load_config_file((dir / "run.yaml").string(), options);
  ASSERT_TRUE(plan.ok()) << plan.diagnostics.to_text();
  EXPECT_EQ(plan.config.fabric.ecn.kmin_bytes, 20000u);
}

TEST(NamedProfile, RefusesAProfileThatCannotBeUsedAtItsKey) {
  const std::string yaml = std::string(kMinimalConfig) + "fabric:\n  profile: no-such.yaml\n";
  const RunPlan missing = load(yaml, {});
  const Diagnostic* error = testing::only_error(missing);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->key_path, "fabric.profile");
  EXPECT_EQ(error->where.line, 8);
  EXPECT_NE(error->message.find("not a usable device profile"), std::string::npos)
      << error->message;
  EXPECT_NE(error->message.find("no-such.yaml: cannot read the device profile"), std::string::npos)
      << error->message;

  // A profile naming another: which settings apply would depend on the order files name files.
  const std::filesystem::path dir = folder_with_profile("chain", {"fabric.profile=other.yaml"});
  const RunPlan chained =
      load(kMinimalConfig, {"fabric.profile=" + (dir / "profile.yaml").string()});
  error = testing::only_error(chained);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->key_path, "fabric.profile");
  EXPECT_NE(error->message.find("fabric.profile: a device profile sets the twin's model only"),
            std::string::npos)
      << error->message;
}

TEST(NamedProfile, NamesItselfInAProblemWithItsSetting) {
  const std::filesystem::path dir = folder_with_profile("bad-value", {"fabric.ecn.pmax=2"});
  const RunPlan plan = load(kMinimalConfig, {"fabric.profile=" + (dir / "profile.yaml").string()});
  const Diagnostic* error = testing::only_error(plan);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->key_path, "fabric.ecn.pmax");
  EXPECT_NE(error->message.find("a setting of the device profile " +
                                (dir / "profile.yaml").string() + ": fabric.profile"),
            std::string::npos)
      << error->message;
  // The same value given on the command line is the command line's.
  const RunPlan own = load(
      kMinimalConfig, {"fabric.profile=" + (dir / "profile.yaml").string(), "fabric.ecn.pmax=2"});
  for (const Diagnostic& d : own.diagnostics.items()) {
    EXPECT_EQ(d.message.find("device profile"), std::string::npos) << d.message;
  }
}

}  // namespace
}  // namespace etwire::control
