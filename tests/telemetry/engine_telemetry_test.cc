// The run engine's telemetry end to end, without HTTP: after a run of the bundled demo the
// metrics hold exactly what the run's results hold, and a ring nobody drains never slows or
// changes the run.
#include <gtest/gtest.h>

#include <numeric>

#include "control/resolve/config_loader.h"
#include "engine/run_engine.h"
#include "outputs/telemetry/run_telemetry.h"
#include "tests/telemetry/exposition.h"
#include "tests/testing/loopback_options.h"
#include "tests/testing/test_paths.h"

namespace etwire::telemetry {
namespace {

using testing::parse_exposition;
using testing::Sample;
using testing::sample_value;
using testing::samples_named;

control::RunPlan load_demo() {
  auto loaded = control::load_config_file(
      (etwire::testing::source_dir() / "configs" / "loopback-demo.yaml").string());
  EXPECT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  return loaded;
}

double sum(const std::vector<Sample>& samples) {
  return std::accumulate(samples.begin(), samples.end(), 0.0,
                         [](double total, const Sample& s) { return total + s.value; });
}

TEST(EngineTelemetry, MetricsAfterARunMatchItsResults) {
  const auto loaded = load_demo();
  engine::RunEngine engine(loaded, etwire::testing::loopback());
  config::MetricsEndpoint no_server;
  no_server.enabled = false;
  RunTelemetry telemetry(engine.metric_labels(), no_server);
  engine.set_telemetry(&telemetry.ring());
  const engine::RunResults& results = engine.run();
  telemetry.finish();
  ASSERT_EQ(results.status, engine::RunStatus::kCompleted);
  const auto s = parse_exposition(telemetry.metrics().text());

  EXPECT_EQ(sample_value(s, "etwire_run_state", {{"state", "completed"}}), 1.0);
  EXPECT_EQ(sample_value(s, "etwire_run_state", {{"state", "running"}}), 0.0);
  EXPECT_DOUBLE_EQ(*sample_value(s, "etwire_run_virtual_time_seconds"), results.end_time / 1e9);
  EXPECT_EQ(sample_value(s, "etwire_telemetry_records_dropped_total"), 0.0);

  // Progress: every node of every rank and iteration.
  const auto nodes = sample_value(s, "etwire_job_nodes", {{"job_name", "allreduce"}});
  ASSERT_TRUE(nodes);
  EXPECT_GT(*nodes, 0.0);
  EXPECT_EQ(sample_value(s, "etwire_job_nodes_completed_total", {{"job_name", "allreduce"}}),
            nodes);
  EXPECT_EQ(sample_value(s, "etwire_job_iterations_completed_total", {{"job_name", "allreduce"}}),
            static_cast<double>(results.iterations.size()));

  // Flows and collectives of measured iterations.
  uint64_t measured_flows = 0;
  for (const auto& fct : results.fct) measured_flows += fct.flows;
  EXPECT_EQ(sum(samples_named(s, "etwire_flow_completion_seconds_count")),
            static_cast<double>(measured_flows));
  const engine::CollectiveRecord* last = nullptr;
  size_t measured_collectives = 0;
  for (const auto& c : results.collectives) {
    if (c.warmup) continue;
    ++measured_collectives;
    last = &c;
  }
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(sum(samples_named(s, "etwire_collective_completion_seconds_count")),
            static_cast<double>(measured_collectives));
  EXPECT_DOUBLE_EQ(*sample_value(s, "etwire_collective_busbw_bytes_per_second",
                                 {{"collective", "all_reduce"}, {"algorithm", "ring"}}),
                   last->busbw_bytes_per_second());
  EXPECT_DOUBLE_EQ(*sample_value(s, "etwire_iteration_jct_seconds", {{"job_name", "allreduce"}}),
                   results.iterations.back().jct() / 1e9);

  // Port counters equal the results' counters port by port.
  ASSERT_FALSE(results.ports.empty());
  for (const auto& port : results.ports) {
    const std::map<std::string, std::string> by_port{{"port", port.name}};
    EXPECT_EQ(sample_value(s, "etwire_port_transmit_bytes_total", by_port),
              static_cast<double>(port.tx_bytes))
        << port.name;
    EXPECT_EQ(sample_value(s, "etwire_port_receive_packets_total", by_port),
              static_cast<double>(port.rx_packets))
        << port.name;
    EXPECT_EQ(sample_value(s, "etwire_port_cnps_sent_total", by_port),
              static_cast<double>(port.cnps_sent))
        << port.name;
    EXPECT_EQ(sample_value(s, "etwire_port_speed_bytes_per_second", by_port),
              static_cast<double>(port.speed_bps) / 8)
        << port.name;
    // The run is over: no QP has data left to send.
    EXPECT_EQ(sample_value(s, "etwire_port_paced_rate_bytes_per_second", by_port), 0.0)
        << port.name;
  }
}

TEST(EngineTelemetry, ARingNobodyDrainsNeitherStopsNorChangesTheRun) {
  const auto loaded = load_demo();
  engine::RunEngine plain(loaded, etwire::testing::loopback());
  const engine::RunResults expected = plain.run();

  RecordRing ring(8);  // full after eight records; nobody drains it
  engine::RunEngine observed(loaded, etwire::testing::loopback());
  observed.set_telemetry(&ring);
  const engine::RunResults& results = observed.run();
  EXPECT_EQ(results.status, engine::RunStatus::kCompleted);
  EXPECT_GT(ring.dropped(), 0u);
  EXPECT_EQ(results.end_time, expected.end_time);
  EXPECT_EQ(results.flows, expected.flows);
  EXPECT_EQ(results.events, expected.events);
  ASSERT_EQ(results.collectives.size(), expected.collectives.size());
  for (size_t i = 0; i < results.collectives.size(); ++i) {
    EXPECT_EQ(results.collectives[i].end, expected.collectives[i].end) << i;
  }
}

// With telemetry.record.queue_sample_interval the twin's queues reach Prometheus: a depth gauge
// per switch egress queue sampled and a utilization gauge per link, named by switch port, with
// values a sample could have (depths up to the switch buffer, utilization near [0, 1]).
TEST(EngineTelemetry, QueueSamplesBecomeDepthAndUtilizationGauges) {
  auto loaded = control::load_config_file(
      (etwire::testing::source_dir() / "configs" / "twin-congestion.yaml").string(),
      {.overrides = {"telemetry.record.queue_sample_interval=10us"}});
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  engine::RunEngine engine(loaded, etwire::testing::loopback());
  const MetricLabels labels = engine.metric_labels();
  ASSERT_EQ(labels.switch_ports.size(), 32u);  // 4 leaves x (4 hosts + 2 spines), 2 spines x 4
  EXPECT_EQ(labels.switch_ports[4], "leaf0/spine0");
  config::MetricsEndpoint no_server;
  no_server.enabled = false;
  RunTelemetry telemetry(labels, no_server);
  engine.set_telemetry(&telemetry.ring());
  ASSERT_EQ(engine.run().status, engine::RunStatus::kCompleted);
  telemetry.finish();
  const auto s = parse_exposition(telemetry.metrics().text());
  const auto depths = samples_named(s, "etwire_twin_queue_depth_bytes");
  const auto utilization = samples_named(s, "etwire_twin_link_utilization");
  EXPECT_GT(depths.size(), 10u);
  EXPECT_GT(utilization.size(), 10u);
  for (const Sample& depth : depths) {
    EXPECT_GE(depth.value, 0.0);
    EXPECT_LE(depth.value, static_cast<double>(loaded.config.fabric.buffer.size_bytes));
  }
  for (const Sample& u : utilization) {
    EXPECT_GE(u.value, 0.0);
    EXPECT_LE(u.value, 1.04);  // a frame counts in the interval it starts in
  }
  EXPECT_TRUE(sample_value(s, "etwire_twin_link_utilization", {{"switch_port", "leaf0/spine0"}}));
  EXPECT_EQ(sample_value(s, "etwire_telemetry_records_dropped_total"), 0.0);
}

}  // namespace
}  // namespace etwire::telemetry
