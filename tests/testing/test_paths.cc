#include "tests/testing/test_paths.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>

namespace etwire::testing {

std::filesystem::path upstream_traces() {
  return ETWIRE_UPSTREAM_TRACES;
}

bool have_upstream_traces() {
  return std::filesystem::exists(upstream_traces() / "MANIFEST.md");
}

std::filesystem::path source_dir() {
  return ETWIRE_SOURCE_DIR;
}

std::filesystem::path etwire_binary() {
  return ETWIRE_BINARY;
}

std::filesystem::path make_scratch_dir(const std::string& tag) {
  static std::atomic<int> counter{0};
  auto dir =
      std::filesystem::temp_directory_path() /
      ("etwire-test-" + tag + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

int run_command(const std::string& command, std::string& output) {
  output.clear();
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) output.append(buffer.data(), n);
  int status = pclose(pipe);
  if (status == -1) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

CommandResult run_etwire(const std::string& args, const std::filesystem::path& working_dir,
                         Capture capture) {
  // A subshell, so that dropping stderr is not undone by run_command's own 2>&1.
  std::string command = "(";
  if (!working_dir.empty()) command += "cd '" + working_dir.string() + "' && ";
  command += etwire_binary().string();
  command += ' ';
  command += args;
  if (capture == Capture::kStdoutOnly) command += " 2>/dev/null";
  command += ')';
  CommandResult result;
  result.code = run_command(command, result.output);
  return result;
}

}  // namespace etwire::testing
