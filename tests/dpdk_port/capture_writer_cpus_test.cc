// The capture writer of a DPDK run keeps off the EAL's lcores: a thread started after
// rte_eal_init inherits the main lcore's CPU, where a busy-polling port starves it. The EAL here
// has one lcore (-l 0); on a machine of two CPUs or more, some CPU is left for the writer.
#include <gtest/gtest.h>
#include <rte_lcore.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "nic/capture/capture_writer.h"
#include "nic/capture/frame_capture_ring.h"
#include "nic/dpdk/cpus_beside_lcores.h"
#include "tests/dpdk_port/dpdk_test_support.h"

namespace etwire::nic::dpdk {
namespace {

bool shares_a_cpu(const std::vector<unsigned>& a, const std::vector<unsigned>& b) {
  return std::any_of(a.begin(), a.end(),
                     [&](unsigned cpu) { return std::find(b.begin(), b.end(), cpu) != b.end(); });
}

TEST(CaptureWriterCpus, TheWriterRunsOnNoCpuOfAnLcore) {
  if (testing::eal_failure()) GTEST_SKIP() << "DPDK cannot start here: " << *testing::eal_failure();
  if (cpus_before_eal().size() < 2) {
    GTEST_SKIP() << "this process may run on one CPU only: the writer must share it with the lcore";
  }
  const CpusBesideLcores where = cpus_beside_lcores();
  const rte_cpuset_t main = rte_lcore_cpuset(rte_get_main_lcore());
  for (unsigned cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &main)) {
      EXPECT_NE(std::find(where.lcore_cpus.begin(), where.lcore_cpus.end(), cpu),
                where.lcore_cpus.end())
          << "the main lcore's CPU " << cpu;
    }
  }
  EXPECT_FALSE(where.shared);
  ASSERT_FALSE(where.cpus.empty());
  EXPECT_FALSE(shares_a_cpu(where.cpus, where.lcore_cpus)) << cpu_list(where.cpus);

  const std::string path = ::testing::TempDir() + "writer-cpus-" + std::to_string(getpid());
  capture::FrameCaptureRing ring(4, 64);
  capture::CaptureWriter placed({});
  placed.add_file(path + "-placed.pcapng", "p0", {&ring}, 64);
  placed.start(0, where.cpus);
  EXPECT_EQ(placed.cpus(), where.cpus);
  EXPECT_FALSE(shares_a_cpu(placed.cpus(), where.lcore_cpus)) << cpu_list(placed.cpus());
  placed.stop();
  // What the writer did before: started from the main lcore, it ran on the lcore's CPU only.
  capture::CaptureWriter inherited({});
  inherited.add_file(path + "-inherited.pcapng", "p0", {&ring}, 64);
  inherited.start(0);
  const std::vector<unsigned> cpus = inherited.cpus();
  EXPECT_TRUE(std::all_of(cpus.begin(), cpus.end(), [&](unsigned cpu) {
    return std::find(where.lcore_cpus.begin(), where.lcore_cpus.end(), cpu) !=
           where.lcore_cpus.end();
  })) << cpu_list(cpus);
  inherited.stop();
  std::filesystem::remove(path + "-placed.pcapng");
  std::filesystem::remove(path + "-inherited.pcapng");
}

TEST(CaptureWriterCpus, CpuListsAreRanges) {
  EXPECT_EQ(cpu_list({}), "");
  EXPECT_EQ(cpu_list({3}), "3");
  EXPECT_EQ(cpu_list({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
}

}  // namespace
}  // namespace etwire::nic::dpdk
