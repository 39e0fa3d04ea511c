// etwire under mpirun: the emulator processes of one run agree on what they loaded (or stop
// together, naming the process and host that differs), check that the configuration's emulators
// are these processes, and measure their clocks' offsets to process 0.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/testing/test_paths.h"

namespace etwire {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

// Two emulators of four DPDK ports each; `validate` does not touch the devices.
fs::path write_two_emulators(const fs::path& dir, const std::string& extra_emulator_keys = "") {
  const fs::path path = dir / "two.yaml";
  std::ofstream(path)
      << "run: {name: two}\n"
         "workload:\n  jobs:\n    - {name: ar, trace: "
      << (testing::source_dir() / "configs/traces/allreduce_8r/allreduce").string()
      << "}\n"
         "emulators:\n  - {name: left}\n  - {name: right" +
             extra_emulator_keys +
             "}\n"
             "ports:\n"
             "  - {name: a, count: 4, backend: dpdk, dpdk: {vdev: \"net_null{i}\"}, emulator: "
             "left}\n"
             "  - {name: b, count: 4, backend: dpdk, dpdk: {vdev: \"net_null1{i}\"}, emulator: "
             "right}\n"
             "mapping:\n  jobs: [{job: ar, ranks_per_port: 1}]\n";
  return path;
}

// mpirun with `parts` (each "-np N ARGS", several for a multiple-program launch) in `dir`. Open
// MPI leaves what its components allocated at MPI_Finalize to the process's end: under the
// sanitizers leak checking is off for these processes (the code they run is checked for leaks by
// the tests without MPI).
testing::CommandResult mpirun(const fs::path& dir, const std::vector<std::string>& parts) {
  std::string command = "cd '" + dir.string() +
                        "' && ASAN_OPTIONS=\"${ASAN_OPTIONS}:detect_leaks=0\" mpirun "
                        "--allow-run-as-root --oversubscribe";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) command += " :";
    command += " " + parts[i];
  }
  testing::CommandResult result;
  result.code = testing::run_command(command, result.output);
  return result;
}

std::string etwire_in(const std::string& args) {
  return testing::etwire_binary().string() + " " + args;
}

TEST(EmulatorProcesses, AgreeAndMeasureTheirClocks) {
  const fs::path dir = testing::make_scratch_dir("mpi-agree");
  write_two_emulators(dir);
  const auto r = mpirun(dir, {"-np 2 " + etwire_in("validate two.yaml")});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("emulator \"left\": process 0 on host"));
  EXPECT_THAT(r.output, HasSubstr("the reference clock"));
  EXPECT_THAT(r.output, HasSubstr("emulator \"right\": process 1 on host"));
  EXPECT_THAT(r.output, HasSubstr("clock offset to process 0"));
  EXPECT_THAT(r.output, HasSubstr("(64 round trips over MPI, shortest"));
  // Process 0 speaks for both.
  const std::string ok = "OK two.yaml: ";
  EXPECT_EQ(r.output.find(ok), r.output.rfind(ok)) << r.output;
  EXPECT_THAT(r.output, HasSubstr("checked by 2 emulator processes"));
}

TEST(EmulatorProcesses, AProcessWithOtherInputsStopsThemAll) {
  const fs::path dir = testing::make_scratch_dir("mpi-differ");
  write_two_emulators(dir);
  const auto r = mpirun(dir, {"-np 1 " + etwire_in("validate two.yaml"),
                              "-np 1 " + etwire_in("validate two.yaml --set run.seed=7")});
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("error: the emulator processes loaded different configurations "
                                  "or traces; nothing was started"));
  EXPECT_THAT(r.output, HasSubstr("process 1 on host"));
  EXPECT_THAT(r.output, Not(HasSubstr("OK two.yaml")));
}

TEST(EmulatorProcesses, AProcessThatCannotLoadStopsThemAllWithItsReason) {
  const fs::path dir = testing::make_scratch_dir("mpi-unloadable");
  write_two_emulators(dir);
  const auto r = mpirun(dir, {"-np 1 " + etwire_in("validate two.yaml"),
                              "-np 1 " + etwire_in("validate two.yaml --set ports[0].mtu=big")});
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("not every emulator process could load the run; nothing was "
                                  "started"));
  EXPECT_THAT(r.output, HasSubstr("two.yaml: invalid: 1 error"));
}

TEST(EmulatorProcesses, TheEmulatorsMustBeTheseProcesses) {
  const fs::path dir = testing::make_scratch_dir("mpi-placement");
  write_two_emulators(dir);
  auto r = mpirun(dir, {"-np 3 " + etwire_in("validate two.yaml")});
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("describes 2 emulator processes, but the launcher started 3: "
                                  "run mpirun -np 2"));
  write_two_emulators(dir, ", host: lab-server-9");
  r = mpirun(dir, {"-np 2 " + etwire_in("validate two.yaml")});
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("emulator \"right\" (emulators[1]) is to run on host "
                                  "lab-server-9, but its process (MPI rank 1) runs on"));
}

// Verbs ports split between processes: each process opens its own devices. Without an RDMA
// device every process says so and nothing runs; on the software RNIC both set up and check.
TEST(EmulatorProcesses, VerbsPortsAcrossProcessesAreSetUpByEachProcess) {
  const fs::path dir = testing::make_scratch_dir("mpi-verbs");
  const std::string config =
      "run: {name: v}\nworkload:\n  jobs:\n    - {name: ar, trace: " +
      (testing::source_dir() / "configs/traces/allreduce_8r/allreduce").string() +
      "}\nemulators: [{name: left}, {name: right}]\nports:\n"
      "  - {name: a, count: 4, backend: verbs, verbs: {device: \"mlx5_{i}\"}, emulator: left, "
      "ipv4: 10.0.0.1}\n"
      "  - {name: b, count: 4, backend: verbs, verbs: {device: \"mlx5_1{i}\"}, emulator: "
      "right, ipv4: 10.0.1.1}\n"
      "mapping:\n  jobs: [{job: ar, ranks_per_port: 1}]\ntransport: {op: write-with-imm}\n";
  std::ofstream(dir / "hardware.yaml") << config;
  std::ofstream(dir / "software.yaml") << config << "verbs: {rnic: software}\n";
  auto r = mpirun(dir, {"-np 2 " + etwire_in("validate --devices hardware.yaml")});
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("no RDMA device"));
  EXPECT_THAT(r.output, HasSubstr("emulator processes 0, 1 could not set up"));
  r = mpirun(dir, {"-np 2 " + etwire_in("validate --devices software.yaml")});
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("b3: mlx5_13 port 1, GID 3: 10.0.1.4 (ipv4)"));
  EXPECT_THAT(r.output, HasSubstr("checked by 2 emulator processes"));
}

// A run split between processes starts only when every process could set up its devices: one
// that cannot stops them all, before any traffic, and process 0 names it. One process under
// mpirun runs as without it.
TEST(EmulatorProcesses, ARunAcrossProcessesStartsOnlyWhenEveryProcessCanSetUp) {
  const fs::path dir = testing::make_scratch_dir("mpi-run");
  write_two_emulators(dir);
  // Process 1's devices are of a driver DPDK does not have; process 0's are fine.
  {
    std::ifstream in(dir / "two.yaml");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text.replace(text.find("net_null1{i}"), 12, "net_bogus{i}");
    std::ofstream(dir / "two.yaml")
        << text << "dpdk: {eal_args: [--no-pci, --no-huge, -m, \"512\"], mbufs: 1023}\n";
  }
  auto r = mpirun(dir, {"-np 2 " + etwire_in("run two.yaml --out results --no-progress "
                                             "--no-metrics")});
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("error: emulator process 1 could not set up (see its error "
                                  "above); nothing was run"));
  EXPECT_FALSE(fs::exists(dir / "results"));

  const std::string demo = (testing::source_dir() / "configs/loopback-demo.yaml").string();
  r = mpirun(dir,
             {"-np 1 " + etwire_in("run '" + demo + "' --out single --no-progress --no-metrics")});
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(fs::exists(dir / "single/summary.json"));
}

// A receiver in another process knows a message's collective only by its immediate.
TEST(EmulatorProcesses, ASplitRunNeedsWriteWithImmediate) {
  const fs::path dir = testing::make_scratch_dir("mpi-op");
  write_two_emulators(dir);
  const auto r = testing::run_etwire("validate '" + (dir / "two.yaml").string() +
                                     "' --no-traces --set transport.op=send");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("transport.op: 2 emulators, but transport.op is send: a "
                                  "receiver in another emulator process tells which collective a "
                                  "message belongs to only by its immediate, which only "
                                  "write-with-imm carries"));
}

}  // namespace
}  // namespace etwire
