// transport.retransmission and the keys of each model: each model reads only its own keys, one
// set for the other is refused with its line, and a hardware RNIC, whose firmware decides, takes
// none of them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/control/test_configs.h"
#include "transport/retransmit_timing.h"

namespace etwire::control {
namespace {

using testing::kMinimalConfig;
using testing::load_inline;
using testing::only_error;

// kMinimalConfig is 6 lines: `transport:` is line 7, its keys from line 8.
std::string with_transport(const std::string& keys) {
  return std::string(kMinimalConfig) + "transport:\n" + keys;
}

// The first timeout is a quarter of the QP's timeout unless set: a configuration that raises
// retransmit_timeout for a shared host's pauses raises it too.
TEST(RetransmissionConfig, AdaptiveByDefaultWithAFirstTimeoutAQuarterOfTheQpTimeout) {
  const auto defaults = load_inline(kMinimalConfig, {}, false);
  ASSERT_TRUE(defaults.ok()) << defaults.diagnostics.to_text();
  const config::TransportConfig& t = defaults.config.transport;
  EXPECT_EQ(t.retransmission, config::Retransmission::kAdaptive);
  EXPECT_EQ(t.adaptive_first_timeout_ns, 0u);
  EXPECT_FALSE(t.retransmission_model_set);
  for (uint32_t qpn = 0; qpn < 100; ++qpn) {
    const clock::Nanos first = transport::retransmit_timing::timeout(t, 0, qpn);
    EXPECT_GE(first, 16'777'216);
    EXPECT_LT(first, 2 * 16'777'216);
  }

  const auto raised = load_inline(with_transport("  retransmit_timeout: 100ms\n"), {}, false);
  ASSERT_TRUE(raised.ok()) << raised.diagnostics.to_text();
  EXPECT_GE(transport::retransmit_timing::timeout(raised.config.transport, 0, 7), 25'000'000);
  EXPECT_FALSE(raised.config.transport.retransmission_model_set);
}

TEST(RetransmissionConfig, EachModelReadsItsKeys) {
  const auto adaptive = load_inline(
      with_transport("  retransmission: adaptive\n  adaptive_first_timeout: 64us\n"), {}, false);
  ASSERT_TRUE(adaptive.ok()) << adaptive.diagnostics.to_text();
  EXPECT_EQ(adaptive.config.transport.adaptive_first_timeout_ns, 64'000u);
  EXPECT_TRUE(adaptive.config.transport.retransmission_model_set);

  const auto fixed = load_inline(
      with_transport("  retransmission: fixed\n  naks_count_as_retries: false\n"), {}, false);
  ASSERT_TRUE(fixed.ok()) << fixed.diagnostics.to_text();
  EXPECT_EQ(fixed.config.transport.retransmission, config::Retransmission::kFixed);
  EXPECT_FALSE(fixed.config.transport.naks_count_as_retries);
  EXPECT_TRUE(fixed.config.transport.retransmission_model_set);

  const auto by_override = load_inline(kMinimalConfig, {"transport.retransmission=fixed"}, false);
  ASSERT_TRUE(by_override.ok()) << by_override.diagnostics.to_text();
  EXPECT_EQ(by_override.config.transport.retransmission, config::Retransmission::kFixed);
}

TEST(RetransmissionConfig, AKeyOfTheOtherModelIsRefusedWithItsLine) {
  struct Case {
    std::string keys;
    std::string key_path;
    int line;
    std::string says;
  };
  const Case cases[] = {
      {"  naks_count_as_retries: false\n", "transport.naks_count_as_retries", 8,
       "applies to retransmission: fixed"},
      {"  retransmission: fixed\n  adaptive_first_timeout: 1ms\n",
       "transport.adaptive_first_timeout", 9, "applies to retransmission: adaptive"},
      {"  retransmit_timeout: 1ms\n  adaptive_first_timeout: 2ms\n",
       "transport.adaptive_first_timeout", 9, "longer than retransmit_timeout"},
      {"  retransmission: selective\n", "transport.retransmission", 8, "adaptive"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.keys);
    const auto loaded = load_inline(with_transport(c.keys), {}, false);
    EXPECT_FALSE(loaded.ok());
    const Diagnostic* error = only_error(loaded);
    ASSERT_NE(error, nullptr);
    EXPECT_EQ(error->key_path, c.key_path);
    EXPECT_EQ(error->where.line, c.line) << format_diagnostic(*error);
    EXPECT_NE(format_diagnostic(*error).find(c.says), std::string::npos)
        << format_diagnostic(*error);
  }
}

TEST(RetransmissionConfig, AHardwareRnicTakesNoneOfTheModelKeys) {
  const std::string verbs_lab = testing::shipped_config("verbs-lab.yaml");
  const auto plain = load_config_file(verbs_lab);
  ASSERT_TRUE(plain.ok()) << plain.diagnostics.to_text();
  for (const char* set :
       {"transport.retransmission=adaptive", "transport.retransmission=fixed",
        "transport.adaptive_first_timeout=1ms", "transport.naks_count_as_retries=true"}) {
    SCOPED_TRACE(set);
    std::vector<std::string> overrides{set};
    if (std::string(set).find("naks") != std::string::npos) {
      overrides.insert(overrides.begin(), "transport.retransmission=fixed");
    }
    const auto loaded = load_config_file(verbs_lab, {.overrides = overrides});
    EXPECT_FALSE(loaded.ok());
    const Diagnostic* error = only_error(loaded);
    ASSERT_NE(error, nullptr);
    EXPECT_EQ(error->key_path, "transport.retransmission");
    EXPECT_NE(error->message.find("hardware RNIC"), std::string::npos) << error->message;
    // The software RNIC runs etwire's transport, so there they act.
    overrides.emplace_back("verbs.rnic=software");
    const auto software = load_config_file(verbs_lab, {.overrides = overrides});
    EXPECT_TRUE(software.ok()) << software.diagnostics.to_text();
  }
}

}  // namespace
}  // namespace etwire::control
