// The top level of the command line: -v turns on debug logs of the setup steps, and a word that
// names no command, or no command at all, says so and lists the commands.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/testing/test_paths.h"

namespace etwire {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

std::string demo_run_args(const std::string& tag) {
  const auto dir = etwire::testing::make_scratch_dir(tag);
  std::string args = "run ";
  args += (etwire::testing::source_dir() / "configs/loopback-demo.yaml").string();
  args += " --no-metrics --no-progress -o ";
  args += (dir / "results").string();
  return args;
}

TEST(CliUsage, UnknownCommandNamesItselfAndListsTheCommands) {
  auto r = etwire::testing::run_etwire("frobnicate");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("error: unknown command \"frobnicate\"; commands: "));
  for (const char* command : {"run", "validate", "inspect", "devices", "compare"}) {
    EXPECT_THAT(r.output, HasSubstr(command));
  }
  // Flags before the word do not hide it.
  r = etwire::testing::run_etwire("-v frobnicate extra");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("unknown command \"frobnicate\""));
}

TEST(CliUsage, ErrorsOfAKnownCommandAreNotCalledAnUnknownCommand) {
  auto r = etwire::testing::run_etwire("inspect x --bogus");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("--bogus"));
  EXPECT_THAT(r.output, Not(HasSubstr("unknown command")));
  r = etwire::testing::run_etwire("");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, Not(HasSubstr("unknown command")));
}

TEST(CliUsage, NoCommandAtAllListsTheCommands) {
  for (const char* args : {"", "-v"}) {
    const auto r = etwire::testing::run_etwire(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_THAT(r.output, HasSubstr("error: a command is required; commands: ")) << args;
    EXPECT_THAT(r.output, HasSubstr("compare")) << args;
  }
}

TEST(CliUsage, HelpAndVersionAreNotMistakenForAMissingCommand) {
  auto r = etwire::testing::run_etwire("--version");
  EXPECT_EQ(r.code, 0);
  // The version, the commit built (or why it is unknown) and the build type.
  EXPECT_THAT(r.output,
              ContainsRegex("^etwire 0\\.1\\.0 \\(commit ([0-9a-f]{12}(\\+changes)?|unknown: "
                            "not built from a git checkout); [A-Za-z]+(, ASan\\+UBSan)? "
                            "build\\)"));
  r = etwire::testing::run_etwire("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.output, Not(HasSubstr("error")));
}

TEST(CliUsage, VerboseLogsTheSetupStepsOnStderr) {
  // Before the command and after it alike.
  for (const std::string& args :
       {"-v " + demo_run_args("cli-verbose"), demo_run_args("cli-verbose") + " -v"}) {
    auto r = etwire::testing::run_etwire(args);
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("debug: loaded "));
    EXPECT_THAT(r.output, HasSubstr("debug: data plane: loopback (8 ports"));
    EXPECT_THAT(r.output, HasSubstr("debug: port host0: loopback, 100 Gb/s"));
    EXPECT_THAT(r.output, HasSubstr("/summary.json"));
    EXPECT_THAT(r.output, HasSubstr("debug: wrote "));
  }
  // Only on stderr: stdout stays the report alone.
  auto out = etwire::testing::run_etwire("-v " + demo_run_args("cli-verbose"), {},
                                         etwire::testing::Capture::kStdoutOnly);
  ASSERT_EQ(out.code, 0);
  EXPECT_THAT(out.output, Not(HasSubstr("debug:")));
}

TEST(CliUsage, WithoutVerboseThereAreNoDebugLogs) {
  auto r = etwire::testing::run_etwire(demo_run_args("cli-quiet"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("debug:")));
}

}  // namespace
}  // namespace etwire
