// The problems a configuration gives the twin, as values found without building it: the key to
// blame and why, the same problem the twin's constructor throws.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "clock/virtual_clock.h"
#include "tests/twin/nic_driver.h"
#include "twin/fabric/fabric_twin.h"
#include "twin/fabric/setup_problems.h"

namespace etwire::twin::testing {
namespace {

// What building the twin throws, as the problem it carries; nullopt when it builds.
std::optional<SetupProblem> thrown(const config::FabricConfig& config,
                                   const std::vector<TwinPortSpec>& ports) {
  clock::VirtualClock clock;
  try {
    FabricTwin twin(config, ports, clock, 1);
  } catch (const SetupError& error) {
    return error.problem();
  }
  return std::nullopt;
}

struct Case {
  std::string what;
  config::FabricConfig config;
  std::string key;
  std::string why_starts;
};

std::vector<Case> bad_configurations() {
  std::vector<Case> cases;
  config::FabricConfig config = quiet_fabric();
  config.ecn.enabled = true;
  config.ecn.kmin_bytes = 2000;
  config.ecn.kmax_bytes = 1000;
  cases.push_back({"ecn thresholds", config, "fabric.ecn", "kmin (2000 B) is above kmax"});

  config = quiet_fabric();
  config.port_overrides.push_back({});
  config.port_overrides.back().port = "h0";
  config.port_overrides.back().drop_probability = 2;
  cases.push_back({"an override", config, "fabric",
                   "fabric override for port \"h0\" drop_probability: must be between 0 and 1"});

  config = quiet_fabric();
  config.topology = config::Topology::kLeafSpine;
  config.leaf_spine.ports_per_leaf = 2;
  config.leaf_spine.spines = 0;
  cases.push_back({"a layout", config, "fabric", "fabric.leaf_spine.spines is 0"});

  config = quiet_fabric();
  config.buffer.ingress_reserve_bytes = config.buffer.size_bytes;
  cases.push_back({"the buffer", config, "fabric.buffer.ingress_reserve", "4 ports x "});

  config = quiet_fabric();
  config.faults.push_back({});
  config.faults.back().kind = config::FaultKind::kLinkDown;
  config.faults.back().link = "nowhere";
  config.faults.back().key_path = "fabric.faults[0]";
  cases.push_back({"a fault", config, "fabric.faults[0]", "no link \"nowhere\" on the twin"});

  config = quiet_fabric();
  for (const uint64_t at : {uint64_t{0}, uint64_t{1'000'000}}) {
    config.faults.push_back({});
    config.faults.back().kind = config::FaultKind::kDegrade;
    config.faults.back().link = "nic1";
    config.faults.back().speed_bps = 10'000'000'000;
    config.faults.back().at_ns = at;
    config.faults.back().key_path =
        "fabric.faults[" + std::to_string(config.faults.size() - 1) + "]";
  }
  cases.push_back(
      {"overlapping faults", config, "fabric.faults[1]", "it overlaps fabric.faults[0]"});
  return cases;
}

TEST(TwinSetupProblems, NameTheKeyAndWhyWithoutBuildingTheTwin) {
  const auto ports = uniform_ports(4);
  for (const Case& c : bad_configurations()) {
    const std::optional<SetupProblem> found = find_setup_problem(c.config, ports);
    ASSERT_TRUE(found) << c.what;
    EXPECT_EQ(found->key, c.key) << c.what;
    EXPECT_TRUE(found->why.starts_with(c.why_starts)) << c.what << ": " << found->why;
  }
  EXPECT_FALSE(find_setup_problem(quiet_fabric(), ports));
}

TEST(TwinSetupProblems, AreWhatTheTwinThrows) {
  const auto ports = uniform_ports(4);
  for (const Case& c : bad_configurations()) {
    const std::optional<SetupProblem> found = find_setup_problem(c.config, ports);
    const std::optional<SetupProblem> threw = thrown(c.config, ports);
    ASSERT_TRUE(found && threw) << c.what;
    EXPECT_EQ(found->key, threw->key) << c.what;
    EXPECT_EQ(found->why, threw->why) << c.what;
  }
  EXPECT_FALSE(thrown(quiet_fabric(), ports));
}

TEST(TwinSetupProblems, MessageNamesTheKeyUnlessTheSectionIsToBlame) {
  EXPECT_EQ((SetupProblem{"fabric.ecn", "kmin above kmax"}).message(),
            "fabric twin: fabric.ecn: kmin above kmax");
  EXPECT_EQ((SetupProblem{"fabric", "no ports"}).message(), "fabric twin: no ports");
}

}  // namespace
}  // namespace etwire::twin::testing
