// Where tests find their inputs: the upstream trace collection beside the checkout, the source
// tree, the etwire binary, and fresh scratch directories.
#pragma once

#include <filesystem>
#include <string>

namespace etwire::testing {

// ../shared/traces/upstream relative to the source tree.
std::filesystem::path upstream_traces();
// True when the upstream collection is present; otherwise the caller should GTEST_SKIP().
bool have_upstream_traces();
std::filesystem::path source_dir();
std::filesystem::path etwire_binary();
// A new empty directory under the system temp dir, unique to this process and call.
std::filesystem::path make_scratch_dir(const std::string& tag);

// Runs a shell command, returning its exit status; stdout+stderr land in `output`.
int run_command(const std::string& command, std::string& output);

struct CommandResult {
  int code = -1;
  std::string output;  // stdout and stderr together
};

enum class Capture { kStdoutAndStderr, kStdoutOnly };

// Runs the etwire binary with `args` (shell syntax), from `working_dir` when given.
CommandResult run_etwire(const std::string& args, const std::filesystem::path& working_dir = {},
                         Capture capture = Capture::kStdoutAndStderr);

}  // namespace etwire::testing

// Skips the current test with a clear message when the upstream traces are absent.
#define ETWIRE_REQUIRE_UPSTREAM_TRACES()                                               \
  do {                                                                                 \
    if (!::etwire::testing::have_upstream_traces())                                    \
      GTEST_SKIP() << "upstream Chakra traces not found at "                           \
                   << ::etwire::testing::upstream_traces()                             \
                   << " (they live in ../shared/traces/upstream beside the checkout)"; \
  } while (0)
