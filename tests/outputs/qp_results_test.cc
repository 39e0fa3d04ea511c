// qps.csv, summary.json's `qps` and the console's QP section from hand-made results: empty fields
// where a figure does not exist, bounded summaries whatever the number of QPs, and nothing at all
// when the QPs were not counted.
#include "outputs/qp_results.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "outputs/console_report.h"
#include "tests/testing/test_paths.h"

namespace etwire::outputs {
namespace {

using engine::QpRecord;
using engine::RunResults;
using transport::QpRole;

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

QpRecord requester(uint32_t port, uint32_t qpn, uint64_t retransmitted, uint64_t cuts) {
  QpRecord qp;
  qp.stats.role = QpRole::kRequester;
  qp.stats.port = port;
  qp.stats.remote_port = 2;
  qp.stats.qpn = qpn;
  qp.stats.remote_qpn = qpn + 100;
  qp.stats.counters.packets = 10;
  qp.stats.counters.retransmitted_packets = retransmitted;
  qp.stats.counters.cnps_received = cuts;
  qp.stats.rate_cuts = cuts;
  qp.stats.min_rate_bps = cuts > 0 ? 25e9 : 100e9;
  qp.stats.mean_rate_bps = cuts > 0 ? 60e9 : 100e9;
  qp.stats.busy_ns = 1000;
  qp.known = true;
  qp.job = 0;
  qp.rank = static_cast<int32_t>(qpn);
  qp.peer = 7;
  return qp;
}

RunResults twelve_requesters_and_a_responder() {
  RunResults results;
  results.jobs.push_back({"train, the big one", "t", 8, 1, 0, 0});
  engine::PortRecord a;
  a.name = "a";
  engine::PortRecord b;
  b.name = "b";
  engine::PortRecord c;
  c.name = "c";
  results.ports = {a, b, c};
  results.qps_counted = true;
  for (uint32_t q = 0; q < 12; ++q) {
    results.qps.push_back(requester(q % 2, 12 - q, q, q % 3));  // in no particular order
  }
  QpRecord responder;
  responder.stats.role = QpRole::kResponder;
  responder.stats.port = 2;
  responder.stats.remote_port = 0;
  responder.stats.qpn = 112;
  responder.stats.remote_qpn = 12;
  responder.stats.counters.cnps_sent = 4;
  results.qps.push_back(responder);  // known = false: its connection is not the engine's
  return results;
}

TEST(QpsCsv, OneRowPerHalfInPortRoleQpOrderWithEmptyFieldsForWhatDoesNotExist) {
  const RunResults results = twelve_requesters_and_a_responder();
  const auto dir = etwire::testing::make_scratch_dir("qps-csv");
  write_qps_csv(results, (dir / "qps.csv").string());
  const auto lines = lines_of(slurp(dir / "qps.csv"));
  ASSERT_EQ(lines.size(), 14u);
  EXPECT_EQ(lines[0] + "\n", qps_csv_header());
  // Port a's requesters first, by QP number (the even q: qpn 12, 10, ..., 2).
  EXPECT_EQ(lines[1],
            "requester,a,c,2,102,\"train, the big one\",2,7,0,0,0,10,10,0,0,0,0,0,1,0,0,0,1,"
            "25000000000,60000000000,1000");
  // A responder has no rate figures, and this one no job or ranks: empty, not 0.
  EXPECT_EQ(lines[13], "responder,c,a,112,12,,,,,0,0,0,0,0,0,0,0,4,0,0,0,0,,,,");
}

TEST(QpsCsv, AggregationHostsAreNamedAfterThePortsAndReadBack) {
  RunResults results;
  results.ports.resize(2);
  results.ports[0].name = "a";
  results.ports[1].name = "b";
  results.aggregation_hosts = {"agg0"};
  EXPECT_EQ(qp_port_name(results, 1), "b");
  EXPECT_EQ(qp_port_name(results, 2), "agg0");
  EXPECT_EQ(qp_port_name(results, 3), "3");  // neither: its number
  EXPECT_EQ(qp_port_index(results, "b"), 1u);
  EXPECT_EQ(qp_port_index(results, "agg0"), 2u);
  EXPECT_EQ(qp_port_index(results, "agg1"), std::nullopt);
  EXPECT_EQ(qp_port_index(results, "c"), std::nullopt);
}

TEST(QpsSummary, BoundedTotalsAndTheWorstFive) {
  RunResults results = twelve_requesters_and_a_responder();
  const nlohmann::ordered_json j = qps_summary_json(results);
  EXPECT_EQ(j["count"], 13);
  EXPECT_EQ(j["requesters"], 12);
  EXPECT_EQ(j["responders"], 1);
  EXPECT_EQ(j["totals"]["retransmitted_packets"], 66);  // 0 + 1 + ... + 11
  EXPECT_EQ(j["totals"]["cnps_sent"], 4);
  EXPECT_EQ(j["min_rate_bps"], 25'000'000'000);
  const auto& worst = j["top"]["retransmitted_packets"];
  ASSERT_EQ(worst.size(), kTopQps);
  EXPECT_EQ(worst[0]["retransmitted_packets"], 11);
  EXPECT_EQ(worst[0]["qpn"], 1);
  EXPECT_EQ(worst[0]["port"], "b");
  EXPECT_EQ(worst[4]["retransmitted_packets"], 7);
  // Only QPs that had any: 8 of the 12 were cut.
  EXPECT_EQ(j["top"]["rate_cuts"].size(), kTopQps);
  EXPECT_EQ(j["top"]["rate_cuts"][0]["rate_cuts"], 2);

  results.qps_counted = false;
  results.qps.clear();
  EXPECT_TRUE(qps_summary_json(results).is_null());
}

TEST(QpReport, AFewLinesWhateverTheNumberOfQps) {
  RunResults results = twelve_requesters_and_a_responder();
  std::string out;
  append_qp_report(results, out);
  const auto lines = lines_of(out);
  // A blank line, the title, the header and five QPs.
  ASSERT_EQ(lines.size(), 3u + kTopQps) << out;
  EXPECT_NE(lines[1].find("11 of 12 requesters"), std::string::npos) << lines[1];
  EXPECT_NE(lines[3].find("b 1 -> c"), std::string::npos) << lines[3];
  EXPECT_NE(console_report(results).find(lines[1]), std::string::npos);

  for (QpRecord& qp : results.qps) {
    qp.stats.counters.retransmitted_packets = 0;
    qp.stats.rate_cuts = 0;
  }
  out.clear();
  append_qp_report(results, out);
  EXPECT_EQ(lines_of(out).size(), 2u) << out;
  EXPECT_NE(out.find("no requester retransmitted or had its rate cut"), std::string::npos);

  results.qps_counted = false;
  out.clear();
  append_qp_report(results, out);
  EXPECT_EQ(out, "");
}

}  // namespace
}  // namespace etwire::outputs
