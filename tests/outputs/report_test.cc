// `etwire report`'s pieces without a browser: summary.json read back into the same tables the
// console prints, the CSV reader and its errors, ports.csv as the engine's sink writes it, the
// charts' figures from hand-made files, bounded series, and the page with one run and with two.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/run_results.h"
#include "outputs/compare/comparison_report.h"
#include "outputs/compare/run_comparison.h"
#include "outputs/compare/tolerances.h"
#include "outputs/console_report.h"
#include "outputs/port_csv_writer.h"
#include "outputs/qp_results.h"
#include "outputs/report/csv_reader.h"
#include "outputs/report/html_report.h"
#include "outputs/report/report_charts.h"
#include "outputs/report/report_input_error.h"
#include "outputs/report/summary_reader.h"
#include "outputs/report/sweep_page.h"
#include "outputs/result_tables.h"
#include "outputs/results_files.h"
#include "outputs/summary_json.h"
#include "tests/testing/test_paths.h"

namespace etwire::outputs::report {
namespace {

namespace fs = std::filesystem;
using engine::CollectiveRecord;
using engine::RunResults;

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

CollectiveRecord all_reduce(uint64_t instance, uint32_t iteration, bool warmup, clock::Nanos cct) {
  CollectiveRecord c;
  c.instance = instance;
  c.kind = trace::CollectiveType::kAllReduce;
  c.group = -1;
  c.group_size = 8;
  c.trace_bytes = 1 << 20;
  c.algbw_bytes = 1'000'000;
  c.iteration = iteration;
  c.warmup = warmup;
  c.last_arrival = 1000 * instance;
  c.end = c.last_arrival + cct;
  return c;
}

// A zero for each QP counter of a qps.csv row (with its comma).
std::string zeros_for_counters() {
  std::string zeros;
  for (size_t f = 0; f < transport::kQpCounterFields.size(); ++f) zeros += "0,";
  return zeros;
}

RunResults sample() {
  RunResults r;
  r.run_name = "demo";
  r.topology = "single-switch";
  r.world_size = 8;
  r.end_time = 4'000'000;
  r.goodput_bytes_per_second = 3.5e9;
  r.jobs = {{"train", "traces/t", 8, 2, 1, 100}};
  // busbw of 1e6 bytes over 8 ranks: 1.75 GB/s in 1 ms, 3.5 GB/s in 0.5 ms.
  r.collectives = {all_reduce(0, 0, true, 2'000'000), all_reduce(1, 1, false, 1'000'000),
                   all_reduce(2, 2, false, 500'000)};
  engine::PortRecord port;
  port.name = "host0";
  port.tx_bytes = 1234;
  port.absent = dataplane::port_counter_bit(3);
  r.ports = {port};
  r.fct = {{trace::CollectiveType::kAllReduce, 4, 10, 20, 30, 40, 50}};
  r.flows = 4;
  return r;
}

// A results directory with summary.json and the given CSV files.
fs::path results_dir(const char* name, const RunResults& results) {
  const fs::path dir = testing::make_scratch_dir(name);
  write_summary_json(results, (dir / "summary.json").string());
  return dir;
}

TEST(SummaryReader, ReadsBackTheTablesTheConsolePrints) {
  const RunResults original = sample();
  const fs::path dir = results_dir("report-summary", original);
  const RunResults read = read_summary_json((dir / "summary.json").string());
  EXPECT_EQ(read.run_name, "demo");
  EXPECT_EQ(read.end_time, 4'000'000);
  ASSERT_EQ(read.collectives.size(), 3u);
  EXPECT_EQ(collective_table(read).rows, collective_table(original).rows);
  EXPECT_EQ(fct_table(read).rows, fct_table(original).rows);
  ASSERT_EQ(read.ports.size(), 1u);
  EXPECT_EQ(read.ports[0].tx_bytes, 1234u);
  EXPECT_EQ(read.ports[0].absent, dataplane::port_counter_bit(3)) << "null stays absent";
}

TEST(SummaryReader, ErrorsNameTheFileAndTheRecord) {
  const fs::path dir = testing::make_scratch_dir("report-summary-bad");
  write(dir / "summary.json", R"({"status": "completed", "run": {"end_time_ns": 1}, "jobs": [],
        "collectives": [{"instance": 0, "job": "nobody"}], "iterations": [], "ports": [],
        "fct": []})");
  try {
    read_summary_json((dir / "summary.json").string());
    FAIL() << "read a collective of an unknown job";
  } catch (const ReportInputError& e) {
    EXPECT_NE(std::string(e.what()).find("summary.json: collectives[0]"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(load_report_run(testing::make_scratch_dir("report-empty"), "x"), ReportInputError);
}

// A count is an integer from 0 up: before, nlohmann read -3 drops as 2^64 - 3 and 1.5 flows as 1.
TEST(SummaryReader, RefusesANegativeOrFractionalCount) {
  const fs::path dir = testing::make_scratch_dir("report-summary-negative");
  for (const std::string value : {"-3", "1.5", "18446744073709551616"}) {
    write(dir / "summary.json", R"({"status": "completed", "run": {"end_time_ns": 1}, "jobs": [],
          "collectives": [], "iterations": [], "fct": [], "ports": [{"name": "h0", "drops": )" +
                                    value + "}]}");
    try {
      read_summary_json((dir / "summary.json").string());
      ADD_FAILURE() << value << " read";
    } catch (const ReportInputError& e) {
      EXPECT_NE(std::string(e.what()).find("summary.json: ports[0]: \"drops\": unexpected value"),
                std::string::npos)
          << e.what();
    }
  }
}

// A key every summary.json has (engine::ResultFields' `required`) is refused when it is missing,
// naming the record; a key a hand-written file may leave out is not.
TEST(SummaryReader, RefusesAFileWithoutAKeyItNeeds) {
  const fs::path dir = testing::make_scratch_dir("report-summary-missing");
  const auto read_with = [&](const std::string& collective) -> std::string {
    write(dir / "summary.json", R"({"status": "completed", "run": {"end_time_ns": 1},
        "jobs": [{"name": "j"}], "collectives": [)" +
                                    collective + R"(], "iterations": [],
        "ports": [], "fct": []})");
    try {
      read_summary_json((dir / "summary.json").string());
    } catch (const ReportInputError& e) {
      return e.what();
    }
    return "";
  };
  const std::string whole = R"({"instance": 0, "job": "j", "type": "all_reduce",
      "group_size": 2, "trace_bytes": 8, "algbw_bytes": 8, "iteration": 0, "warmup": false,
      "first_arrival_ns": 1, "last_arrival_ns": 2, "end_ns": 3})";
  EXPECT_EQ(read_with(whole), "");
  std::string without_end = whole;
  without_end.erase(without_end.find(R"(, "end_ns": 3)"), 13);
  EXPECT_NE(read_with(without_end).find(R"(collectives[0]: no "end_ns")"), std::string::npos)
      << read_with(without_end);
  write(dir / "summary.json", R"({"status": "completed", "jobs": []})");
  EXPECT_THROW(read_summary_json((dir / "summary.json").string()), ReportInputError);
}

// A file nested far deeper than any summary.json is refused before anything walks or prints it
// (both recurse): before, 80,000 levels under a key overflowed the stack and 50,000 printed the
// whole value in the message.
TEST(SummaryReader, RefusesDeepNestingWithAShortMessage) {
  const fs::path dir = testing::make_scratch_dir("report-summary-deep");
  for (const size_t levels : {size_t{65}, size_t{80000}}) {
    write(dir / "summary.json",
          R"({"status": )" + std::string(levels, '[') + std::string(levels, ']') + "}");
    try {
      read_summary_json((dir / "summary.json").string());
      FAIL() << levels << " levels read";
    } catch (const ReportInputError& e) {
      EXPECT_EQ(std::string(e.what()), (dir / "summary.json").string() +
                                           ": nested deeper than 64 levels: not a summary.json");
    }
  }
  // A wrong value is shown cut short, however long it is.
  write(dir / "summary.json", R"({"status": ")" + std::string(100000, 'x') + R"("})");
  try {
    read_summary_json((dir / "summary.json").string());
    FAIL() << "an unknown status read";
  } catch (const ReportInputError& e) {
    EXPECT_LT(std::string(e.what()).size(), 200u) << e.what();
  }
}

// Memory is bounded by caps on the file's size and on its count of values, not by the size alone:
// before, a 1 GiB cap let a 200 MB file of tiny values take 3.5 GB. The reader's message names
// the file and the cap.
TEST(SummaryReader, RefusesMoreValuesOrBytesThanAnySummaryHas) {
  const fs::path dir = testing::make_scratch_dir("report-summary-large");
  const std::string path = (dir / "summary.json").string();
  std::string zeros = R"({"status": [0)";
  for (uint64_t v = 0; v < kMaxSummaryJsonValues; ++v) zeros += ",0";
  write(dir / "summary.json", zeros + "]}");
  try {
    read_summary_json(path);
    FAIL() << "read";
  } catch (const ReportInputError& e) {
    EXPECT_EQ(
        std::string(e.what()).rfind(path + ": more than 6291456 values: not a summary.json", 0), 0u)
        << e.what();
  }
  write(dir / "summary.json", R"({"status": ")" + std::string(kMaxSummaryJsonBytes, 'x') + R"("})");
  try {
    read_summary_json(path);
    FAIL() << "read";
  } catch (const ReportInputError& e) {
    EXPECT_NE(std::string(e.what()).find("larger than 64 MiB"), std::string::npos) << e.what();
  }
}

TEST(CsvReader, ReadsByNameWithQuotesAndNamesTheLineOfAnError) {
  const fs::path dir = testing::make_scratch_dir("report-csv");
  write(dir / "a.csv", "n,name,extra\n1,\"a,\"\"b\"\"\",x\n\n2,plain,y\nthree,z,w\n");
  CsvReader csv((dir / "a.csv").string());
  const size_t n = csv.column("n");
  const size_t name = csv.column("name");
  EXPECT_FALSE(csv.has_column("missing"));
  EXPECT_THROW(csv.column("missing"), ReportInputError);
  ASSERT_TRUE(csv.next());
  EXPECT_EQ(csv.integer(n), 1);
  EXPECT_EQ(csv.text(name), "a,\"b\"");
  ASSERT_TRUE(csv.next());
  EXPECT_EQ(csv.text(name), "plain");
  EXPECT_EQ(csv.line(), 4u) << "the empty line counts";
  ASSERT_TRUE(csv.next());
  try {
    csv.integer(n);
    FAIL() << "parsed \"three\"";
  } catch (const ReportInputError& e) {
    EXPECT_NE(std::string(e.what()).find("a.csv:5: column \"n\""), std::string::npos) << e.what();
  }
  EXPECT_FALSE(csv.next());
}

TEST(PortCsvWriter, WritesEveryCounterAndLeavesAbsentOnesEmpty) {
  const fs::path dir = testing::make_scratch_dir("report-ports-writer");
  PortCsvWriter writer((dir / "ports.csv").string());
  dataplane::PortCounters counters;
  counters.tx_bytes = 100;
  counters.drops = 7;
  writer.append({5000, "host0", &counters, dataplane::port_counter_bit(1), 2.5e9});
  writer.close();
  const std::string text = read(dir / "ports.csv");
  std::string header = "time_ns,port";
  for (const auto& field : dataplane::kPortCounterFields) {
    header += ',';
    header += field.name;
  }
  header += ",paced_rate_bps\n";
  EXPECT_EQ(text.substr(0, header.size()), header);
  EXPECT_EQ(text.substr(header.size()),
            "5000,host0,100,,0,0,0,0,0,0,0,0,7,0,0,0,0,0,0,0,0,0,0,0,2500000000\n");
}

TEST(ReportCharts, ThroughputAndCongestionFromPortSamples) {
  const fs::path dir = results_dir("report-ports", sample());
  {
    PortCsvWriter writer((dir / "ports.csv").string());
    dataplane::PortCounters a;
    dataplane::PortCounters b;
    writer.append({0, "host0", &a, 0, 0});
    writer.append({0, "host1", &b, 0, 0});
    a.tx_bytes = 125'000;  // 1e6 bits in 10 us: 100 Gb/s
    a.ecn_marked_received = 3;
    a.pfc_pauses_received = 4;
    b.cnps_sent = 2;
    b.timeouts = 1;
    writer.append({10'000, "host0", &a, 0, 0});
    writer.append({10'000, "host1", &b, 0, 0});
    writer.close();
  }
  const ReportRun run = load_report_run(dir, "demo");
  ReportChart throughput;
  ReportChart congestion;
  add_port_series(run, "", TimeAxis{"us", 1e3}, throughput, congestion);
  ASSERT_EQ(throughput.series.size(), 2u);
  EXPECT_EQ(throughput.series[0].label, "host0");
  EXPECT_EQ(throughput.series[1].panel, "host1") << "a small chart per port when there are many";
  EXPECT_EQ(throughput.panels(), 2u);
  EXPECT_EQ(throughput.series[0].x, (std::vector<double>{0, 10}));
  EXPECT_EQ(throughput.series[0].y, (std::vector<double>{0, 100}));
  ASSERT_EQ(congestion.series.size(), 7u);
  EXPECT_EQ(congestion.series[0].y, (std::vector<double>{0, 3})) << "ECN-CE";
  EXPECT_EQ(congestion.series[1].y, (std::vector<double>{0, 2})) << "CNPs sent";
  EXPECT_EQ(congestion.series[3].label, "PFC pause frames received");
  EXPECT_EQ(congestion.series[3].y, (std::vector<double>{0, 4}));
  EXPECT_EQ(congestion.series[5].label, "retransmission timeouts");
  EXPECT_EQ(congestion.series[5].y, (std::vector<double>{0, 1}));
}

TEST(ReportCharts, BusbwPerMeasuredIterationAndNotesForMissingFiles) {
  const fs::path dir = results_dir("report-busbw", sample());
  const ReportRun run = load_report_run(dir, "demo");
  ReportChart busbw;
  add_busbw_per_iteration(run, "", busbw);
  ASSERT_EQ(busbw.series.size(), 1u);
  EXPECT_EQ(busbw.series[0].label, "all_reduce");
  EXPECT_EQ(busbw.series[0].x, (std::vector<double>{1, 2})) << "warm-up left out";
  EXPECT_DOUBLE_EQ(busbw.series[0].y[0], 1.75);
  EXPECT_DOUBLE_EQ(busbw.series[0].y[1], 3.5);
  ReportChart fct;
  add_fct_cdf(run, "", fct);
  EXPECT_TRUE(fct.series.empty());
  ASSERT_EQ(fct.notes.size(), 1u);
  EXPECT_NE(fct.notes[0].find("flows.csv"), std::string::npos);
}

TEST(ReportCharts, FctCdfIsBoundedAndEndsAtOne) {
  RunResults results = sample();
  const fs::path dir = results_dir("report-fct", results);
  std::string flows = "collective,fct_ns,status\n";
  for (int i = 0; i < 10'000; ++i) {
    flows += "1,";
    flows += std::to_string(1000 + i);
    flows += ",completed\n";
  }
  flows += "0,5,completed\n";      // a warm-up instance's flow
  flows += "2,,retry-exceeded\n";  // a failed flow
  write(dir / "flows.csv", flows);
  ReportChart fct;
  add_fct_cdf(load_report_run(dir, "demo"), "", fct);
  ASSERT_EQ(fct.series.size(), 1u);
  EXPECT_EQ(fct.series[0].x.size(), kMaxCdfPoints);
  EXPECT_DOUBLE_EQ(fct.series[0].x.front(), 1.0);
  EXPECT_DOUBLE_EQ(fct.series[0].x.back(), 10.999);
  EXPECT_DOUBLE_EQ(fct.series[0].y.back(), 1.0);
}

TEST(ReportCharts, SpreadIndexesKeepTheEndsAndTheBound) {
  EXPECT_EQ(spread_indexes(3, 10), (std::vector<size_t>{0, 1, 2}));
  const auto picked = spread_indexes(1'000'000, 1000);
  ASSERT_EQ(picked.size(), 1000u);
  EXPECT_EQ(picked.front(), 0u);
  EXPECT_EQ(picked.back(), 999'999u);
  EXPECT_TRUE(spread_indexes(0, 10).empty());
}

TEST(HtmlReport, OnePageWithEveryChartAndTheLibraryInline) {
  const fs::path dir = results_dir("report-html", sample());
  const std::string page = html_report({load_report_run(dir, "demo")});
  for (const char* id : {"busbw", "fct_cdf", "port_throughput", "queue_depth", "congestion"}) {
    std::string box = "id=\"chart-";
    box += id;
    box += '"';
    EXPECT_NE(page.find(box), std::string::npos) << id;
  }
  EXPECT_NE(page.find("Chart.js v3"), std::string::npos) << "the library is inline";
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_NE(page.find("<th>busbw_GBps</th>"), std::string::npos) << "the nccl-tests table";
}

TEST(HtmlReport, TheConsolesTablesAndTheRunsNotes) {
  RunResults results = sample();
  results.iterations = {{0, 0, true, 0, 2'000'000, {}}, {0, 1, false, 2'000'000, 3'250'000, {}}};
  results.ports[0].drops = 5;
  results.notes = {"link leaf0-spine0 down from 1 ms to 2 ms: 12 packets lost on it"};
  const fs::path dir = results_dir("report-html-tables", results);
  const std::string page = html_report({load_report_run(dir, "demo")});
  EXPECT_NE(page.find("<th>jct_ms</th>"), std::string::npos) << "the iterations";
  EXPECT_NE(page.find("<td>1</td><td>1.250</td>"), std::string::npos) << "the measured one";
  EXPECT_EQ(page.find("<td>0</td><td>2.000</td>"), std::string::npos) << "not the warm-up";
  EXPECT_NE(page.find("<th>drops</th>"), std::string::npos) << "the congestion table";
  EXPECT_NE(page.find("<td>host0</td>"), std::string::npos);
  EXPECT_NE(page.find("Note: link leaf0-spine0 down from 1 ms to 2 ms: 12 packets lost on it"),
            std::string::npos);
  // The same figures as the console's.
  EXPECT_EQ(iteration_table(results).rows.size(), 1u);
  EXPECT_NE(console_report(results).find("1.250"), std::string::npos);
}

// A requester that retransmitted and a responder, as qps.csv holds them.
std::vector<engine::QpRecord> two_qp_halves() {
  engine::QpRecord requester;
  requester.known = true;
  requester.rank = 0;
  requester.peer = 1;
  requester.stats.qpn = 17;
  requester.stats.remote_qpn = 18;
  requester.stats.counters.retransmitted_packets = 3;
  requester.stats.counters.timeouts = 1;
  requester.stats.rate_cuts = 2;
  requester.stats.min_rate_bps = 25e9;
  requester.stats.mean_rate_bps = 50e9;
  requester.stats.busy_ns = 1000;
  engine::QpRecord responder = requester;
  responder.stats = {};
  responder.stats.role = transport::QpRole::kResponder;
  responder.stats.qpn = 18;
  responder.stats.remote_qpn = 17;
  responder.stats.counters.naks_sent = 3;
  return {requester, responder};
}

TEST(HtmlReport, TheQpsThatMetTheMostCongestionFromQpsCsv) {
  RunResults results = sample();
  results.qps = two_qp_halves();
  results.qps_counted = true;
  const fs::path dir = results_dir("report-html-qps", results);
  write_qps_csv(results, (dir / "qps.csv").string());
  const ReportRun run = load_report_run(dir, "demo");
  EXPECT_TRUE(run.results.qps_counted);
  EXPECT_EQ(run.results.qps, results.qps) << "qps.csv reads back as written";
  const std::string page = html_report({run});
  EXPECT_NE(page.find("<td>host0 17 -&gt; host0</td><td>0 -&gt; 1</td><td>3</td><td>1</td>"),
            std::string::npos)
      << "the console's row";
  EXPECT_NE(page.find("1 of 1 requesters retransmitted"), std::string::npos);
  // Without qps.csv the section says why it is empty.
  fs::remove(dir / "qps.csv");
  EXPECT_NE(html_report({load_report_run(dir, "demo")}).find("qps.csv is not there"),
            std::string::npos);
}

// qps.csv without `columns` (plain fields, none quoted), as a run before they existed wrote it.
void drop_columns(const fs::path& path, const std::vector<std::string>& columns) {
  std::istringstream in(read(path));
  std::string out;
  std::vector<bool> keep;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::istringstream cells(line + ",");
    for (std::string cell; std::getline(cells, cell, ',');) fields.push_back(cell);
    if (keep.empty()) {
      for (const std::string& name : fields) {
        keep.push_back(std::find(columns.begin(), columns.end(), name) == columns.end());
      }
    }
    std::string row;
    for (size_t i = 0; i < fields.size(); ++i) {
      if (keep[i]) row += (row.empty() ? "" : ",") + fields[i];
    }
    out += row + "\n";
  }
  write(path, out);
}

TEST(HtmlReport, AQpsCsvWrittenBeforeACounterExistedReadsItAsZero) {
  RunResults results = sample();
  results.qps = two_qp_halves();
  results.qps[0].stats.counters.sprayed_packets = 5;
  results.qps[1].stats.counters.reordered_packets = 4;
  results.qps[1].stats.counters.trimmed_packets = 2;
  results.qps_counted = true;
  const fs::path dir = results_dir("report-html-old-qps", results);
  write_qps_csv(results, (dir / "qps.csv").string());
  EXPECT_EQ(load_report_run(dir, "demo").results.qps, results.qps);
  drop_columns(dir / "qps.csv", {"sprayed_packets", "reordered_packets", "trimmed_packets"});
  ASSERT_EQ(read(dir / "qps.csv").find("sprayed"), std::string::npos);
  const ReportRun run = load_report_run(dir, "demo");
  ASSERT_EQ(run.results.qps.size(), 2u);
  for (engine::QpRecord& qp : results.qps) {
    qp.stats.counters.sprayed_packets = 0;
    qp.stats.counters.reordered_packets = 0;
    qp.stats.counters.trimmed_packets = 0;
  }
  EXPECT_EQ(run.results.qps, results.qps) << "every other counter as written";
}

TEST(HtmlReport, AQpsCsvRowItCannotReadNamesTheLine) {
  RunResults results = sample();
  const fs::path dir = results_dir("report-html-bad-qps", results);
  std::ofstream(dir / "qps.csv") << qps_csv_header() << "requester,leaf9,host0,1,2,,,,,"
                                 << zeros_for_counters() << "0,0,,0\n";
  try {
    load_report_run(dir, "demo");
    FAIL() << "a port summary.json does not name was read";
  } catch (const ReportInputError& e) {
    EXPECT_NE(std::string(e.what()).find("qps.csv:2: port \"leaf9\" is not in summary.json"),
              std::string::npos)
        << e.what();
  }
}

TEST(HtmlReport, ACompareReportOpensWithItsVerdictAndDeltas) {
  const fs::path a = results_dir("report-compare-a", sample());
  RunResults slower = sample();
  for (CollectiveRecord& c : slower.collectives) c.end += 400'000;  // 0.4 ms more per instance
  const fs::path b = results_dir("report-compare-b", slower);
  Tolerances tolerances;
  tolerances.add("5");
  const RunComparison comparison =
      compare_runs(read_run_digest(a), read_run_digest(b), tolerances, "old", "new");
  ASSERT_GT(comparison.exceeded(), 0u);
  const std::string page =
      html_report({load_report_run(a, "old"), load_report_run(b, "new")}, &comparison);
  EXPECT_NE(page.find("<p class=\"verdict fail\">FAIL: Beyond tolerance:"), std::string::npos);
  EXPECT_NE(page.find("<th>delta_%</th>"), std::string::npos);
  EXPECT_NE(page.find("<tr class=\"marked\"><td>all_reduce</td><td>cct (us)</td>"),
            std::string::npos)
      << "the CCT row beyond 5 % is marked";
  EXPECT_LT(page.find("Comparison: delta"), page.find("Collectives, measured iterations"))
      << "the verdict first";
  // The same runs within a tolerance wide enough pass.
  Tolerances wide;
  wide.add("1000");
  const RunComparison within =
      compare_runs(read_run_digest(a), read_run_digest(b), wide, "old", "new");
  EXPECT_NE(html_report({load_report_run(a, "old"), load_report_run(b, "new")}, &within)
                .find("<p class=\"verdict pass\">PASS: Within tolerance"),
            std::string::npos);
  // The console says the same as the page.
  EXPECT_NE(comparison_text(comparison).find(tolerance_verdict(comparison)), std::string::npos);
}

TEST(SweepPage, BusbwAndTimeAgainstSizePerSeries) {
  const fs::path dir = testing::make_scratch_dir("report-sweep");
  std::ofstream(dir / "sweep.csv")
      << "collective,algorithm,requested_size,size,count,type,redop,root,time_us,algbw_GBps,"
         "busbw_GBps,ideal_percent,instances,status,run_dir\n"
      << "all_reduce,ring,1024,1024,256,float,sum,-1,38.1,0.03,0.05,0.4,2,completed,runs/a\n"
      << "all_reduce,ring,4096,4096,1024,float,sum,-1,39.0,0.11,0.18,1.5,2,completed,runs/b\n"
      << "all_reduce,tree,1024,1024,256,float,sum,-1,,,,,0,stuck,runs/c\n"
      << "all_gather,ring,1024,1024,32,float,none,-1,20.0,0.05,0.04,0.3,2,completed,runs/d\n";
  ASSERT_TRUE(is_sweep_dir(dir));
  const std::string page = sweep_html(dir);
  EXPECT_NE(page.find("id=\"chart-sweep_busbw\""), std::string::npos);
  EXPECT_NE(page.find("id=\"chart-sweep_time\""), std::string::npos);
  EXPECT_NE(page.find("\"label\":\"all_reduce ring\""), std::string::npos);
  EXPECT_NE(page.find("\"label\":\"all_gather ring\""), std::string::npos);
  EXPECT_EQ(page.find("\"label\":\"all_reduce tree\""), std::string::npos)
      << "a size that measured nothing draws no point";
  EXPECT_NE(page.find("<td>all_reduce</td><td>tree</td><td>1 KiB</td><td>-</td>"),
            std::string::npos)
      << "but its row says so";
  EXPECT_NE(page.find("<td>stuck</td>"), std::string::npos);
  // A run's directory is not a sweep's.
  EXPECT_FALSE(is_sweep_dir(results_dir("report-not-sweep", sample())));
}

TEST(HtmlReport, TwoRunsOverlayWithTheirLabels) {
  const fs::path a = results_dir("report-html-a", sample());
  const fs::path b = results_dir("report-html-b", sample());
  const std::string page =
      html_report({load_report_run(a, "prediction"), load_report_run(b, "lab")});
  EXPECT_NE(page.find("\"prediction: all_reduce\""), std::string::npos);
  EXPECT_NE(page.find("\"lab: all_reduce\""), std::string::npos);
  EXPECT_NE(page.find("\"run\":1"), std::string::npos) << "the second run's series are marked";
}

}  // namespace
}  // namespace etwire::outputs::report
