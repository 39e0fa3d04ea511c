// transport.entropy and transport.receiver: one source port per QP and go-back-N unless set
// otherwise, their settings refused without them, and both refused on a hardware RNIC, which
// picks its own source ports and takes out-of-order data as its firmware is set. A port's own
// receiver (ports[].receiver) overrides the transport's; on a hardware RNIC it says what the
// NIC does, for the twin that predicts it.
#include <gtest/gtest.h>

#include "control/resolve/config_loader.h"
#include "control/resolve/twin_prediction.h"
#include "tests/control/test_configs.h"

namespace etwire::control {
namespace {

using testing::kMinimalConfig;
using testing::load_inline;

TEST(EntropyConfig, PerQpUnlessSprayIsAsked) {
  const RunPlan plain = load_inline(kMinimalConfig);
  ASSERT_TRUE(plain.ok()) << plain.diagnostics.to_text();
  EXPECT_EQ(plain.config.transport.entropy.mode, config::EntropyMode::kPerQp);
  const RunPlan spray = load_inline(std::string(kMinimalConfig) +
                                    "transport: {entropy: {mode: spray, every: 4, values: 64}}\n");
  ASSERT_TRUE(spray.ok()) << spray.diagnostics.to_text();
  EXPECT_EQ(spray.config.transport.entropy.mode, config::EntropyMode::kSpray);
  EXPECT_EQ(spray.config.transport.entropy.every, 4u);
  EXPECT_EQ(spray.config.transport.entropy.values, 64u);
}

TEST(EntropyConfig, SpraySettingsWithoutSprayAndOutOfRangeAreRefused) {
  for (const auto& [yaml, says] : std::initializer_list<std::pair<const char*, const char*>>{
           {"transport: {entropy: {every: 4}}\n",
            "transport.entropy.every: every applies to entropy mode spray"},
           {"transport: {entropy: {mode: per-qp, values: 8}}\n",
            "transport.entropy.values: values applies to entropy mode spray"},
           {"transport: {entropy: {mode: spray, values: 1}}\n", "transport.entropy.values"},
           {"transport: {entropy: {mode: spray, values: 16385}}\n", "transport.entropy.values"},
           {"transport: {entropy: {mode: per-packet}}\n", "transport.entropy.mode"},
       }) {
    const RunPlan loaded = load_inline(std::string(kMinimalConfig) + yaml);
    EXPECT_FALSE(loaded.ok()) << yaml;
    EXPECT_NE(loaded.diagnostics.to_text().find(says), std::string::npos)
        << yaml << loaded.diagnostics.to_text();
  }
}

TEST(EntropyConfig, AHardwareRnicPicksItsOwnSourcePorts) {
  const std::string verbs_lab = testing::shipped_config("verbs-lab.yaml");
  std::vector<std::string> overrides{"transport.entropy.mode=spray"};
  const RunPlan hardware = load_config_file(verbs_lab, {.overrides = overrides});
  EXPECT_FALSE(hardware.ok());
  EXPECT_NE(hardware.diagnostics.to_text().find(
                "transport.entropy.mode: port \"rail0\" is a hardware RNIC"),
            std::string::npos)
      << hardware.diagnostics.to_text();
  overrides.emplace_back("verbs.rnic=software");
  const RunPlan software = load_config_file(verbs_lab, {.overrides = overrides});
  EXPECT_TRUE(software.ok()) << software.diagnostics.to_text();
}

TEST(ReceiverConfig, GoBackNUnlessOutOfOrderIsAsked) {
  const RunPlan plain = load_inline(kMinimalConfig);
  ASSERT_TRUE(plain.ok()) << plain.diagnostics.to_text();
  EXPECT_EQ(plain.config.transport.receiver, config::Receiver::kGoBackN);
  const RunPlan placed = load_inline(
      std::string(kMinimalConfig) +
      "transport: {receiver: out-of-order, out_of_order: {window: 512, loss_after: 32}}\n");
  ASSERT_TRUE(placed.ok()) << placed.diagnostics.to_text();
  EXPECT_EQ(placed.config.transport.receiver, config::Receiver::kOutOfOrder);
  EXPECT_EQ(placed.config.transport.out_of_order.window, 512u);
  EXPECT_EQ(placed.config.transport.out_of_order.loss_after, 32u);
}

TEST(ReceiverConfig, SettingsThatWouldNotActAreRefused) {
  for (const auto& [yaml, says] : std::initializer_list<std::pair<const char*, const char*>>{
           {"transport: {out_of_order: {window: 64}}\n",
            "transport.out_of_order: out_of_order applies to out-of-order receivers"},
           {"transport: {receiver: out-of-order, out_of_order: {window: 64, loss_after: 64}}\n",
            "transport.out_of_order.loss_after: loss_after (64) must be below window (64)"},
           {"transport: {receiver: out-of-order, out_of_order: {window: 32}}\n",
            "transport.out_of_order.window: loss_after (64) must be below window (32)"},
           {"transport: {receiver: selective}\n", "transport.receiver"},
       }) {
    const RunPlan loaded = load_inline(std::string(kMinimalConfig) + yaml);
    EXPECT_FALSE(loaded.ok()) << yaml;
    EXPECT_NE(loaded.diagnostics.to_text().find(says), std::string::npos)
        << yaml << loaded.diagnostics.to_text();
  }
}

TEST(ReceiverConfig, AHardwareRnicPlacesDataAsItsFirmwareIsSet) {
  const std::string verbs_lab = testing::shipped_config("verbs-lab.yaml");
  std::vector<std::string> overrides{"transport.receiver=out-of-order"};
  const RunPlan hardware = load_config_file(verbs_lab, {.overrides = overrides});
  EXPECT_FALSE(hardware.ok());
  EXPECT_NE(
      hardware.diagnostics.to_text().find("transport.receiver: port \"rail0\" is a hardware RNIC"),
      std::string::npos)
      << hardware.diagnostics.to_text();
  overrides.emplace_back("verbs.rnic=software");
  const RunPlan software = load_config_file(verbs_lab, {.overrides = overrides});
  EXPECT_TRUE(software.ok()) << software.diagnostics.to_text();
}

constexpr const char* kTwoKindsOfPort = R"(workload:
  jobs:
    - trace: traces/allreduce_8r/allreduce
ports:
  - {name: p, count: 4}
  - {name: q, count: 4, receiver: out-of-order}
)";

TEST(ReceiverConfig, APortsOwnReceiverOverridesTheTransports) {
  using config::Receiver;
  const RunPlan mixed = load_inline(std::string(kTwoKindsOfPort) +
                                    "transport: {out_of_order: {window: 512, loss_after: 32}}\n");
  ASSERT_TRUE(mixed.ok()) << mixed.diagnostics.to_text();
  const config::TransportConfig& t = mixed.config.transport;
  EXPECT_EQ(t.receiver, Receiver::kGoBackN);
  const std::vector<Receiver> expected{
      Receiver::kGoBackN,    Receiver::kGoBackN,    Receiver::kGoBackN,    Receiver::kGoBackN,
      Receiver::kOutOfOrder, Receiver::kOutOfOrder, Receiver::kOutOfOrder, Receiver::kOutOfOrder};
  EXPECT_EQ(t.port_receivers, expected);
  EXPECT_EQ(t.receiver_of(0), Receiver::kGoBackN);
  EXPECT_EQ(t.receiver_of(7), Receiver::kOutOfOrder);
  EXPECT_TRUE(t.any_out_of_order());
  EXPECT_EQ(t.out_of_order.window, 512u);
  // Every port as the transport: no table.
  const RunPlan alike =
      load_inline(std::string(kTwoKindsOfPort) + "transport: {receiver: out-of-order}\n");
  ASSERT_TRUE(alike.ok()) << alike.diagnostics.to_text();
  EXPECT_TRUE(alike.config.transport.port_receivers.empty());
  EXPECT_EQ(alike.config.transport.receiver_of(0), Receiver::kOutOfOrder);
}

TEST(ReceiverConfig, APortsReceiverIsOneOfTheTwo) {
  std::string yaml = kTwoKindsOfPort;
  yaml.replace(yaml.find("receiver: out-of-order"), 22, "receiver: selective");
  const RunPlan loaded = load_inline(yaml);
  EXPECT_FALSE(loaded.ok());
  EXPECT_NE(loaded.diagnostics.to_text().find("ports[1].receiver"), std::string::npos)
      << loaded.diagnostics.to_text();
}

TEST(ReceiverConfig, AHardwareRnicsPortSaysWhatTheNicDoesForThePrediction) {
  const std::string verbs_lab = testing::shipped_config("verbs-lab.yaml");
  const RunPlan lab =
      load_config_file(verbs_lab, {.overrides = {"ports[0].receiver=out-of-order"}});
  ASSERT_TRUE(lab.ok()) << lab.diagnostics.to_text();
  EXPECT_NE(lab.diagnostics.to_text().find(
                "ports[0].receiver: port \"rail0\" is a hardware RNIC: receiver out-of-order "
                "says what its firmware does"),
            std::string::npos)
      << lab.diagnostics.to_text();
  const RunPlan prediction = derive_plan(lab, twin_prediction());
  ASSERT_TRUE(prediction.ok()) << prediction.diagnostics.to_text();
  EXPECT_EQ(prediction.config.transport.receiver_of(0), config::Receiver::kOutOfOrder);
  EXPECT_EQ(prediction.config.ports[0].backend, config::Backend::kLoopback);
}

}  // namespace
}  // namespace etwire::control
