// Per-QP Prometheus series (telemetry.metrics.per_qp): after a run they hold what the run's QP
// records hold, a role has series only for the counters it keeps, and without the switch there
// is no per-QP series at all.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "control/resolve/config_loader.h"
#include "engine/run_engine.h"
#include "outputs/telemetry/run_telemetry.h"
#include "tests/telemetry/exposition.h"
#include "tests/testing/loopback_options.h"
#include "tests/testing/test_paths.h"

namespace etwire::telemetry {
namespace {

using testing::parse_exposition;
using testing::sample_value;
using testing::samples_named;

// The congestion example, one iteration: CNPs and rate cuts on some QPs.
struct TelemetryRun {
  explicit TelemetryRun(bool per_qp) {
    control::LoadOptions options;
    options.overrides = {"workload.iterations=1", "workload.warmup_iterations=0",
                         std::string("telemetry.metrics.per_qp=") + (per_qp ? "true" : "false")};
    loaded = control::load_config_file(
        (etwire::testing::source_dir() / "configs" / "twin-congestion.yaml").string(), options);
    EXPECT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
    engine = std::make_unique<engine::RunEngine>(loaded, etwire::testing::loopback());
    config::MetricsEndpoint no_server;
    no_server.enabled = false;
    telemetry = std::make_unique<RunTelemetry>(engine->metric_labels(), no_server);
    engine->set_telemetry(&telemetry->ring());
    results = &engine->run();
    telemetry->finish();
    samples = parse_exposition(telemetry->metrics().text());
  }

  control::RunPlan loaded;
  std::unique_ptr<engine::RunEngine> engine;
  std::unique_ptr<RunTelemetry> telemetry;
  const engine::RunResults* results = nullptr;
  std::vector<testing::Sample> samples;
};

TEST(QpMetrics, PerQpSeriesMatchTheRunsQpRecords) {
  const TelemetryRun run(true);
  ASSERT_EQ(run.results->status, engine::RunStatus::kCompleted);
  ASSERT_TRUE(run.results->qps_counted);
  ASSERT_FALSE(run.results->qps.empty());
  const auto& s = run.samples;
  EXPECT_EQ(sample_value(s, "etwire_telemetry_records_dropped_total"), 0.0);
  EXPECT_EQ(samples_named(s, "etwire_qp_messages_total").size(), run.results->qps.size());

  uint64_t rate_cuts = 0;
  for (const engine::QpRecord& qp : run.results->qps) {
    const transport::QpStats& q = qp.stats;
    const std::map<std::string, std::string> labels{
        {"port", run.results->ports.at(q.port).name},
        {"remote_port", run.results->ports.at(q.remote_port).name},
        {"role", std::string(transport::qp_role_name(q.role))},
        {"qpn", std::to_string(q.qpn)}};
    for (const transport::QpCounterField& field : transport::kQpCounterFields) {
      const auto value = sample_value(s, std::string(field.metric), labels);
      if ((field.roles & transport::role_bit(q.role)) == 0) {
        EXPECT_FALSE(value) << field.metric << " for a " << transport::qp_role_name(q.role);
        continue;
      }
      ASSERT_TRUE(value) << field.metric << " for QP " << q.qpn;
      EXPECT_EQ(*value, static_cast<double>(q.counters.*field.member)) << field.metric;
    }
    const auto cuts = sample_value(s, "etwire_qp_rate_cuts_total", labels);
    const auto rate = sample_value(s, "etwire_qp_dcqcn_rate_bytes_per_second", labels);
    if (q.role == transport::QpRole::kRequester) {
      ASSERT_TRUE(cuts && rate);
      EXPECT_EQ(*cuts, static_cast<double>(q.rate_cuts));
      EXPECT_GT(*rate, 0.0);
      EXPECT_LE(*rate, 100e9 / 8);
      rate_cuts += q.rate_cuts;
    } else {
      EXPECT_FALSE(cuts || rate);
    }
  }
  EXPECT_GT(rate_cuts, 0u);  // the example congests
}

TEST(QpMetrics, NoPerQpSeriesWithoutTheSwitch) {
  const TelemetryRun run(false);
  ASSERT_EQ(run.results->status, engine::RunStatus::kCompleted);
  ASSERT_FALSE(run.results->qps.empty());  // qps.csv has them all the same
  std::set<std::string> names;
  for (const auto& sample : run.samples) {
    if (sample.name.rfind("etwire_qp_", 0) == 0) names.insert(sample.name);
  }
  EXPECT_TRUE(names.empty()) << *names.begin();
  EXPECT_EQ(run.telemetry->metrics().text().find("etwire_qp_"), std::string::npos);
}

}  // namespace
}  // namespace etwire::telemetry
