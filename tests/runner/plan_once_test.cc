// A run is planned once: the configuration file is opened once and each trace set discovered
// (its directory listed) once per `run`, once per `run --predict` (the prediction's plan is
// derived from the measurement's) and once per sweep (each point's plan is derived from the
// configuration's, and the point's own trace set is discovered once, when the point is checked).
// The kernel counts the opens (inotify) on a scratch copy of the configuration and its traces,
// which no other test reads.
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include "runner/configured_run.h"
#include "runner/exit_codes.h"
#include "runner/predicted_run.h"
#include "runner/sweep_run.h"
#include "tests/testing/test_paths.h"

namespace etwire::runner {
namespace {

namespace fs = std::filesystem;

// Counts the opens of watched files and directories, and of the directories inside a watched
// directory. Closes are watched too: two opens of one path are then never adjacent events, which
// the kernel would merge into one.
class OpenCounter {
 public:
  OpenCounter() : fd_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) { EXPECT_GE(fd_, 0); }
  ~OpenCounter() { close(fd_); }
  OpenCounter(const OpenCounter&) = delete;
  OpenCounter& operator=(const OpenCounter&) = delete;

  void watch(const fs::path& path) {
    const int wd = inotify_add_watch(fd_, path.c_str(), IN_OPEN | IN_CLOSE_NOWRITE);
    ASSERT_GE(wd, 0) << path;
    paths_[wd] = path;
  }

  // Opens since the last call, by path: a watched path's own, and a watched directory's
  // subdirectories' (by their path).
  std::map<fs::path, int> opens() {
    std::map<fs::path, int> counted;
    alignas(inotify_event) std::array<char, 1 << 16> buffer{};
    for (;;) {
      const ssize_t got = read(fd_, buffer.data(), buffer.size());
      if (got <= 0) break;
      for (ssize_t at = 0; at < got;) {
        const auto* event = reinterpret_cast<const inotify_event*>(buffer.data() + at);
        EXPECT_EQ(event->mask & IN_Q_OVERFLOW, 0u) << "inotify's queue overflowed";
        const bool opened = (event->mask & IN_OPEN) != 0;
        if (opened && event->len == 0) ++counted[paths_[event->wd]];
        if (opened && event->len > 0 && (event->mask & IN_ISDIR) != 0) {
          ++counted[paths_[event->wd] / event->name];
        }
        at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      }
    }
    return counted;
  }

 private:
  int fd_;
  std::map<int, fs::path> paths_;
};

// A scratch copy of a shipped configuration and the bundled trace set it replays.
struct ScratchConfig {
  fs::path dir;
  fs::path config;
  fs::path traces;  // the trace set's directory
};

ScratchConfig scratch_copy(const std::string& tag, const std::string& config) {
  ScratchConfig copy;
  copy.dir = testing::make_scratch_dir(tag);
  copy.config = copy.dir / config;
  fs::copy_file(testing::source_dir() / "configs" / config, copy.config);
  copy.traces = copy.dir / "traces" / "allreduce_8r";
  fs::create_directories(copy.traces);
  fs::copy(testing::source_dir() / "configs" / "traces" / "allreduce_8r", copy.traces);
  return copy;
}

// The opens of the copy's configuration and trace directory while `run` runs, which must exit 0.
// `also` is watched besides.
std::map<fs::path, int> opens_during(const ScratchConfig& copy, const std::function<int()>& run,
                                     const fs::path& also = {}) {
  OpenCounter counter;
  counter.watch(copy.config);
  counter.watch(copy.traces);
  if (!also.empty()) counter.watch(also);
  EXPECT_EQ(run(), kExitOk);
  return counter.opens();
}

RunRequest quiet_request(const ScratchConfig& copy) {
  RunRequest request;
  request.config = copy.config.string();
  request.out = (copy.dir / "out").string();
  request.no_metrics = true;
  request.no_progress = true;
  request.quiet = true;
  return request;
}

TEST(PlanOnce, ARunOpensItsConfigurationAndDiscoversItsTraceSetOnce) {
  const ScratchConfig copy = scratch_copy("plan-once-run", "loopback-demo.yaml");
  std::map<fs::path, int> opens =
      opens_during(copy, [&] { return run_configuration(quiet_request(copy)); });
  EXPECT_EQ(opens[copy.config], 1);
  EXPECT_EQ(opens[copy.traces], 1);
}

TEST(PlanOnce, ARunWithItsPredictionOpensItsConfigurationAndDiscoversItsTraceSetOnce) {
  // Software RNIC ports: a measurement that runs here, in place of which the prediction puts
  // loopback ports.
  const ScratchConfig copy = scratch_copy("plan-once-predict", "verbs-software.yaml");
  std::map<fs::path, int> opens =
      opens_during(copy, [&] { return run_with_prediction(quiet_request(copy)); });
  EXPECT_TRUE(fs::is_regular_file(copy.dir / "out" / "prediction" / "summary.json"));
  EXPECT_TRUE(fs::is_regular_file(copy.dir / "out" / "summary.json"));
  EXPECT_EQ(opens[copy.config], 1);
  EXPECT_EQ(opens[copy.traces], 1);
}

TEST(PlanOnce, ASweepOpensItsConfigurationOnceAndDiscoversEachTraceSetOnce) {
  const ScratchConfig copy = scratch_copy("plan-once-sweep", "loopback-demo.yaml");
  SweepOptions sweep;
  sweep.config = copy.config.string();
  sweep.out = (copy.dir / "sweep").string();
  sweep.flags.collectives = "all_reduce";
  sweep.flags.algorithms = "ring,tree";
  sweep.flags.min_bytes = "1KiB";
  sweep.flags.max_bytes = "4KiB";
  sweep.iterations = 1;
  sweep.warmup_iterations = 0;
  // The sweep writes each size's trace set in a directory of its own under traces/.
  const fs::path points = copy.dir / "sweep" / "traces";
  fs::create_directories(points);
  std::map<fs::path, int> opens = opens_during(
      copy, [&] { return run_sweep(sweep); }, points);
  EXPECT_EQ(opens[copy.config], 1);
  EXPECT_EQ(opens[copy.traces], 1);
  // Three sizes, each replayed by two algorithms: six runs of three trace sets.
  size_t point_sets = 0;
  for (const auto& entry : fs::directory_iterator(points)) {
    ++point_sets;
    EXPECT_EQ(opens[entry.path()], 1) << entry.path() << ": discovered for both algorithms' runs";
  }
  EXPECT_EQ(point_sets, 3u);
}

}  // namespace
}  // namespace etwire::runner
