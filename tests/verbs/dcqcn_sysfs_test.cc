// DcqcnSysfs on fake sysfs trees: an mlx5 port whose netdev carries NVIDIA's ecn directory, and
// ports where it cannot be found.
#include "nic/verbs/dcqcn_sysfs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "tests/testing/fake_mlx5_sysfs.h"
#include "tests/testing/test_paths.h"

namespace etwire::nic::verbs {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::map<std::string, uint64_t>& kNvidiaDefaults = etwire::testing::nvidia_dcqcn_defaults();

class DcqcnSysfsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = etwire::testing::make_scratch_dir("dcqcn-sysfs");
    ib_ = root_ / "infiniband";
    net_ = root_ / "net";
  }
  void TearDown() override {
    // A test may leave a read-only file behind; removal needs only the directory's permission.
    fs::remove_all(root_);
  }

  // Exactly `text`: some tests write files without the newline sysfs adds.
  static void put(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  static std::string contents(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  fs::path ecn() const { return net_ / "ens1f0" / "ecn"; }

  // mlx5_0 port 1, GID 3 on ens1f0, whose ecn files hold `values` (others at 0), plus the
  // device files etwire leaves alone.
  void make_mlx5(const std::map<std::string, uint64_t>& values) {
    etwire::testing::write_mlx5_ecn(ib_, net_, "mlx5_0", "ens1f0", 3, values);
  }

  DcqcnSysfs open(uint32_t gid = 3, uint8_t priority = 3) const {
    return DcqcnSysfs(ib_.string(), net_.string(), "mlx5_0", 1, gid, priority);
  }

  fs::path root_, ib_, net_;
};

std::string relative_to_ecn(const std::string& file) {
  const size_t at = file.find("/ecn/");
  return at == std::string::npos ? file : file.substr(at + 5);
}

TEST_F(DcqcnSysfsTest, DefaultConfigIsNvidiasFirmwareDefaults) {
  make_mlx5(kNvidiaDefaults);
  const DcqcnSysfs dcqcn = open();
  ASSERT_TRUE(dcqcn.available()) << dcqcn.why_unavailable();
  EXPECT_EQ(dcqcn.netdev(), "ens1f0");
  EXPECT_TRUE(dcqcn.why_unavailable().empty());

  const std::vector<DcqcnSetting> settings = dcqcn.read_back(config::DcqcnConfig{});
  std::map<std::string, uint64_t> wanted;
  for (const DcqcnSetting& setting : settings) {
    const std::string file = relative_to_ecn(setting.file);
    EXPECT_EQ(setting.file, (ecn() / file).string());
    wanted[file] = setting.wanted;
    ASSERT_TRUE(setting.device_value.has_value()) << file;
    EXPECT_EQ(*setting.device_value, setting.wanted) << file << " (" << setting.field << ")";
  }
  EXPECT_EQ(wanted, kNvidiaDefaults);
  // Nothing differs, so nothing is written and nothing fails.
  EXPECT_TRUE(dcqcn.apply(config::DcqcnConfig{}).empty());
}

TEST_F(DcqcnSysfsTest, ConvertsToTheDeviceUnits) {
  make_mlx5(kNvidiaDefaults);
  config::DcqcnConfig config;
  config.enabled = false;
  config.alpha_gain = 1.0 / 16.0;
  config.alpha_update_period_ns = 55'000;
  config.initial_alpha = 1.0;
  config.rate_reduce_period_ns = 2'400;
  config.rate_cut_scale = 0.25;
  config.max_rate_cut = 0.75;
  config.rate_increase_period_ns = 1'499'600;
  config.rate_increase_bytes = 150'000;
  config.fast_recovery_stages = 5;
  config.additive_increase_bps = 40'000'000'000;
  config.hyper_increase_bps = 100'400'000;
  config.min_rate_bps = 0;
  config.rate_on_first_cnp_bps = 25'000'000'000;
  config.clamp_target_rate = true;
  config.clamp_target_rate_after_time_increase = false;
  config.min_time_between_cnps_ns = 0;

  std::map<std::string, uint64_t> wanted;
  std::map<std::string, std::string> field_of;
  for (const DcqcnSetting& setting : open().read_back(config)) {
    wanted[relative_to_ecn(setting.file)] = setting.wanted;
    field_of[relative_to_ecn(setting.file)] = std::string(setting.field);
  }
  EXPECT_EQ(wanted.at("roce_rp/dce_tcp_g"), 960u);  // 1024 (1 - 1/16)
  EXPECT_EQ(wanted.at("roce_rp/dce_tcp_rtt"), 55u);
  EXPECT_EQ(wanted.at("roce_rp/initial_alpha_value"), 1023u);  // 1.0 does not fit in 10 bits
  EXPECT_EQ(wanted.at("roce_rp/rate_reduce_monitor_period"), 2u);
  EXPECT_EQ(wanted.at("roce_rp/rpg_gd"), 12u);           // 2^(10 - 12) = 1/4
  EXPECT_EQ(wanted.at("roce_rp/rpg_min_dec_fac"), 25u);  // a cut keeps at least 25 %
  EXPECT_EQ(wanted.at("roce_rp/rpg_time_reset"), 1500u);
  EXPECT_EQ(wanted.at("roce_rp/rpg_byte_reset"), 150'000u);
  EXPECT_EQ(wanted.at("roce_rp/rpg_threshold"), 5u);
  EXPECT_EQ(wanted.at("roce_rp/rpg_ai_rate"), 40'000u);  // Mb/s
  EXPECT_EQ(wanted.at("roce_rp/rpg_hai_rate"), 100u);
  EXPECT_EQ(wanted.at("roce_rp/rpg_min_rate"), 0u);
  EXPECT_EQ(wanted.at("roce_rp/rate_to_set_on_first_cnp"), 25'000u);
  EXPECT_EQ(wanted.at("roce_rp/clamp_tgt_rate"), 1u);
  EXPECT_EQ(wanted.at("roce_rp/clamp_tgt_rate_after_time_inc"), 0u);
  EXPECT_EQ(wanted.at("roce_np/min_time_between_cnps"), 0u);
  EXPECT_EQ(wanted.at("roce_rp/enable/3"), 0u);
  EXPECT_EQ(wanted.at("roce_np/enable/3"), 0u);
  EXPECT_EQ(field_of.at("roce_rp/rpg_gd"), "rate_cut_scale");
  EXPECT_EQ(field_of.at("roce_np/min_time_between_cnps"), "min_time_between_cnps_ns");
  EXPECT_EQ(field_of.at("roce_np/enable/3"), "enabled");
  // Files without a DcqcnConfig member are not managed.
  EXPECT_EQ(wanted.count("roce_rp/rpg_max_rate"), 0u);
  EXPECT_EQ(wanted.count("roce_np/cnp_dscp"), 0u);
}

TEST_F(DcqcnSysfsTest, ApplyWritesOnlyWhatDiffers) {
  std::map<std::string, uint64_t> device = kNvidiaDefaults;
  device["roce_rp/dce_tcp_g"] = 1000;
  device["roce_np/enable/3"] = 0;
  device["roce_rp/rpg_ai_rate"] = 10;
  make_mlx5(device);
  // Equal in value though not in text: a write would leave "11\n".
  put(ecn() / "roce_rp/rpg_gd", "0011\n");

  const DcqcnSysfs dcqcn = open();
  const std::vector<std::string> failures = dcqcn.apply(config::DcqcnConfig{});
  EXPECT_TRUE(failures.empty()) << ::testing::PrintToString(failures);
  EXPECT_EQ(contents(ecn() / "roce_rp/dce_tcp_g"), "1019\n");
  EXPECT_EQ(contents(ecn() / "roce_np/enable/3"), "1\n");
  EXPECT_EQ(contents(ecn() / "roce_rp/rpg_ai_rate"), "5\n");
  EXPECT_EQ(contents(ecn() / "roce_rp/rpg_gd"), "0011\n");
  // Other priorities and unmanaged files stay as they were.
  EXPECT_EQ(contents(ecn() / "roce_np/enable/2"), "0\n");
  EXPECT_EQ(contents(ecn() / "roce_np/cnp_dscp"), "48\n");
  for (const DcqcnSetting& setting : dcqcn.read_back(config::DcqcnConfig{}))
    EXPECT_EQ(setting.device_value, setting.wanted) << setting.file;
}

TEST_F(DcqcnSysfsTest, WritesThatFailBecomeMessagesWithTheSystemsWords) {
  std::map<std::string, uint64_t> device = kNvidiaDefaults;
  device["roce_rp/dce_tcp_g"] = 1000;
  make_mlx5(device);
  // A directory where the file should be: open() for writing fails with EISDIR.
  fs::remove(ecn() / "roce_rp/rpg_ai_rate");
  fs::create_directories(ecn() / "roce_rp/rpg_ai_rate");
  // A file the driver did not create: ENOENT, and nothing is created in its place.
  fs::remove(ecn() / "roce_rp/rpg_hai_rate");

  const DcqcnSysfs dcqcn = open();
  std::vector<std::string> failures;
  ASSERT_NO_THROW(failures = dcqcn.apply(config::DcqcnConfig{}));
  ASSERT_EQ(failures.size(), 2u) << ::testing::PrintToString(failures);
  EXPECT_THAT(failures[0], HasSubstr((ecn() / "roce_rp/rpg_ai_rate").string()));
  EXPECT_THAT(failures[0], HasSubstr("additive_increase_bps"));
  EXPECT_THAT(failures[0], HasSubstr("Is a directory"));
  EXPECT_THAT(failures[0], HasSubstr("mlx5_0 port 1"));
  EXPECT_THAT(failures[1], HasSubstr("rpg_hai_rate"));
  EXPECT_THAT(failures[1], HasSubstr("No such file or directory"));
  EXPECT_FALSE(fs::exists(ecn() / "roce_rp/rpg_hai_rate"));
  // The failures do not stop the other settings.
  EXPECT_EQ(contents(ecn() / "roce_rp/dce_tcp_g"), "1019\n");

  // The missing file reads back as unknown, not as a value.
  for (const DcqcnSetting& setting : dcqcn.read_back(config::DcqcnConfig{})) {
    if (relative_to_ecn(setting.file) == "roce_rp/rpg_hai_rate") {
      EXPECT_FALSE(setting.device_value.has_value());
    }
  }
}

TEST_F(DcqcnSysfsTest, ReadOnlyFileIsAMessageNotAnException) {
  std::map<std::string, uint64_t> device = kNvidiaDefaults;
  device["roce_rp/rpg_threshold"] = 7;
  make_mlx5(device);
  const fs::path file = ecn() / "roce_rp/rpg_threshold";
  fs::permissions(file, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);

  std::vector<std::string> failures;
  ASSERT_NO_THROW(failures = open().apply(config::DcqcnConfig{}));
  if (geteuid() == 0) {
    // Root writes through the mode bits on an ordinary file system (sysfs would refuse a file
    // without a store method, which the test cannot imitate).
    EXPECT_TRUE(failures.empty()) << ::testing::PrintToString(failures);
    EXPECT_EQ(contents(file), "1\n");
  } else {
    ASSERT_EQ(failures.size(), 1u) << ::testing::PrintToString(failures);
    EXPECT_THAT(failures[0], HasSubstr("Permission denied"));
    EXPECT_THAT(failures[0], HasSubstr(file.string()));
    EXPECT_EQ(contents(file), "7\n");
  }
}

TEST_F(DcqcnSysfsTest, NetdevWithoutEcnIsUnavailableWithAReason) {
  put(ib_ / "mlx5_0/ports/1/gid_attrs/ndevs/3", "ens1f0\n");
  fs::create_directories(net_ / "ens1f0" / "statistics");
  const DcqcnSysfs dcqcn = open();
  EXPECT_FALSE(dcqcn.available());
  EXPECT_EQ(dcqcn.netdev(), "ens1f0");
  EXPECT_THAT(dcqcn.why_unavailable(), HasSubstr("mlx5_0 port 1"));
  EXPECT_THAT(dcqcn.why_unavailable(), HasSubstr("ecn/roce_rp"));
  EXPECT_THAT(dcqcn.why_unavailable(), HasSubstr((net_ / "ens1f0").string()));
  EXPECT_THAT(dcqcn.why_unavailable(), HasSubstr("not an mlx5 device"));
  EXPECT_TRUE(dcqcn.read_back(config::DcqcnConfig{}).empty());
  EXPECT_EQ(dcqcn.apply(config::DcqcnConfig{}), std::vector<std::string>{dcqcn.why_unavailable()});
}

TEST_F(DcqcnSysfsTest, HalfAnEcnDirectoryIsUnavailable) {
  make_mlx5(kNvidiaDefaults);
  fs::remove_all(ecn() / "roce_np");
  const DcqcnSysfs dcqcn = open();
  EXPECT_FALSE(dcqcn.available());
  EXPECT_THAT(dcqcn.why_unavailable(), HasSubstr("ecn/roce_np"));
}

TEST_F(DcqcnSysfsTest, NetdevFromThePciFunctionWhenTheGidNamesNone) {
  // GID 3 unused: its ndevs entry is empty. The function has one netdev.
  put(ib_ / "mlx5_0/ports/1/gid_attrs/ndevs/3", "");
  fs::create_directories(ib_ / "mlx5_0/device/net/ens2f0");
  fs::create_directories(net_ / "ens2f0/ecn/roce_rp");
  fs::create_directories(net_ / "ens2f0/ecn/roce_np");
  const DcqcnSysfs dcqcn = open();
  EXPECT_EQ(dcqcn.netdev(), "ens2f0");
  EXPECT_TRUE(dcqcn.available()) << dcqcn.why_unavailable();
}

TEST_F(DcqcnSysfsTest, SeveralNetdevsOnTheFunctionAreToldApartByDevPort) {
  put(ib_ / "mlx4_0/device/net/eth0/dev_port", "0\n");
  put(ib_ / "mlx4_0/device/net/eth1/dev_port", "1\n");
  const DcqcnSysfs port2(ib_.string(), net_.string(), "mlx4_0", 2, 0, 3);
  EXPECT_EQ(port2.netdev(), "eth1");
  EXPECT_FALSE(port2.available());
  EXPECT_THAT(port2.why_unavailable(), HasSubstr("eth1"));
}

TEST_F(DcqcnSysfsTest, NoNetdevAtAllIsUnavailable) {
  fs::create_directories(ib_ / "mlx5_0/ports/1");
  const DcqcnSysfs dcqcn = open();
  EXPECT_FALSE(dcqcn.available());
  EXPECT_TRUE(dcqcn.netdev().empty());
  EXPECT_THAT(dcqcn.why_unavailable(), HasSubstr("no network device"));
  EXPECT_THAT(dcqcn.why_unavailable(), HasSubstr("gid_attrs/ndevs/3"));
}

TEST_F(DcqcnSysfsTest, PriorityOutOfRangeIsUnavailable) {
  make_mlx5(kNvidiaDefaults);
  const DcqcnSysfs dcqcn = open(3, 8);
  EXPECT_FALSE(dcqcn.available());
  EXPECT_THAT(dcqcn.why_unavailable(), HasSubstr("priority 8"));
}

}  // namespace
}  // namespace etwire::nic::verbs
