// RnicCounterReader on fake sysfs trees shaped like an mlx5 and a bnxt_re device port.
#include "nic/verbs/rnic_counters.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "tests/testing/test_paths.h"

namespace etwire::nic::verbs {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class RnicCountersTest : public ::testing::Test {
 protected:
  void SetUp() override { root_ = etwire::testing::make_scratch_dir("rnic-counters"); }
  void TearDown() override { fs::remove_all(root_); }

  // `relative` under <root>/<device>, e.g. "ports/1/counters/port_xmit_data".
  void put(const std::string& device, const std::string& relative, const std::string& text) {
    const fs::path path = root_ / device / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }

  std::string path_of(const std::string& device, const std::string& relative) const {
    return (root_ / device / relative).string();
  }

  // An mlx5 port: IB port counters, per-port q counters, congestion counters both per port and
  // device-wide.
  void make_mlx5() {
    const std::string port = "ports/1/";
    put("mlx5_0", port + "counters/port_xmit_data", "1000\n");
    put("mlx5_0", port + "counters/port_rcv_data", "250\n");
    put("mlx5_0", port + "counters/port_xmit_packets", "17\n");
    put("mlx5_0", port + "counters/port_rcv_packets", "19\n");
    put("mlx5_0", port + "counters/port_rcv_errors", "0\n");
    put("mlx5_0", port + "counters/port_xmit_discards", "5\n");
    put("mlx5_0", port + "hw_counters/out_of_sequence", "7\n");
    put("mlx5_0", port + "hw_counters/out_of_buffer", "3\n");
    put("mlx5_0", port + "hw_counters/local_ack_timeout_err", "2\n");
    put("mlx5_0", port + "hw_counters/packet_seq_err", "9\n");
    put("mlx5_0", port + "hw_counters/roce_adp_retrans", "4\n");
    put("mlx5_0", port + "hw_counters/duplicate_request", "1\n");
    put("mlx5_0", port + "hw_counters/rp_cnp_handled", "11\n");
    // Device-wide: np_cnp_sent only here; rp_cnp_handled here too, but the port's must win.
    put("mlx5_0", "hw_counters/np_cnp_sent", "13\n");
    put("mlx5_0", "hw_counters/rp_cnp_handled", "999\n");
    put("mlx5_0", "hw_counters/np_ecn_marked_roce_packets", "23\n");
  }

  fs::path root_;
};

std::map<std::string, uint64_t> as_map(const std::vector<std::pair<std::string, uint64_t>>& v) {
  return {v.begin(), v.end()};
}

TEST_F(RnicCountersTest, Mlx5PortMapsOntoEtwireCounters) {
  make_mlx5();
  RnicCounterReader reader(root_.string(), "mlx5_0", 1);
  const auto values = as_map(reader.read());

  EXPECT_EQ(values.at("tx_bytes"), 4000u);  // port_xmit_data counts 4-octet words
  EXPECT_EQ(values.at("rx_bytes"), 1000u);
  EXPECT_EQ(values.at("tx_packets"), 17u);
  EXPECT_EQ(values.at("rx_packets"), 19u);
  EXPECT_EQ(values.at("ecn_marked_received"), 23u);
  EXPECT_EQ(values.at("cnps_sent"), 13u);      // from the device-wide directory
  EXPECT_EQ(values.at("cnps_received"), 11u);  // the port's file, not the device's 999
  EXPECT_EQ(values.at("drops"), 3u);           // out_of_buffer before port_xmit_discards
  EXPECT_EQ(values.at("missing_packets"), 7u);
  EXPECT_EQ(values.at("timeouts"), 2u);
  // Not counted by the device: absent, not zero.
  for (const char* absent :
       {"data_packets", "pfc_pauses_sent", "pfc_pauses_received", "retransmitted_packets"}) {
    EXPECT_EQ(values.count(absent), 0u) << absent;
  }
  EXPECT_EQ(values.size(), 10u);

  const auto& exposed = reader.exposed();
  ASSERT_EQ(exposed.size(), 10u);
  EXPECT_EQ(exposed[0].first, "tx_bytes");
  EXPECT_EQ(exposed[0].second, path_of("mlx5_0", "ports/1/counters/port_xmit_data"));
  const std::map<std::string, std::string> files(exposed.begin(), exposed.end());
  EXPECT_EQ(files.at("cnps_sent"), path_of("mlx5_0", "hw_counters/np_cnp_sent"));
  EXPECT_EQ(files.at("cnps_received"), path_of("mlx5_0", "ports/1/hw_counters/rp_cnp_handled"));
}

TEST_F(RnicCountersTest, ReadFollowsTheCountersAsTheyChange) {
  make_mlx5();
  RnicCounterReader reader(root_.string(), "mlx5_0", 1);
  EXPECT_EQ(as_map(reader.read()).at("tx_bytes"), 4000u);
  put("mlx5_0", "ports/1/counters/port_xmit_data", "18446744073709551\n");
  put("mlx5_0", "ports/1/hw_counters/out_of_sequence", "18446744073709551615\n");
  const auto values = as_map(reader.read());
  EXPECT_EQ(values.at("tx_bytes"), 4u * 18446744073709551u);
  EXPECT_EQ(values.at("missing_packets"), UINT64_MAX);
}

TEST_F(RnicCountersTest, BnxtRePrefersItsRoceOnlyCountersOverPortCounters) {
  const std::string hw = "ports/1/hw_counters/";
  put("bnxt_re0", "ports/1/counters/port_xmit_packets", "1000\n");
  put("bnxt_re0", "ports/1/counters/port_xmit_data", "1000\n");
  put("bnxt_re0", hw + "tx_pkts", "500\n");
  put("bnxt_re0", hw + "tx_bytes", "600\n");
  put("bnxt_re0", hw + "rx_pkts", "700\n");
  put("bnxt_re0", hw + "rx_bytes", "800\n");
  put("bnxt_re0", hw + "tx_roce_only_pkts", "50\n");
  put("bnxt_re0", hw + "tx_roce_only_bytes", "60\n");
  put("bnxt_re0", hw + "rx_roce_only_pkts", "70\n");
  put("bnxt_re0", hw + "rx_roce_only_bytes", "80\n");
  put("bnxt_re0", hw + "tx_cnp_pkts", "3\n");
  put("bnxt_re0", hw + "rx_cnp_pkts", "4\n");
  put("bnxt_re0", hw + "rx_ecn_marked_pkts", "5\n");
  put("bnxt_re0", hw + "oos_drop_count", "6\n");
  put("bnxt_re0", hw + "to_retransmits", "8\n");
  put("bnxt_re0", hw + "rx_roce_discards", "9\n");
  put("bnxt_re0", hw + "rx_out_of_buffer", "10\n");
  put("bnxt_re0", hw + "seq_err_naks_rcvd", "12\n");
  put("bnxt_re0", hw + "max_retry_exceeded", "13\n");

  RnicCounterReader reader(root_.string(), "bnxt_re0", 1);
  const auto values = as_map(reader.read());
  EXPECT_EQ(values.at("tx_packets"), 50u);
  EXPECT_EQ(values.at("tx_bytes"), 60u);  // not 4 x port_xmit_data, not tx_bytes
  EXPECT_EQ(values.at("rx_packets"), 70u);
  EXPECT_EQ(values.at("rx_bytes"), 80u);
  EXPECT_EQ(values.at("cnps_sent"), 3u);
  EXPECT_EQ(values.at("cnps_received"), 4u);
  EXPECT_EQ(values.at("ecn_marked_received"), 5u);
  EXPECT_EQ(values.at("missing_packets"), 6u);
  EXPECT_EQ(values.at("timeouts"), 8u);
  EXPECT_EQ(values.at("drops"), 9u);
  EXPECT_EQ(values.count("retransmitted_packets"), 0u);
  EXPECT_EQ(values.count("data_packets"), 0u);
  EXPECT_EQ(values.size(), 10u);
}

TEST_F(RnicCountersTest, OlderBnxtReFallsBackToItsFunctionCounters) {
  put("bnxt_re1", "ports/1/hw_counters/tx_pkts", "500\n");
  put("bnxt_re1", "ports/1/hw_counters/tx_bytes", "600\n");
  put("bnxt_re1", "ports/1/hw_counters/rx_pkts", "700\n");
  put("bnxt_re1", "ports/1/hw_counters/rx_bytes", "800\n");
  RnicCounterReader reader(root_.string(), "bnxt_re1", 1);
  const auto values = as_map(reader.read());
  EXPECT_EQ(values,
            (std::map<std::string, uint64_t>{
                {"tx_bytes", 600}, {"rx_bytes", 800}, {"tx_packets", 500}, {"rx_packets", 700}}));
}

TEST_F(RnicCountersTest, PortWithoutCountersExposesNothing) {
  fs::create_directories(root_ / "rxe0" / "ports" / "1");
  RnicCounterReader reader(root_.string(), "rxe0", 1);
  EXPECT_TRUE(reader.exposed().empty());
  EXPECT_TRUE(reader.read().empty());
}

TEST_F(RnicCountersTest, MissingPortIsAnError) {
  make_mlx5();
  try {
    RnicCounterReader reader(root_.string(), "mlx5_0", 2);
    FAIL() << "a port that does not exist was accepted";
  } catch (const std::runtime_error& error) {
    EXPECT_THAT(error.what(), HasSubstr("mlx5_0 port 2"));
    EXPECT_THAT(error.what(), HasSubstr(path_of("mlx5_0", "ports/2")));
  }
  EXPECT_THROW(RnicCounterReader(root_.string(), "mlx5_9", 1), std::runtime_error);
}

TEST_F(RnicCountersTest, GarbageInACounterFileNamesTheFile) {
  make_mlx5();
  RnicCounterReader reader(root_.string(), "mlx5_0", 1);
  const std::string bad = path_of("mlx5_0", "ports/1/hw_counters/out_of_sequence");
  for (const char* garbage : {"12abc\n", "\n", "-1\n", "18446744073709551616\n"}) {
    put("mlx5_0", "ports/1/hw_counters/out_of_sequence", garbage);
    try {
      reader.read();
      FAIL() << "accepted \"" << garbage << "\"";
    } catch (const std::runtime_error& error) {
      EXPECT_THAT(error.what(), HasSubstr(bad)) << garbage;
    }
  }
}

TEST_F(RnicCountersTest, VanishedCounterFileNamesTheFile) {
  make_mlx5();
  RnicCounterReader reader(root_.string(), "mlx5_0", 1);
  const std::string gone = path_of("mlx5_0", "hw_counters/np_cnp_sent");
  fs::remove(gone);
  try {
    reader.read();
    FAIL() << "a vanished file was read";
  } catch (const std::runtime_error& error) {
    EXPECT_THAT(error.what(), HasSubstr(gone));
    EXPECT_THAT(error.what(), HasSubstr("No such file"));
  }
}

TEST(RnicCounterSources, NameOnlyEtwireCountersAndKnownDirectories) {
  const std::set<std::string> etwire_fields{"tx_bytes",
                                            "rx_bytes",
                                            "tx_packets",
                                            "rx_packets",
                                            "data_packets",
                                            "ecn_marked_received",
                                            "cnps_sent",
                                            "cnps_received",
                                            "pfc_pauses_sent",
                                            "pfc_pauses_received",
                                            "drops",
                                            "missing_packets",
                                            "retransmitted_packets",
                                            "timeouts"};
  std::set<std::string> finished;  // fields whose group of sources has ended
  std::string current;
  ASSERT_FALSE(rnic_counter_sources().empty());
  for (const RnicCounterSource& source : rnic_counter_sources()) {
    const std::string field(source.field);
    EXPECT_EQ(etwire_fields.count(field), 1u) << field;
    const std::string file(source.file);
    EXPECT_TRUE(file.starts_with("counters/") || file.starts_with("hw_counters/")) << file;
    const bool four_octet = file == "counters/port_xmit_data" || file == "counters/port_rcv_data";
    EXPECT_EQ(source.scale, four_octet ? 4u : 1u) << file;
    if (field != current) {
      // A field's sources are listed together, which the reader relies on.
      EXPECT_EQ(finished.count(field), 0u) << field << " listed in two places";
      if (!current.empty()) finished.insert(current);
      current = field;
    }
  }
}

}  // namespace
}  // namespace etwire::nic::verbs
