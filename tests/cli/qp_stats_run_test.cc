// `etwire run` and its per-QP results: qps.csv beside summary.json, one row per QP half, whose
// counters add up to the port counters of summary.json, and telemetry.record.qps turning it off.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/testing/test_paths.h"

namespace etwire {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

// A CSV file (no quoted fields) as rows of named fields.
struct Csv {
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
};

Csv read_csv(const fs::path& path) {
  Csv csv;
  std::istringstream in(slurp(path));
  std::string line;
  if (!std::getline(in, line)) {
    ADD_FAILURE() << path << " is empty or missing";
    return csv;
  }
  csv.header = split(line);
  while (std::getline(in, line)) {
    const std::vector<std::string> fields = split(line);
    EXPECT_EQ(fields.size(), csv.header.size()) << path << ": " << line;
    auto& row = csv.rows.emplace_back();
    for (size_t i = 0; i < fields.size() && i < csv.header.size(); ++i) {
      row[csv.header[i]] = fields[i];
    }
  }
  return csv;
}

uint64_t number(const std::map<std::string, std::string>& row, const std::string& column) {
  const auto it = row.find(column);
  if (it == row.end() || it->second.empty()) {
    ADD_FAILURE() << "no value in column " << column;
    return 0;
  }
  return std::stoull(it->second);
}

std::string quoted(const fs::path& path) {
  std::string text = "'";
  text += path.string();
  text += "'";
  return text;
}

// The congestion example made lossy and short: no PFC, random loss, two iterations.
// Retransmissions, NAKs, timeouts, CE marks, CNPs and rate cuts all happen.
testing::CommandResult run_lossy(const fs::path& out, const std::string& more = "") {
  std::string args = "run ";
  args += quoted(testing::source_dir() / "configs/twin-congestion.yaml");
  args += " --out ";
  args += quoted(out);
  args +=
      " --no-progress --no-metrics --set fabric.pfc.enabled=false --set workload.iterations=2"
      " --set fabric.drop_probability=0.001";
  args += more;
  return testing::run_etwire(args);
}

TEST(RunQpStats, QpsCsvHasARowPerQpHalfThatAddUpToThePortCounters) {
  const fs::path scratch = testing::make_scratch_dir("run-qps");
  const fs::path out = scratch / "results";
  const auto r = run_lossy(out);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("QPs that met the most congestion"));

  const Csv qps = read_csv(out / "qps.csv");
  EXPECT_EQ(qps.header, (std::vector<std::string>{"role",
                                                  "port",
                                                  "remote_port",
                                                  "qpn",
                                                  "remote_qpn",
                                                  "job",
                                                  "rank",
                                                  "peer",
                                                  "qp_index",
                                                  "messages",
                                                  "bytes",
                                                  "packets",
                                                  "retransmitted_packets",
                                                  "naks_sent",
                                                  "naks_received",
                                                  "timeouts",
                                                  "ecn_marked_received",
                                                  "cnps_sent",
                                                  "cnps_received",
                                                  "sprayed_packets",
                                                  "reordered_packets",
                                                  "trimmed_packets",
                                                  "rate_cuts",
                                                  "min_rate_bps",
                                                  "mean_rate_bps",
                                                  "busy_ns"}));

  // One requester row per (port, QP number) that sent flows, one responder row per (port, QP
  // number) that received them: exactly the QPs flows.csv names.
  const nlohmann::json summary = nlohmann::json::parse(slurp(out / "summary.json"));
  std::vector<std::string> port_names;
  for (const auto& port : summary["ports"]) port_names.push_back(port["name"]);
  const Csv flows = read_csv(out / "flows.csv");
  std::set<std::pair<std::string, uint64_t>> requesters_of_flows;
  std::set<std::pair<std::string, uint64_t>> responders_of_flows;
  uint64_t flow_bytes = 0;
  for (const auto& flow : flows.rows) {
    requesters_of_flows.insert({port_names.at(number(flow, "src_port")), number(flow, "qpn")});
    responders_of_flows.insert({port_names.at(number(flow, "dst_port")), number(flow, "dest_qpn")});
    flow_bytes += number(flow, "bytes");
  }
  std::set<std::pair<std::string, uint64_t>> requester_rows;
  std::set<std::pair<std::string, uint64_t>> responder_rows;
  std::map<std::string, uint64_t> totals;
  std::map<std::string, std::map<std::string, uint64_t>> by_port;  // [port][column]
  for (const auto& row : qps.rows) {
    const bool requester = row.at("role") == "requester";
    ASSERT_TRUE(requester || row.at("role") == "responder") << row.at("role");
    const std::pair<std::string, uint64_t> half{row.at("port"), number(row, "qpn")};
    EXPECT_TRUE((requester ? requester_rows : responder_rows).insert(half).second)
        << "a second row for " << half.first << " QP " << half.second;
    EXPECT_FALSE(row.at("job").empty());
    for (const char* column :
         {"messages", "bytes", "packets", "retransmitted_packets", "naks_sent", "naks_received",
          "timeouts", "ecn_marked_received", "cnps_sent", "cnps_received"}) {
      const std::string key = std::string(requester ? "requester." : "responder.") + column;
      totals[key] += number(row, column);
      by_port[row.at("port")][key] += number(row, column);
    }
    if (requester) {
      totals["rate_cuts"] += number(row, "rate_cuts");
      EXPECT_LE(number(row, "min_rate_bps"), number(row, "mean_rate_bps"));
      EXPECT_LE(number(row, "mean_rate_bps"), 100'000'000'000u);
      EXPECT_GT(number(row, "busy_ns"), 0u);
    } else {
      // A responder has no reaction point: no rate figures, rather than zeros.
      EXPECT_EQ(row.at("rate_cuts"), "");
      EXPECT_EQ(row.at("min_rate_bps"), "");
      EXPECT_EQ(row.at("mean_rate_bps"), "");
    }
  }
  EXPECT_EQ(requester_rows, requesters_of_flows);
  EXPECT_EQ(responder_rows, responders_of_flows);
  EXPECT_EQ(qps.rows.size(), summary["qps"]["count"].get<size_t>());

  // Every message completed and was delivered.
  EXPECT_EQ(totals["requester.messages"], flows.rows.size());
  EXPECT_EQ(totals["responder.messages"], flows.rows.size());
  EXPECT_EQ(totals["requester.bytes"], flow_bytes);
  EXPECT_EQ(totals["responder.bytes"], flow_bytes);

  // Per port and over the run, the QPs' counters are the port counters of summary.json.
  std::map<std::string, uint64_t> ports;
  for (const auto& port : summary["ports"]) {
    const std::string name = port["name"];
    auto& mine = by_port[name];
    EXPECT_EQ(mine["requester.packets"], port["data_packets"].get<uint64_t>()) << name;
    EXPECT_EQ(mine["requester.retransmitted_packets"],
              port["retransmitted_packets"].get<uint64_t>())
        << name;
    EXPECT_EQ(mine["requester.timeouts"], port["timeouts"].get<uint64_t>()) << name;
    EXPECT_EQ(mine["requester.cnps_received"], port["cnps_received"].get<uint64_t>()) << name;
    EXPECT_EQ(mine["responder.cnps_sent"], port["cnps_sent"].get<uint64_t>()) << name;
    EXPECT_EQ(mine["responder.ecn_marked_received"], port["ecn_marked_received"].get<uint64_t>())
        << name;
    for (const char* counter : {"retransmitted_packets", "timeouts", "cnps_received",
                                "ecn_marked_received", "data_packets"}) {
      ports[counter] += port[counter].get<uint64_t>();
    }
  }
  // The run did what it is for.
  EXPECT_GT(ports["retransmitted_packets"], 0u);
  EXPECT_GT(ports["timeouts"], 0u);
  EXPECT_GT(ports["cnps_received"], 0u);
  EXPECT_GT(totals["requester.naks_received"], 0u);
  // NAKs cross the lossy fabric too: some are lost on the way back.
  EXPECT_LE(totals["requester.naks_received"], totals["responder.naks_sent"]);
  EXPECT_GT(totals["rate_cuts"], 0u);

  // summary.json's totals are the file's.
  const auto& sums = summary["qps"]["totals"];
  EXPECT_EQ(sums["retransmitted_packets"].get<uint64_t>(), ports["retransmitted_packets"]);
  EXPECT_EQ(sums["cnps_received"].get<uint64_t>(), ports["cnps_received"]);
  EXPECT_EQ(sums["rate_cuts"].get<uint64_t>(), totals["rate_cuts"]);
  EXPECT_EQ(sums["packets"].get<uint64_t>(),
            totals["requester.packets"] + totals["responder.packets"]);
  // Bounded: a few QPs per ranking, the worst first.
  const auto& top = summary["qps"]["top"]["retransmitted_packets"];
  ASSERT_GT(top.size(), 0u);
  EXPECT_LE(top.size(), 5u);
  for (size_t i = 1; i < top.size(); ++i) {
    EXPECT_GE(top[i - 1]["retransmitted_packets"].get<uint64_t>(),
              top[i]["retransmitted_packets"].get<uint64_t>());
  }
}

TEST(RunQpStats, RecordQpsFalseWritesNoQpsCsv) {
  const fs::path scratch = testing::make_scratch_dir("run-no-qps");
  const fs::path out = scratch / "results";
  const auto r = run_lossy(out, " --set telemetry.record.qps=false");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(fs::exists(out / "summary.json"));
  EXPECT_TRUE(fs::exists(out / "flows.csv"));
  EXPECT_FALSE(fs::exists(out / "qps.csv"));
}

// On verbs ports the RNIC runs the QPs (here the software RNIC, behind the verbs seam as a
// device would be): etwire has no per-QP counters of its own, so there are no rows rather than
// rows of zeros.
TEST(RunQpStats, VerbsRunsHaveNoQpRows) {
  const fs::path scratch = testing::make_scratch_dir("run-qps-verbs");
  const fs::path out = scratch / "results";
  std::string args = "run ";
  args += quoted(testing::source_dir() / "configs/verbs-lab.yaml");
  args += " --out ";
  args += quoted(out);
  args += " --no-progress --no-metrics --set verbs.rnic=software";
  const auto r = testing::run_etwire(args);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_FALSE(fs::exists(out / "qps.csv"));
  const nlohmann::json summary = nlohmann::json::parse(slurp(out / "summary.json"));
  ASSERT_TRUE(summary.contains("qps"));
  EXPECT_TRUE(summary["qps"].is_null());
  EXPECT_THAT(r.output, ::testing::Not(HasSubstr("QPs")));
}

}  // namespace
}  // namespace etwire
