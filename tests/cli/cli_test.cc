// The etwire binary as a user runs it: exit codes, messages and outputs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tests/testing/test_paths.h"

namespace etwire {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

etwire::testing::CommandResult etwire(const std::string& args) {
  return etwire::testing::run_etwire(args);
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(Cli, HelpListsSubcommands) {
  auto r = etwire("--help");
  EXPECT_EQ(r.code, 0);
  for (const char* cmd : {"inspect", "feed", "synth", "devices"}) {
    EXPECT_THAT(r.output, HasSubstr(cmd));
  }
  EXPECT_EQ(etwire("synth microbench --help").code, 0);
}

// Without an RDMA device (this machine's kernel has no RDMA support) `devices` says so and exits
// 2; with one it lists its ports.
TEST(Cli, DevicesListsRdmaPortsOrSaysThereAreNone) {
  auto r = etwire("devices");
  if (r.code == 0) {
    EXPECT_THAT(r.output, HasSubstr(" port 1: "));
  } else {
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr("error: no RDMA device: "));
  }
}

TEST(Cli, UnknownOptionsAndMissingArgumentsExitTwo) {
  EXPECT_EQ(etwire("").code, 2);
  EXPECT_EQ(etwire("inspect").code, 2);
  EXPECT_EQ(etwire("inspect x --bogus").code, 2);
  EXPECT_EQ(etwire("feed x --policy random").code, 2);
}

TEST(Cli, MissingTraceNamesThePath) {
  auto r = etwire("inspect /nonexistent/dir/trace");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("/nonexistent/dir/trace"));
  EXPECT_THAT(r.output, HasSubstr("no such file or directory"));
}

TEST(Cli, ErrorsGoToStderrNotStdout) {
  auto r = etwire::testing::run_etwire("inspect /nonexistent/t", {},
                                       etwire::testing::Capture::kStdoutOnly);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.output, "");
}

TEST(Cli, SynthThenInspectJson) {
  auto dir = etwire::testing::make_scratch_dir("cli");
  auto prefix = (dir / "sub/ar").string();
  auto w =
      etwire("synth microbench -c reduce_scatter -b 256KiB -n 4 -i 3 --compute-us 20 -o " + prefix);
  ASSERT_EQ(w.code, 0) << w.output;
  EXPECT_THAT(w.output, HasSubstr("wrote 4 rank files"));
  auto r = etwire("inspect --json " + prefix);
  ASSERT_EQ(r.code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["world_size"], 4);
  ASSERT_EQ(j["ranks"].size(), 4u);
  for (const auto& rank : j["ranks"]) {
    EXPECT_EQ(rank["nodes"], 6);
    EXPECT_EQ(rank["collectives"]["REDUCE_SCATTER"]["count"], 3);
    EXPECT_EQ(rank["collectives"]["REDUCE_SCATTER"]["bytes"], 3 * 262144);
    EXPECT_EQ(rank["compute_us"], 60);
    EXPECT_EQ(rank["depth"], 6);
  }
  ASSERT_EQ(j["process_groups"].size(), 1u);
  EXPECT_EQ(j["process_groups"][0]["members"].size(), 4u);
  EXPECT_EQ(j["process_groups"][0]["consistent"], true);

  auto text = etwire("inspect " + prefix);
  ASSERT_EQ(text.code, 0);
  EXPECT_THAT(text.output, HasSubstr("4 ranks"));
  EXPECT_THAT(text.output, HasSubstr("REDUCE_SCATTER"));
  EXPECT_THAT(text.output, HasSubstr("256 KiB"));
}

TEST(Cli, SynthRejectsBadValues) {
  auto dir = etwire::testing::make_scratch_dir("cli");
  auto r = etwire("synth microbench -b 12XB -o " + (dir / "x").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("--bytes"));
  r = etwire("synth microbench -c all_sum -o " + (dir / "x").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("unknown collective \"all_sum\""));
  EXPECT_EQ(etwire("synth graph -N 0 -o " + (dir / "x").string()).code, 2);
}

TEST(Cli, FeedWritesADependencyRespectingOrder) {
  auto dir = etwire::testing::make_scratch_dir("cli");
  auto prefix = (dir / "g").string();
  ASSERT_EQ(etwire("synth graph -N 2000 -n 2 --shuffle-window 50 -o " + prefix).code, 0);
  auto order = dir / "order.csv";
  auto r = etwire("feed " + prefix + " --window 32 --in-flight 8 --policy comm-first --order " +
                  order.string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("4000 nodes"));
  std::istringstream csv(slurp(order));
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "rank,seq,node_id,type,name");
  std::set<std::pair<int, uint64_t>> ids;
  while (std::getline(csv, line)) {
    int rank = std::stoi(line.substr(0, line.find(',')));
    auto rest = line.substr(line.find(',') + 1);
    rest = rest.substr(rest.find(',') + 1);
    EXPECT_TRUE(ids.emplace(rank, std::stoull(rest.substr(0, rest.find(',')))).second);
  }
  EXPECT_EQ(ids.size(), 4000u);
}

// A full disk under --order ends the command with an error; the issue order was lost without a
// word before.
TEST(Cli, FeedSaysWhenTheOrderCannotBeWritten) {
  auto dir = etwire::testing::make_scratch_dir("cli");
  auto prefix = (dir / "g").string();
  ASSERT_EQ(etwire("synth graph -N 2000 -o " + prefix).code, 0);
  auto r = etwire("feed " + prefix + " --order /dev/full");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("error: --order: /dev/full: cannot write: No space left"));
}

// A time scale that is not a number is refused naming the flag, as one out of range is.
TEST(Cli, TimeScaleMustBeANumber) {
  for (const char* command : {"run", "sweep"}) {
    for (const char* value : {"nan", "-nan", "inf", "-1"}) {
      auto r = etwire(std::string(command) + " no-such.yaml --time-scale=" + value);
      EXPECT_EQ(r.code, 2) << command << " " << value << ": " << r.output;
      EXPECT_THAT(r.output, HasSubstr("--time-scale")) << command << " " << value;
    }
  }
}

TEST(Cli, FeedCommOnlyFiltersButKeepsEveryNode) {
  auto dir = etwire::testing::make_scratch_dir("cli");
  auto prefix = (dir / "m").string();
  ASSERT_EQ(etwire("synth microbench -n 2 -i 5 --compute-us 10 -o " + prefix).code, 0);
  auto r = etwire("feed --json --comm-only " + prefix);
  ASSERT_EQ(r.code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  ASSERT_EQ(j.size(), 2u);
  for (const auto& rank : j) {
    EXPECT_EQ(rank["nodes_read"], 10);
    EXPECT_EQ(rank["nodes_issued"], 5);
    EXPECT_EQ(rank["nodes_filtered"], 5);
  }
  EXPECT_EQ(etwire("feed --ids 5:2 " + prefix).code, 2);
}

TEST(Cli, TruncatedTraceIsABadInputNotACrash) {
  auto dir = etwire::testing::make_scratch_dir("cli");
  auto prefix = (dir / "t").string();
  ASSERT_EQ(etwire("synth microbench -n 1 -i 4 -o " + prefix).code, 0);
  auto file = dir / "t.0.et";
  std::string data = slurp(file);
  std::ofstream(file, std::ios::binary | std::ios::trunc) << data.substr(0, data.size() - 3);
  auto r = etwire("inspect " + prefix);
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr(file.string()));
  EXPECT_THAT(r.output, HasSubstr("record 4"));
}

// A rank file holding just `{}` is refused, located to the file, by inspect and by validate (it
// read as a trace with no nodes before: issue 39, N21).
TEST(Cli, EmptyJsonObjectIsNoTrace) {
  auto dir = etwire::testing::make_scratch_dir("cli");
  ASSERT_EQ(etwire("synth microbench -n 2 -o " + (dir / "e").string()).code, 0);
  const fs::path file = dir / "e.1.json";
  fs::remove(dir / "e.1.et");
  std::ofstream(file) << "{}\n";
  const std::string located = file.string() + ": no nodes: ";
  auto r = etwire("inspect " + (dir / "e").string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr(located));
  std::ofstream(dir / "run.yaml") << "run: {name: e}\nworkload:\n  jobs:\n"
                                     "    - {name: e, trace: e}\n"
                                     "ports:\n  - {name: h, count: 2, backend: loopback}\n";
  r = etwire("validate " + (dir / "run.yaml").string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr(located));
}

// The README's default run reads traces bundled in configs/traces; they must be exactly what
// `etwire synth` writes today, so they can be regenerated at any time.
TEST(Cli, BundledTracesAreReproducible) {
  auto bundled = etwire::testing::source_dir() / "configs/traces";
  std::ifstream recipe(bundled / "regenerate.sh");
  ASSERT_TRUE(recipe) << "configs/traces/regenerate.sh is missing";
  auto dir = etwire::testing::make_scratch_dir("bundled");
  std::string output;
  int code = etwire::testing::run_command("ETWIRE=" + etwire::testing::etwire_binary().string() +
                                              " OUT=" + dir.string() + " sh " +
                                              (bundled / "regenerate.sh").string(),
                                          output);
  ASSERT_EQ(code, 0) << output;
  int compared = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    auto rel = fs::relative(entry.path(), dir);
    ASSERT_TRUE(fs::exists(bundled / rel)) << rel << " is not bundled";
    EXPECT_EQ(slurp(entry.path()), slurp(bundled / rel)) << rel << " differs from the bundle";
    ++compared;
  }
  EXPECT_GT(compared, 0);
}

}  // namespace
}  // namespace etwire
