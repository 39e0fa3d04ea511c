// Records become the documented metrics: histograms with the 1-2-5 buckets, counters that follow
// running totals, the run state, and records for jobs or ports the run does not have are ignored.
// Every series carries the run and the host.
#include "outputs/telemetry/run_metrics.h"

#include <gtest/gtest.h>
#include <prometheus/client_metric.h>
#include <prometheus/metric_family.h>
#include <unistd.h>

#include <climits>

#include "collectives/algorithm.h"
#include "tests/telemetry/exposition.h"
#include "trace/node.h"

namespace etwire::telemetry {
namespace {

using testing::parse_exposition;
using testing::sample_value;
using testing::samples_named;

MetricLabels two_jobs_two_ports() {
  MetricLabels labels;
  labels.run = "unit";
  labels.topology = "single-switch";
  labels.config_digest = "fnv1a64:0123456789abcdef";
  labels.jobs = {{"train", 3, 120}, {"probe", 1, 8}};
  labels.ports = {{"host0", 100'000'000'000}, {"host1", 400'000'000'000}};
  return labels;
}

constexpr uint8_t kAllReduce = static_cast<uint8_t>(trace::CollectiveType::kAllReduce);
constexpr uint8_t kRing = static_cast<uint8_t>(collectives::Algorithm::kRing);

// Where a counter sits in PortSample::counters: its row of the port counter table.
size_t counter_index(std::string_view name) {
  for (size_t c = 0; c < dataplane::kPortCounterFields.size(); ++c) {
    if (dataplane::kPortCounterFields[c].name == name) return c;
  }
  ADD_FAILURE() << "no port counter " << name;
  return 0;
}

PortSample port_totals(uint32_t port, uint64_t tx_bytes, uint64_t cnps_sent) {
  PortSample s{};
  s.port = port;
  s.counters[counter_index("tx_bytes")] = tx_bytes;
  s.counters[counter_index("cnps_sent")] = cnps_sent;
  s.paced_rate_bytes_per_second = 1e9;
  return s;
}

TEST(LatencyBuckets, OneTwoFivePerDecadeFromOneMicrosecondToTenSeconds) {
  const auto& b = latency_buckets();
  ASSERT_EQ(b.size(), 22u);
  EXPECT_DOUBLE_EQ(b.front(), 1e-6);
  EXPECT_DOUBLE_EQ(b[1], 2e-6);
  EXPECT_DOUBLE_EQ(b[2], 5e-6);
  EXPECT_DOUBLE_EQ(b[3], 1e-5);
  EXPECT_DOUBLE_EQ(b.back(), 10.0);
  for (size_t i = 1; i < b.size(); ++i) EXPECT_LT(b[i - 1], b[i]);
}

TEST(CollectiveLabel, LowerCaseSchemaNamesAndSendRecv) {
  EXPECT_EQ(collective_label(kAllReduce), "all_reduce");
  EXPECT_EQ(collective_label(static_cast<uint8_t>(trace::CollectiveType::kReduceScatter)),
            "reduce_scatter");
  EXPECT_EQ(collective_label(kSendRecvKind), "send_recv");
}

TEST(RunMetrics, StaticSeriesExistFromTheStart) {
  RunMetrics metrics(two_jobs_two_ports());
  const auto s = parse_exposition(metrics.text());
  EXPECT_EQ(sample_value(s, "etwire_run_info", {{"run", "unit"}, {"topology", "single-switch"}}),
            1.0);
  EXPECT_EQ(sample_value(s, "etwire_run_state", {{"state", "running"}}), 1.0);
  EXPECT_EQ(sample_value(s, "etwire_run_state", {{"state", "completed"}}), 0.0);
  EXPECT_EQ(samples_named(s, "etwire_run_state").size(), 6u);
  EXPECT_EQ(sample_value(s, "etwire_job_iterations", {{"job_name", "train"}}), 3.0);
  EXPECT_EQ(sample_value(s, "etwire_job_nodes", {{"job_name", "probe"}}), 8.0);
  EXPECT_EQ(sample_value(s, "etwire_job_nodes_completed_total", {{"job_name", "train"}}), 0.0);
  EXPECT_EQ(sample_value(s, "etwire_port_speed_bytes_per_second", {{"port", "host1"}}), 50e9);
  EXPECT_EQ(sample_value(s, "etwire_port_drops_total", {{"port", "host0"}}), 0.0);
  EXPECT_EQ(sample_value(s, "etwire_telemetry_records_dropped_total"), 0.0);
  // Every series carries the run and the host; none has a workload job under Prometheus's own
  // `job` label.
  for (const auto& sample : s) {
    if (sample.name.rfind("etwire_", 0) != 0) continue;
    EXPECT_EQ(sample.labels.count("run"), 1u) << sample.name;
    EXPECT_EQ(sample.labels.count("host"), 1u) << sample.name;
    EXPECT_EQ(sample.labels.count("job"), 0u) << sample.name;
  }
  // Per-collective series appear only once a collective of that type finished.
  EXPECT_TRUE(samples_named(s, "etwire_flow_completion_seconds_count").empty());
}

TEST(RunMetrics, FlowsFillTheFctHistogramAndFailuresCountApart) {
  RunMetrics metrics(two_jobs_two_ports());
  metrics.apply(Record::of(FlowSample{0, kAllReduce, kRing, false, 3'000}));     // 3 us
  metrics.apply(Record::of(FlowSample{0, kAllReduce, kRing, false, 150'000}));   // 150 us
  metrics.apply(Record::of(FlowSample{0, kAllReduce, kRing, true, 9'000'000}));  // failed
  metrics.apply(Record::of(FlowSample{1, kSendRecvKind, 4, false, 1'000}));
  const auto s = parse_exposition(metrics.text());
  const std::map<std::string, std::string> train{
      {"job_name", "train"}, {"collective", "all_reduce"}, {"algorithm", "ring"}};
  EXPECT_EQ(sample_value(s, "etwire_flow_completion_seconds_count", train), 2.0);
  EXPECT_NEAR(*sample_value(s, "etwire_flow_completion_seconds_sum", train), 153e-6, 1e-12);
  auto bucket = [&](const std::string& le) {
    auto labels = train;
    labels["le"] = le;
    return sample_value(s, "etwire_flow_completion_seconds_bucket", labels);
  };
  EXPECT_EQ(bucket("2e-06"), 0.0);
  EXPECT_EQ(bucket("5e-06"), 1.0);
  EXPECT_EQ(bucket("0.0001"), 1.0);
  EXPECT_EQ(bucket("0.0002"), 2.0);
  EXPECT_EQ(bucket("+Inf"), 2.0);
  EXPECT_EQ(sample_value(s, "etwire_flows_failed_total", train), 1.0);
  EXPECT_EQ(
      sample_value(s, "etwire_flow_completion_seconds_count",
                   {{"job_name", "probe"}, {"collective", "send_recv"}, {"algorithm", "direct"}}),
      1.0);
}

TEST(RunMetrics, CollectivesSetBandwidthOfTheLastInstance) {
  RunMetrics metrics(two_jobs_two_ports());
  metrics.apply(Record::of(CollectiveSample{0, kAllReduce, kRing, 200'000, 5e9, 8.75e9}));
  metrics.apply(Record::of(CollectiveSample{0, kAllReduce, kRing, 100'000, 10e9, 17.5e9}));
  const auto s = parse_exposition(metrics.text());
  const std::map<std::string, std::string> train{{"job_name", "train"},
                                                 {"collective", "all_reduce"}};
  EXPECT_EQ(sample_value(s, "etwire_collective_completion_seconds_count", train), 2.0);
  EXPECT_NEAR(*sample_value(s, "etwire_collective_completion_seconds_sum", train), 300e-6, 1e-12);
  EXPECT_EQ(sample_value(s, "etwire_collective_busbw_bytes_per_second", train), 17.5e9);
  EXPECT_EQ(sample_value(s, "etwire_collective_algbw_bytes_per_second", train), 10e9);
}

TEST(RunMetrics, IterationsOfWarmUpDoNotSetTheJct) {
  RunMetrics metrics(two_jobs_two_ports());
  metrics.apply(Record::of(IterationSample{0, 0, true, 9'000'000, 1'000'000}));
  auto s = parse_exposition(metrics.text());
  EXPECT_EQ(sample_value(s, "etwire_iteration_jct_seconds", {{"job_name", "train"}}), 0.0);
  metrics.apply(Record::of(IterationSample{0, 1, false, 2'000'000, 500'000}));
  s = parse_exposition(metrics.text());
  EXPECT_EQ(sample_value(s, "etwire_iteration_jct_seconds", {{"job_name", "train"}}), 2e-3);
  EXPECT_EQ(
      sample_value(s, "etwire_iteration_exposed_communication_seconds", {{"job_name", "train"}}),
      5e-4);
}

TEST(RunMetrics, CountersFollowRunningTotals) {
  RunMetrics metrics(two_jobs_two_ports());
  metrics.apply(Record::of(port_totals(1, 1000, 2)));
  metrics.apply(Record::of(port_totals(1, 5000, 2)));
  metrics.apply(Record::of(port_totals(1, 7000, 9)));
  metrics.apply(Record::of(JobProgress{0, 1, 40}));
  metrics.apply(Record::of(JobProgress{0, 2, 90}));
  metrics.set_records_dropped(3);
  metrics.set_records_dropped(5);
  const auto s = parse_exposition(metrics.text());
  EXPECT_EQ(sample_value(s, "etwire_port_transmit_bytes_total", {{"port", "host1"}}), 7000.0);
  EXPECT_EQ(sample_value(s, "etwire_port_cnps_sent_total", {{"port", "host1"}}), 9.0);
  EXPECT_EQ(sample_value(s, "etwire_port_transmit_bytes_total", {{"port", "host0"}}), 0.0);
  EXPECT_EQ(sample_value(s, "etwire_port_paced_rate_bytes_per_second", {{"port", "host1"}}), 1e9);
  EXPECT_EQ(sample_value(s, "etwire_job_iterations_completed_total", {{"job_name", "train"}}), 2.0);
  EXPECT_EQ(sample_value(s, "etwire_job_nodes_completed_total", {{"job_name", "train"}}), 90.0);
  EXPECT_EQ(sample_value(s, "etwire_telemetry_records_dropped_total"), 5.0);
}

// A counter an RNIC does not expose has no series for that port; the other port keeps its own.
TEST(RunMetrics, AbsentCountersHaveNoSeries) {
  MetricLabels labels = two_jobs_two_ports();
  labels.ports[1].absent = dataplane::port_counter_bit(counter_index("cnps_sent"));
  RunMetrics metrics(labels);
  metrics.apply(Record::of(port_totals(1, 1000, 0)));
  const auto s = parse_exposition(metrics.text());
  EXPECT_EQ(sample_value(s, "etwire_port_transmit_bytes_total", {{"port", "host1"}}), 1000.0);
  EXPECT_EQ(sample_value(s, "etwire_port_cnps_sent_total", {{"port", "host0"}}), 0.0);
  size_t host1_cnps = 0;
  for (const auto& sample : samples_named(s, "etwire_port_cnps_sent_total")) {
    host1_cnps += sample.labels.count("port") && sample.labels.at("port") == "host1" ? 1 : 0;
  }
  EXPECT_EQ(host1_cnps, 0u);
}

TEST(RunMetrics, RunStateIsOneHot) {
  RunMetrics metrics(two_jobs_two_ports());
  metrics.apply(Record::of(RunSample{RunState::kStuck, 42'000'000}));
  const auto s = parse_exposition(metrics.text());
  for (const auto& sample : samples_named(s, "etwire_run_state")) {
    EXPECT_EQ(sample.value, sample.labels.at("state") == "stuck" ? 1.0 : 0.0)
        << sample.labels.at("state");
  }
  EXPECT_EQ(sample_value(s, "etwire_run_virtual_time_seconds"), 0.042);
}

// Series created up front and those created on first use (per collective type) alike: the host
// is a constant label of every family, so no series of this process can be mistaken for another
// host's.
TEST(RunMetrics, EverySeriesCarriesTheGivenHost) {
  MetricLabels labels = two_jobs_two_ports();
  labels.host = "emu-07";
  RunMetrics metrics(labels);
  EXPECT_EQ(metrics.labels().host, "emu-07");
  metrics.apply(Record::of(FlowSample{0, kAllReduce, kRing, false, 3'000}));
  metrics.apply(Record::of(FlowSample{1, kSendRecvKind, 4, true, 1'000}));
  metrics.apply(Record::of(CollectiveSample{0, kAllReduce, kRing, 100'000, 10e9, 17.5e9}));
  metrics.apply(Record::of(port_totals(0, 1000, 1)));

  size_t series = 0;
  for (const prometheus::MetricFamily& family : metrics.registry()->Collect()) {
    for (const prometheus::ClientMetric& metric : family.metric) {
      ++series;
      size_t hosts = 0;
      for (const prometheus::ClientMetric::Label& label : metric.label) {
        if (label.name != "host") continue;
        ++hosts;
        EXPECT_EQ(label.value, "emu-07") << family.name;
      }
      EXPECT_EQ(hosts, 1u) << family.name;
    }
  }
  EXPECT_GT(series, 20u);

  // The same in what a scrape reads, histogram buckets included.
  const auto s = parse_exposition(metrics.text());
  ASSERT_FALSE(s.empty());
  for (const auto& sample : s) {
    ASSERT_EQ(sample.labels.count("host"), 1u) << sample.name;
    EXPECT_EQ(sample.labels.at("host"), "emu-07") << sample.name;
  }
  EXPECT_EQ(sample_value(s, "etwire_flow_completion_seconds_bucket",
                         {{"host", "emu-07"}, {"collective", "all_reduce"}, {"le", "5e-06"}}),
            1.0);
}

// Labels that name no host get this machine's host name, so a series never lacks the label.
TEST(RunMetrics, AnEmptyHostIsThisMachinesHostName) {
  char name[HOST_NAME_MAX + 1] = {};
  ASSERT_EQ(gethostname(name, HOST_NAME_MAX), 0);
  ASSERT_NE(name[0], '\0');
  EXPECT_EQ(local_host_name(), name);

  MetricLabels labels = two_jobs_two_ports();
  ASSERT_TRUE(labels.host.empty());
  RunMetrics metrics(labels);
  EXPECT_EQ(metrics.labels().host, name);
  const auto s = parse_exposition(metrics.text());
  ASSERT_FALSE(s.empty());
  for (const auto& sample : s) {
    if (sample.name.rfind("etwire_", 0) != 0) continue;
    ASSERT_EQ(sample.labels.count("host"), 1u) << sample.name;
    EXPECT_EQ(sample.labels.at("host"), name) << sample.name;
  }
}

TEST(RunMetrics, RecordsOutsideTheRunAreIgnored) {
  RunMetrics metrics(two_jobs_two_ports());
  const std::string before = metrics.text();
  metrics.apply(Record::of(FlowSample{7, kAllReduce, kRing, false, 1000}));
  metrics.apply(Record::of(CollectiveSample{0, 200, kRing, 1000, 1, 1}));
  metrics.apply(Record::of(port_totals(2, 100, 1)));
  metrics.apply(Record::of(JobProgress{2, 1, 1}));
  metrics.apply(Record::of(IterationSample{5, 1, false, 1, 1}));
  metrics.apply(Record::of(QueueDepthSample{0, 3, 4096, 0.5}));  // no switch ports named
  EXPECT_EQ(metrics.text(), before);
}

// A queue's series appear when it is first sampled and hold the last sample.
TEST(RunMetrics, QueueSamplesSetDepthPerQueueAndUtilizationPerLink) {
  MetricLabels labels = two_jobs_two_ports();
  labels.switch_ports = {"leaf0/nic0", "leaf0/spine0"};
  RunMetrics metrics(labels);
  EXPECT_TRUE(
      samples_named(parse_exposition(metrics.text()), "etwire_twin_queue_depth_bytes").empty());
  metrics.apply(Record::of(QueueDepthSample{1, 3, 4096, 0.25}));
  metrics.apply(Record::of(QueueDepthSample{1, 0, 100, 0.5}));
  metrics.apply(Record::of(QueueDepthSample{1, 3, 8192, 0.75}));
  metrics.apply(Record::of(QueueDepthSample{1, 8, 1, 1}));  // no such priority
  const auto s = parse_exposition(metrics.text());
  EXPECT_EQ(samples_named(s, "etwire_twin_queue_depth_bytes").size(), 2u);
  EXPECT_EQ(sample_value(s, "etwire_twin_queue_depth_bytes",
                         {{"switch_port", "leaf0/spine0"}, {"priority", "3"}}),
            8192.0);
  EXPECT_EQ(sample_value(s, "etwire_twin_queue_depth_bytes",
                         {{"switch_port", "leaf0/spine0"}, {"priority", "0"}}),
            100.0);
  EXPECT_EQ(sample_value(s, "etwire_twin_link_utilization", {{"switch_port", "leaf0/spine0"}}),
            0.75);
}

}  // namespace
}  // namespace etwire::telemetry
