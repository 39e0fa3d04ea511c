// The per-QP statistics' keys: telemetry.record.qps (qps.csv, on by default) and
// telemetry.metrics.per_qp (per-QP Prometheus series, off by default), and what a wrong type
// says, with its line.
#include <gtest/gtest.h>

#include <string>

#include "tests/control/test_configs.h"

namespace etwire::control {
namespace {

using testing::kMinimalConfig;
using testing::load_inline;
using testing::only_error;

TEST(QpStatsConfig, QpsCsvOnAndPerQpSeriesOffByDefault) {
  const auto loaded = load_inline(kMinimalConfig, {}, false);
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  EXPECT_TRUE(loaded.config.telemetry.record.qps);
  EXPECT_FALSE(loaded.config.telemetry.metrics.per_qp);
}

TEST(QpStatsConfig, BothKeysAreRead) {
  const std::string yaml = std::string(kMinimalConfig) +
                           "telemetry:\n"
                           "  metrics:\n"
                           "    per_qp: true\n"
                           "  record:\n"
                           "    qps: false\n";
  const auto loaded = load_inline(yaml, {}, false);
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  EXPECT_FALSE(loaded.config.telemetry.record.qps);
  EXPECT_TRUE(loaded.config.telemetry.metrics.per_qp);

  const auto overridden =
      load_inline(yaml, {"telemetry.record.qps=true", "telemetry.metrics.per_qp=false"}, false);
  ASSERT_TRUE(overridden.ok()) << overridden.diagnostics.to_text();
  EXPECT_TRUE(overridden.config.telemetry.record.qps);
  EXPECT_FALSE(overridden.config.telemetry.metrics.per_qp);
}

TEST(QpStatsConfig, AWrongTypeNamesTheKeyAndItsLine) {
  // kMinimalConfig is 6 lines: telemetry is line 7, the values lines 9 and 11.
  const std::string yaml = std::string(kMinimalConfig) +
                           "telemetry:\n"
                           "  metrics:\n"
                           "    per_qp: [1, 2]\n"
                           "  record:\n"
                           "    qps: sometimes\n";
  const auto loaded = load_inline(yaml, {}, false);
  EXPECT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.diagnostics.error_count(), 2u) << loaded.diagnostics.to_text();
  bool per_qp = false;
  bool qps = false;
  for (const Diagnostic& d : loaded.diagnostics.items()) {
    EXPECT_EQ(d.problem, Problem::kWrongType) << format_diagnostic(d);
    EXPECT_EQ(d.where.file, "inline.yaml");
    if (d.key_path == "telemetry.metrics.per_qp") {
      per_qp = true;
      EXPECT_EQ(d.where.line, 9) << format_diagnostic(d);
    } else if (d.key_path == "telemetry.record.qps") {
      qps = true;
      EXPECT_EQ(d.where.line, 11) << format_diagnostic(d);
      EXPECT_NE(format_diagnostic(d).find("inline.yaml:11:"), std::string::npos)
          << format_diagnostic(d);
    }
  }
  EXPECT_TRUE(per_qp && qps) << loaded.diagnostics.to_text();

  const auto by_override = load_inline(kMinimalConfig, {"telemetry.record.qps=maybe"}, false);
  const Diagnostic* d = only_error(by_override);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->problem, Problem::kWrongType);
  EXPECT_EQ(d->key_path, "telemetry.record.qps");
  EXPECT_EQ(d->where.override_text, "telemetry.record.qps=maybe");
}

TEST(QpStatsConfig, AMisspeltKeyIsUnknownWithTheNearestName) {
  const auto loaded = load_inline(std::string(kMinimalConfig) +
                                      "telemetry:\n"
                                      "  record:\n"
                                      "    qpss: false\n",
                                  {}, false);
  const Diagnostic* d = only_error(loaded);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->problem, Problem::kUnknownKey);
  EXPECT_EQ(d->where.line, 9);
  EXPECT_NE(d->message.find("\"qps\""), std::string::npos) << d->message;
}

}  // namespace
}  // namespace etwire::control
