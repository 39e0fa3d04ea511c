// The result files and console report of a run, from a RunResults built by hand with round
// figures, so every derived value (CCT, algbw, busbw, ideal %, percentiles) is known exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/fct_percentiles.h"
#include "engine/run_results.h"
#include "outputs/console_report.h"
#include "outputs/results_files.h"
#include "tests/testing/test_paths.h"
#include "transport/flow_record_csv.h"

namespace etwire::outputs {
namespace {

using namespace engine;

using collectives::Algorithm;
using trace::CollectiveType;

CollectiveRecord collective(uint64_t instance, uint32_t job, collectives::CollectiveKind kind,
                            int64_t group, uint32_t group_size, uint64_t trace_bytes,
                            uint64_t algbw_bytes, clock::Nanos last_arrival, clock::Nanos cct,
                            uint32_t iteration, bool warmup) {
  CollectiveRecord c;
  c.instance = instance;
  c.job = job;
  c.kind = kind;
  c.algorithm = collectives::default_algorithm(kind);
  c.group = group;
  c.sequence = instance;
  c.group_size = group_size;
  c.trace_bytes = trace_bytes;
  c.algbw_bytes = algbw_bytes;
  c.wire_bytes = algbw_bytes * 2;
  c.iteration = iteration;
  c.warmup = warmup;
  c.first_arrival = last_arrival - 100;
  c.last_arrival = last_arrival;
  c.end = last_arrival + cct;
  c.flows = 16;
  return c;
}

// Goodput 3.5 GB/s. The measured all-reduce instances of 1e6 algbw bytes over 8 ranks take 1 ms
// and 0.4 ms: algbw 1 and 2.5 GB/s, busbw (x 2*7/8) 1.75 and 4.375 GB/s, ideal 50% and 125%.
RunResults sample_results() {
  RunResults r;
  r.status = RunStatus::kCompleted;
  r.run_name = "lab-a";
  r.config_file = "configs/lab-a.yaml";
  r.config_digest = "fnv1a64:0123456789abcdef";
  r.seed = 42;
  r.topology = "single-switch";
  r.world_size = 10;
  r.end_time = 5'000'000;
  r.wall_seconds = 0.25;
  r.events = 123456;
  r.goodput_bytes_per_second = 3.5e9;
  r.jobs = {{"train", "traces/train", 8, 3, 1, 900}, {"infer", "traces/infer", 2, 1, 0, 10}};
  const auto all_reduce = CollectiveType::kAllReduce;
  r.collectives = {
      collective(0, 0, all_reduce, -1, 8, 1 << 20, 1'000'000, 500, 2'000'000, 0, true),
      collective(1, 0, all_reduce, -1, 8, 1 << 20, 1'000'000, 2'000'100, 1'000'000, 1, false),
      collective(2, 0, all_reduce, -1, 8, 1 << 20, 1'000'000, 3'200'000, 400'000, 2, false),
      collective(3, 1, std::nullopt, kPointToPointGroup, 2, 4096, 4096, 1000, 4096, 0, false),
      collective(4, 0, CollectiveType::kAllGather, 3, 4, 65536, 262144, 3'700'000, 262144, 2,
                 false),
  };
  r.collectives[3].tag = 7;
  r.collectives[3].failed_flows = 1;

  IterationRecord it0{0, 0, true, 0, 2'000'000, {}};
  it0.ranks = {{0, 2'000'000, 1'000'000, 900'000, 300'000}};
  IterationRecord it1{0, 1, false, 2'000'000, 3'200'000, {}};
  it1.ranks = {{2'000'000, 3'100'000, 100'000, 1'000'000, 950'000},
               {2'000'050, 3'200'000, 150'000, 1'050'000, 1'000'000}};
  IterationRecord it2{0, 2, false, 3'200'000, 4'000'000, {}};
  it2.ranks = {{3'200'000, 4'000'000, 100'000, 700'000, 650'000}};
  r.iterations = {it0, it1, it2};

  PortRecord quiet;
  quiet.name = "p0";
  quiet.speed_bps = 100'000'000'000;
  quiet.tx_bytes = 1000;
  PortRecord busy;
  busy.name = "p1";
  busy.speed_bps = 100'000'000'000;
  busy.ecn_marked_received = 5;
  busy.cnps_sent = 4;
  busy.drops = 2;
  busy.retransmitted_packets = 3;
  busy.timeouts = 1;
  r.ports = {quiet, busy};

  r.fct = {{all_reduce, 32, 10'000, 20'000, 30'000, 40'000, 50'000},
           {std::nullopt, 16, 1'000, 2'000, 3'000, 4'000, 5'000}};
  r.flows = 80;
  r.failed_flows = 1;
  return r;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Splits one CSV line, honouring quoted fields.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// The first line of `text` whose words begin with `prefix`.
std::vector<std::string> row_starting(const std::string& text,
                                      const std::vector<std::string>& prefix) {
  for (const std::string& line : lines_of(text)) {
    const std::vector<std::string> words = words_of(line);
    if (words.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), words.begin())) {
      return words;
    }
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// Records

TEST(RunResults, StatusNames) {
  EXPECT_EQ(run_status_name(RunStatus::kCompleted), "completed");
  EXPECT_EQ(run_status_name(RunStatus::kFlowsFailed), "flows-failed");
  EXPECT_EQ(run_status_name(RunStatus::kStuck), "stuck");
  EXPECT_EQ(run_status_name(RunStatus::kInterrupted), "interrupted");
  EXPECT_EQ(run_status_name(RunStatus::kFailed), "failed");
}

TEST(RunResults, AllReduceBandwidthUsesTwiceShareFactor) {
  const RunResults r = sample_results();
  const CollectiveRecord& c = r.collectives[1];
  EXPECT_EQ(c.cct(), 1'000'000);
  EXPECT_DOUBLE_EQ(c.algbw_bytes_per_second(), 1e9);
  EXPECT_DOUBLE_EQ(c.busbw_bytes_per_second(), 1e9 * 2 * 7 / 8);
}

TEST(RunResults, PointToPointBusbwEqualsAlgbw) {
  CollectiveRecord c = sample_results().collectives[3];
  EXPECT_DOUBLE_EQ(c.algbw_bytes_per_second(), 1e9);
  EXPECT_DOUBLE_EQ(c.busbw_bytes_per_second(), 1e9);
  c.group_size = 0;  // factor 1 does not depend on a group size
  EXPECT_DOUBLE_EQ(c.busbw_bytes_per_second(), 1e9);
}

TEST(RunResults, ZeroCctGivesZeroBandwidth) {
  CollectiveRecord c = sample_results().collectives[1];
  c.end = c.last_arrival;
  EXPECT_EQ(c.algbw_bytes_per_second(), 0);
  EXPECT_EQ(c.busbw_bytes_per_second(), 0);
}

TEST(RunResults, MaxExposedCommIsLargestOverRanks) {
  const RunResults r = sample_results();
  EXPECT_EQ(r.iterations[1].max_exposed_comm(), 1'000'000);
  EXPECT_EQ(r.iterations[1].jct(), 1'200'000);
  EXPECT_EQ(IterationRecord{}.max_exposed_comm(), 0);
}

// ---------------------------------------------------------------------------------------------
// Percentiles

TEST(FctPercentiles, NearestRankOnOneToThousand) {
  std::vector<clock::Nanos> samples(1000);
  std::iota(samples.begin(), samples.end(), 1);
  std::shuffle(samples.begin(), samples.end(), std::mt19937_64(7));
  const FctPercentiles p = fct_percentiles(CollectiveType::kAllReduce, samples);
  EXPECT_EQ(p.kind, CollectiveType::kAllReduce);
  EXPECT_EQ(p.flows, 1000u);
  EXPECT_EQ(p.p50, 500);
  EXPECT_EQ(p.p90, 900);
  EXPECT_EQ(p.p99, 990);
  EXPECT_EQ(p.p999, 999);
  EXPECT_EQ(p.max, 1000);
}

TEST(FctPercentiles, RanksRoundUpOnSmallSets) {
  // 10 samples: p50 is rank 5, p90 rank 9, p99 and p99.9 round up to rank 10.
  std::vector<clock::Nanos> samples = {100, 30, 80, 10, 60, 90, 20, 50, 40, 70};
  const FctPercentiles p = fct_percentiles(std::nullopt, samples);
  EXPECT_EQ(p.kind, std::nullopt);
  EXPECT_EQ(p.flows, 10u);
  EXPECT_EQ(p.p50, 50);
  EXPECT_EQ(p.p90, 90);
  EXPECT_EQ(p.p99, 100);
  EXPECT_EQ(p.p999, 100);
  EXPECT_EQ(p.max, 100);
}

TEST(FctPercentiles, OneSampleIsEveryPercentile) {
  std::vector<clock::Nanos> samples = {42};
  const FctPercentiles p = fct_percentiles(CollectiveType::kBroadcast, samples);
  EXPECT_EQ(p.flows, 1u);
  EXPECT_EQ(p.p50, 42);
  EXPECT_EQ(p.p999, 42);
  EXPECT_EQ(p.max, 42);
}

TEST(FctPercentiles, RepeatedValues) {
  std::vector<clock::Nanos> samples(100, 7);
  samples.back() = 9;
  const FctPercentiles p = fct_percentiles(CollectiveType::kAllToAll, samples);
  EXPECT_EQ(p.p99, 7);
  EXPECT_EQ(p.p999, 9);
  EXPECT_EQ(p.max, 9);
}

TEST(FctPercentiles, EmptyIsZero) {
  std::vector<clock::Nanos> samples;
  const FctPercentiles p = fct_percentiles(CollectiveType::kAllGather, samples);
  EXPECT_EQ(p.kind, CollectiveType::kAllGather);
  EXPECT_EQ(p.flows, 0u);
  EXPECT_EQ(p.p50, 0);
  EXPECT_EQ(p.p90, 0);
  EXPECT_EQ(p.p99, 0);
  EXPECT_EQ(p.p999, 0);
  EXPECT_EQ(p.max, 0);
}

// ---------------------------------------------------------------------------------------------
// summary.json

TEST(SummaryJson, RoundTripsExactValues) {
  const auto dir = testing::make_scratch_dir("summary");
  const auto path = dir / "summary.json";
  write_summary_json(sample_results(), path.string());
  const nlohmann::json doc = nlohmann::json::parse(read_file(path));

  EXPECT_EQ(doc["status"], "completed");
  EXPECT_FALSE(doc.contains("diagnosis"));
  const auto& run = doc["run"];
  EXPECT_EQ(run["name"], "lab-a");
  EXPECT_EQ(run["config_file"], "configs/lab-a.yaml");
  EXPECT_EQ(run["config_digest"], "fnv1a64:0123456789abcdef");
  EXPECT_EQ(run["seed"], 42);
  EXPECT_EQ(run["topology"], "single-switch");
  EXPECT_EQ(run["world_size"], 10);
  EXPECT_EQ(run["end_time_ns"], 5'000'000);
  EXPECT_DOUBLE_EQ(run["wall_seconds"].get<double>(), 0.25);
  EXPECT_EQ(run["events"], 123456);
  EXPECT_DOUBLE_EQ(run["goodput_bytes_per_second"].get<double>(), 3.5e9);

  ASSERT_EQ(doc["jobs"].size(), 2u);
  EXPECT_EQ(doc["jobs"][1]["name"], "infer");
  EXPECT_EQ(doc["jobs"][0]["warmup_iterations"], 1);
  EXPECT_EQ(doc["jobs"][0]["nodes_issued"], 900);

  ASSERT_EQ(doc["collectives"].size(), 5u);
  const auto& ar = doc["collectives"][1];
  EXPECT_EQ(ar["instance"], 1);
  EXPECT_EQ(ar["job"], "train");
  EXPECT_EQ(ar["type"], "all_reduce");
  EXPECT_EQ(ar["algorithm"], "ring");
  EXPECT_EQ(ar["group"], "all");
  EXPECT_EQ(ar["group_size"], 8);
  EXPECT_EQ(ar["trace_bytes"], 1 << 20);
  EXPECT_EQ(ar["algbw_bytes"], 1'000'000);
  EXPECT_EQ(ar["wire_bytes"], 2'000'000);
  EXPECT_EQ(ar["iteration"], 1);
  EXPECT_EQ(ar["warmup"], false);
  EXPECT_EQ(ar["first_arrival_ns"], 2'000'000);
  EXPECT_EQ(ar["last_arrival_ns"], 2'000'100);
  EXPECT_EQ(ar["end_ns"], 3'000'100);
  EXPECT_EQ(ar["cct_ns"], 1'000'000);
  EXPECT_DOUBLE_EQ(ar["algbw_GBps"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(ar["busbw_GBps"].get<double>(), 1.75);
  EXPECT_DOUBLE_EQ(ar["ideal_percent"].get<double>(), 50.0);
  EXPECT_EQ(ar["flows"], 16);
  EXPECT_EQ(ar["failed_flows"], 0);
  EXPECT_EQ(doc["collectives"][0]["warmup"], true);

  const auto& p2p = doc["collectives"][3];
  EXPECT_EQ(p2p["type"], "send_recv");
  EXPECT_EQ(p2p["group"], "p2p");
  EXPECT_EQ(p2p["algorithm"], "direct");
  EXPECT_EQ(p2p["tag"], 7);
  EXPECT_EQ(p2p["job"], "infer");
  EXPECT_DOUBLE_EQ(p2p["busbw_GBps"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(p2p["ideal_percent"].get<double>(), 100.0 / 3.5);
  EXPECT_EQ(p2p["failed_flows"], 1);

  const auto& ag = doc["collectives"][4];
  EXPECT_EQ(ag["type"], "all_gather");
  EXPECT_EQ(ag["group"], 3);
  EXPECT_DOUBLE_EQ(ag["busbw_GBps"].get<double>(), 0.75);

  ASSERT_EQ(doc["iterations"].size(), 3u);
  const auto& it1 = doc["iterations"][1];
  EXPECT_EQ(it1["job"], "train");
  EXPECT_EQ(it1["iteration"], 1);
  EXPECT_EQ(it1["warmup"], false);
  EXPECT_EQ(it1["start_ns"], 2'000'000);
  EXPECT_EQ(it1["end_ns"], 3'200'000);
  EXPECT_EQ(it1["jct_ns"], 1'200'000);
  EXPECT_EQ(it1["max_exposed_comm_ns"], 1'000'000);
  ASSERT_EQ(it1["ranks"].size(), 2u);
  EXPECT_EQ(it1["ranks"][1]["rank"], 1);
  EXPECT_EQ(it1["ranks"][1]["compute_ns"], 150'000);
  EXPECT_EQ(it1["ranks"][1]["comm_ns"], 1'050'000);
  EXPECT_EQ(it1["ranks"][1]["exposed_comm_ns"], 1'000'000);
  EXPECT_EQ(it1["ranks"][1]["start_ns"], 2'000'050);
  EXPECT_EQ(it1["ranks"][1]["end_ns"], 3'200'000);

  ASSERT_EQ(doc["ports"].size(), 2u);
  const auto& port = doc["ports"][1];
  EXPECT_EQ(port.size(), 2 + dataplane::kPortCounterFields.size());  // name, speed, counters
  EXPECT_EQ(port["name"], "p1");
  EXPECT_EQ(port["speed_bps"], 100'000'000'000);
  EXPECT_EQ(port["ecn_marked_received"], 5);
  EXPECT_EQ(port["cnps_sent"], 4);
  EXPECT_EQ(port["cnps_received"], 0);
  EXPECT_EQ(port["pfc_pauses_sent"], 0);
  EXPECT_EQ(port["pfc_pauses_received"], 0);
  EXPECT_EQ(port["drops"], 2);
  EXPECT_EQ(port["retransmitted_packets"], 3);
  EXPECT_EQ(port["timeouts"], 1);
  EXPECT_EQ(doc["ports"][0]["tx_bytes"], 1000);

  ASSERT_EQ(doc["fct"].size(), 2u);
  EXPECT_EQ(doc["fct"][0]["type"], "all_reduce");
  EXPECT_EQ(doc["fct"][0]["flows"], 32);
  EXPECT_EQ(doc["fct"][0]["p50_ns"], 10'000);
  EXPECT_EQ(doc["fct"][0]["p90_ns"], 20'000);
  EXPECT_EQ(doc["fct"][0]["p99_ns"], 30'000);
  EXPECT_EQ(doc["fct"][0]["p999_ns"], 40'000);
  EXPECT_EQ(doc["fct"][0]["max_ns"], 50'000);
  EXPECT_EQ(doc["fct"][1]["type"], "send_recv");

  EXPECT_EQ(doc["flows"], 80);
  EXPECT_EQ(doc["failed_flows"], 1);
}

TEST(SummaryJson, StuckRunCarriesDiagnosis) {
  RunResults r = sample_results();
  r.status = RunStatus::kStuck;
  r.diagnosis = "rank 3 waits for all_reduce #7 of group all";
  const auto path = testing::make_scratch_dir("summary-stuck") / "summary.json";
  write_summary_json(r, path.string());
  const nlohmann::json doc = nlohmann::json::parse(read_file(path));
  EXPECT_EQ(doc["status"], "stuck");
  EXPECT_EQ(doc["diagnosis"], "rank 3 waits for all_reduce #7 of group all");
}

// An RNIC port that does not count PFC pauses sent or retransmissions, a rate limit held by paced
// posting, failures by status and the data plane's notes.
RunResults rnic_results() {
  RunResults r = sample_results();
  PortRecord& port = r.ports[1];
  for (size_t f = 0; f < dataplane::kPortCounterFields.size(); ++f) {
    const std::string_view name = dataplane::kPortCounterFields[f].name;
    if (name == "pfc_pauses_sent" || name == "retransmitted_packets") {
      port.absent |= dataplane::port_counter_bit(f);
      port.*dataplane::kPortCounterFields[f].member = 0;
    }
  }
  port.rate_limit_bps = 25'000'000'000;
  port.rate_limited_by = "posting";
  r.flows_by_status[static_cast<size_t>(transport::FlowStatus::kRemoteAccessError)] = 1;
  r.flows_by_status[static_cast<size_t>(transport::FlowStatus::kFlushed)] = 4;
  r.failed_flows = 5;
  r.notes = {"p1: mlx5_1 port 1, GID 3: 10.0.0.2 (ipv4)"};
  return r;
}

TEST(SummaryJson, AbsentCountersAreNullAndFailuresAreByStatus) {
  const auto path = testing::make_scratch_dir("summary-rnic") / "summary.json";
  write_summary_json(rnic_results(), path.string());
  const nlohmann::json doc = nlohmann::json::parse(read_file(path));
  const nlohmann::json& port = doc["ports"][1];
  EXPECT_TRUE(port["pfc_pauses_sent"].is_null());
  EXPECT_TRUE(port["retransmitted_packets"].is_null());
  EXPECT_EQ(port["timeouts"], 1);  // counted ones stay numbers
  EXPECT_EQ(port["rate_limit_bps"], 25'000'000'000u);
  EXPECT_EQ(port["rate_limited_by"], "posting");
  EXPECT_FALSE(doc["ports"][0].contains("rate_limit_bps"));
  EXPECT_EQ(doc["failed_by_status"], nlohmann::json({{"flushed", 4}, {"remote-access-error", 1}}));
  EXPECT_EQ(doc["notes"], nlohmann::json({"p1: mlx5_1 port 1, GID 3: 10.0.0.2 (ipv4)"}));
}

TEST(SummaryJson, EmptyRunHasEmptyArrays) {
  const auto path = testing::make_scratch_dir("summary-empty") / "summary.json";
  write_summary_json(RunResults{}, path.string());
  const nlohmann::json doc = nlohmann::json::parse(read_file(path));
  for (const char* key : {"jobs", "collectives", "iterations", "ports", "fct"}) {
    EXPECT_TRUE(doc[key].is_array()) << key;
    EXPECT_TRUE(doc[key].empty()) << key;
  }
}

// ---------------------------------------------------------------------------------------------
// collectives.csv

const std::vector<std::string> kCollectiveColumns = {
    "instance",        "job",        "type",        "algorithm",  "protocol",
    "group",           "sequence",   "tag",         "group_size", "trace_bytes",
    "algbw_bytes",     "wire_bytes", "iteration",   "warmup",     "first_arrival_ns",
    "last_arrival_ns", "end_ns",     "cct_ns",      "algbw_GBps", "busbw_GBps",
    "ideal_percent",   "flows",      "failed_flows"};

TEST(CollectivesCsv, HeaderAndOneRowPerInstance) {
  const auto path = testing::make_scratch_dir("collectives") / "collectives.csv";
  write_collectives_csv(sample_results(), path.string());
  const std::string text = read_file(path);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  const std::vector<std::string> lines = lines_of(text);
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(csv_fields(lines[0]), kCollectiveColumns);
  for (size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(csv_fields(lines[i]).size(), kCollectiveColumns.size()) << lines[i];
  }
  const std::vector<std::string> ar = csv_fields(lines[2]);
  EXPECT_EQ(ar[0], "1");
  EXPECT_EQ(ar[1], "train");
  EXPECT_EQ(ar[2], "all_reduce");
  EXPECT_EQ(ar[4], "simple");
  EXPECT_EQ(ar[5], "all");
  EXPECT_EQ(ar[13], "false");
  EXPECT_EQ(ar[17], "1000000");
  EXPECT_DOUBLE_EQ(std::stod(ar[19]), 1.75);
  EXPECT_DOUBLE_EQ(std::stod(ar[20]), 50.0);
  const std::vector<std::string> p2p = csv_fields(lines[4]);
  EXPECT_EQ(p2p[2], "send_recv");
  EXPECT_EQ(p2p[5], "p2p");
  EXPECT_EQ(csv_fields(lines[5])[5], "3");
}

TEST(CollectivesCsv, QuotesNamesHoldingCommas) {
  RunResults r = sample_results();
  r.jobs[0].name = "train,\"big\"";
  const auto path = testing::make_scratch_dir("collectives-quote") / "collectives.csv";
  write_collectives_csv(r, path.string());
  const std::vector<std::string> lines = lines_of(read_file(path));
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_NE(lines[1].find("\"train,\"\"big\"\"\""), std::string::npos) << lines[1];
  const std::vector<std::string> row = csv_fields(lines[1]);
  ASSERT_EQ(row.size(), kCollectiveColumns.size());
  EXPECT_EQ(row[1], "train,\"big\"");
}

TEST(CollectivesCsv, NoInstancesStillWritesHeader) {
  const auto path = testing::make_scratch_dir("collectives-empty") / "collectives.csv";
  write_collectives_csv(RunResults{}, path.string());
  const std::vector<std::string> lines = lines_of(read_file(path));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(csv_fields(lines[0]), kCollectiveColumns);
}

// ---------------------------------------------------------------------------------------------
// flows.csv

transport::FlowRecord flow(uint64_t id) {
  transport::FlowRecord f;
  f.flow_id = id;
  f.tags.src_rank = static_cast<int32_t>(id % 8);
  f.tags.dst_rank = static_cast<int32_t>((id + 1) % 8);
  f.tags.collective = id / 100;
  f.bytes = 65536;
  f.posted_at = static_cast<clock::Nanos>(id) * 1000;
  f.first_byte_out = f.posted_at + 10;
  f.delivered_at = f.posted_at + 5000;
  f.finished_at = f.posted_at + 6000;
  f.packets = 16;
  return f;
}

TEST(FlowCsvWriter, RoundTripAcrossBufferFlushes) {
  // Enough records to pass the 1 MiB buffer several times.
  constexpr uint64_t kRecords = 30000;
  const auto path = testing::make_scratch_dir("flows") / "flows.csv";
  std::string expected(transport::flow_csv_header());
  {
    FlowCsvWriter writer(path.string());
    EXPECT_EQ(writer.path(), path.string());
    for (uint64_t i = 0; i < kRecords; ++i) {
      const transport::FlowRecord f = flow(i);
      writer.append(f);
      transport::append_flow_csv(f, expected);
    }
    EXPECT_EQ(writer.records(), kRecords);
    ASSERT_GT(expected.size(), 2u << 20);
  }  // the destructor flushes
  const std::string text = read_file(path);
  EXPECT_EQ(text, expected);
  const std::vector<std::string> lines = lines_of(text);
  ASSERT_EQ(lines.size(), kRecords + 1);
  EXPECT_EQ(lines[0] + "\n", transport::flow_csv_header());
  EXPECT_EQ(lines[1].rfind("0,", 0), 0u);
  EXPECT_EQ(lines.back().rfind(std::to_string(kRecords - 1) + ",", 0), 0u);
  EXPECT_EQ(csv_fields(lines.back()).size(), csv_fields(lines[0]).size());
}

TEST(FlowCsvWriter, FlushMakesLinesVisibleAndCloseIsFinal) {
  const auto path = testing::make_scratch_dir("flows-flush") / "flows.csv";
  FlowCsvWriter writer(path.string());
  writer.append(flow(0));
  writer.append(flow(1));
  writer.flush();
  EXPECT_EQ(lines_of(read_file(path)).size(), 3u);
  writer.append(flow(2));
  writer.close();
  EXPECT_EQ(lines_of(read_file(path)).size(), 4u);
  EXPECT_THROW(writer.append(flow(3)), std::runtime_error);
}

TEST(FlowCsvWriter, NoRecordsStillWritesHeader) {
  const auto path = testing::make_scratch_dir("flows-empty") / "flows.csv";
  { FlowCsvWriter writer(path.string()); }
  EXPECT_EQ(read_file(path), transport::flow_csv_header());
}

// ---------------------------------------------------------------------------------------------
// Unwritable paths

template <typename Write>
void expect_error_naming_path(const std::string& path, Write write) {
  try {
    write();
    FAIL() << "no error for " << path;
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
    EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
  }
}

TEST(ResultsFiles, UnwritablePathThrowsWithPath) {
  const auto missing = testing::make_scratch_dir("unwritable") / "no-such-dir";
  const RunResults r = sample_results();
  const std::string summary = (missing / "summary.json").string();
  const std::string collectives_csv = (missing / "collectives.csv").string();
  const std::string flows = (missing / "flows.csv").string();
  expect_error_naming_path(summary, [&] { write_summary_json(r, summary); });
  expect_error_naming_path(collectives_csv, [&] { write_collectives_csv(r, collectives_csv); });
  expect_error_naming_path(flows, [&] { FlowCsvWriter writer(flows); });
}

// ---------------------------------------------------------------------------------------------
// Console report

TEST(ConsoleReport, CollectiveTableGroupsMeasuredInstances) {
  const std::string report = console_report(sample_results());
  EXPECT_EQ(words_of(lines_of(report)[0]),
            (std::vector<std::string>{"Run", "lab-a:", "10", "ranks", "in", "2", "jobs,",
                                      "topology", "single-switch,", "seed", "42"}));
  EXPECT_EQ(row_starting(report, {"job", "collective"}),
            (std::vector<std::string>{"job", "collective", "size", "count", "group", "time_us",
                                      "algbw_GBps", "busbw_GBps", "ideal_%"}));
  // Two measured all-reduces (the warm-up one is left out): mean CCT 700 us, mean algbw
  // (1 + 2.5) / 2, mean busbw (1.75 + 4.375) / 2 = 3.0625, ideal 3.0625 / 3.5 = 87.5%.
  EXPECT_EQ(row_starting(report, {"train", "all_reduce"}),
            (std::vector<std::string>{"train", "all_reduce", "1", "MiB", "2", "8", "700.0", "1.75",
                                      "3.06", "87.5"}));
  EXPECT_EQ(row_starting(report, {"train", "all_gather"}),
            (std::vector<std::string>{"train", "all_gather", "64", "KiB", "1", "4", "262.1", "1.00",
                                      "0.75", "21.4"}));
  EXPECT_EQ(row_starting(report, {"infer", "send_recv"}),
            (std::vector<std::string>{"infer", "send_recv", "4", "KiB", "1", "2", "4.1", "1.00",
                                      "1.00", "28.6"}));
  for (const std::string& line : lines_of(report)) EXPECT_LE(line.size(), 100u) << line;
}

TEST(ConsoleReport, FctIterationsCongestionAndStatus) {
  const std::string report = console_report(sample_results());
  EXPECT_EQ(row_starting(report, {"collective", "flows"}),
            (std::vector<std::string>{"collective", "flows", "p50", "p90", "p99", "p99.9", "max"}));
  EXPECT_EQ(
      row_starting(report, {"all_reduce", "32"}),
      (std::vector<std::string>{"all_reduce", "32", "10.00", "20.00", "30.00", "40.00", "50.00"}));
  EXPECT_EQ(row_starting(report, {"send_recv", "16"}),
            (std::vector<std::string>{"send_recv", "16", "1.00", "2.00", "3.00", "4.00", "5.00"}));
  // Measured iterations only.
  EXPECT_EQ(row_starting(report, {"train", "1"}),
            (std::vector<std::string>{"train", "1", "1.200", "1.000"}));
  EXPECT_EQ(row_starting(report, {"train", "2"}),
            (std::vector<std::string>{"train", "2", "0.800", "0.650"}));
  EXPECT_TRUE(row_starting(report, {"train", "0"}).empty());
  // Only the port that saw congestion signals: ecn_marks, cnps_sent, cnps_recv, pfc_sent,
  // pfc_recv, drops, missing, retransmits, timeouts.
  EXPECT_EQ(row_starting(report, {"p1"}),
            (std::vector<std::string>{"p1", "5", "4", "0", "0", "0", "2", "0", "3", "1"}));
  EXPECT_TRUE(row_starting(report, {"p0"}).empty());
  EXPECT_EQ(report.find("No congestion signals"), std::string::npos);
  EXPECT_EQ(lines_of(report).back(),
            "Status completed: virtual time 5 ms, wall 0.25 s, 123k events, 80 flows, 1 failed");
  EXPECT_EQ(report.find("Diagnosis"), std::string::npos);
}

TEST(ConsoleReport, QuietRunSaysSoAndStuckRunShowsDiagnosis) {
  RunResults r = sample_results();
  r.ports[1] = r.ports[0];
  r.status = RunStatus::kStuck;
  r.diagnosis = "rank 3 waits for all_reduce #7 of group all";
  const std::string report = console_report(r);
  EXPECT_NE(report.find("No congestion signals"), std::string::npos);
  EXPECT_NE(report.find("Status stuck:"), std::string::npos);
  EXPECT_NE(report.find("Diagnosis:\nrank 3 waits for all_reduce #7 of group all\n"),
            std::string::npos);
}

TEST(ConsoleReport, AbsentCountersShowAsDashesAndFailuresByStatus) {
  const std::string report = console_report(rnic_results());
  // ecn_marks, cnps_sent, cnps_recv, pfc_sent, pfc_recv, drops, missing, retransmits, timeouts.
  EXPECT_EQ(row_starting(report, {"p1"}),
            (std::vector<std::string>{"p1", "5", "4", "0", "-", "0", "2", "0", "-", "1"}));
  EXPECT_NE(report.find("80 flows, 5 failed (flushed 4, remote-access-error 1)\n"),
            std::string::npos)
      << report;
  EXPECT_EQ(lines_of(report).back(), "Note: p1: mlx5_1 port 1, GID 3: 10.0.0.2 (ipv4)");
}

TEST(ConsoleReport, RunWithoutMeasuredInstances) {
  RunResults r;
  r.status = RunStatus::kInterrupted;
  const std::string report = console_report(r);
  EXPECT_NE(report.find("No measured collective instances"), std::string::npos);
  EXPECT_NE(report.find("No measured iterations"), std::string::npos);
  EXPECT_NE(report.find("Status interrupted:"), std::string::npos);
}

}  // namespace
}  // namespace etwire::outputs
