#include "runner/run_progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>

namespace etwire::runner {

namespace {

// Ports shown one by one up to this many; beyond, their mean, the slowest and the fastest.
constexpr size_t kPortsNamed = 4;

// "1:02:03" or "2:03": the time left.
std::string clock_time(double seconds) {
  const auto s = static_cast<uint64_t>(std::llround(std::max(seconds, 0.0)));
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

}  // namespace

uint64_t expected_instances(const control::RunPlan& plan) {
  uint64_t total = 0;
  for (size_t j = 0; j < plan.config.workload.jobs.size(); ++j) {
    if (j >= plan.traces.size() || !plan.traces[j]) return 0;
    const control::TraceFacts& facts = *plan.traces[j];
    uint64_t per_iteration = 0;
    for (const auto& [group, members] : facts.groups) {
      if (members.empty() || static_cast<size_t>(members[0]) >= facts.ranks.size()) continue;
      for (const auto& [call, count] : facts.ranks[static_cast<size_t>(members[0])].collectives) {
        if (call.group_id == group) per_iteration += count;
      }
    }
    for (const control::RankComm& rank : facts.ranks) {
      for (const auto& [transfer, count] : rank.sends) per_iteration += count;
    }
    const config::JobConfig& job = plan.config.workload.jobs[j];
    total += per_iteration * (uint64_t{job.warmup_iterations} + job.iterations);
  }
  return total;
}

RunProgress::RunProgress(uint64_t total, bool terminal)
    : total_(total),
      terminal_(terminal),
      started_(std::chrono::steady_clock::now()),
      last_plain_(started_) {}

void RunProgress::report(const engine::ProgressSample& sample, void* context) {
  auto& self = *static_cast<RunProgress*>(context);
  const auto now = std::chrono::steady_clock::now();
  if (!self.terminal_ && now - self.last_plain_ < kPlainEvery) return;
  self.last_plain_ = now;
  const std::string text = self.line(sample, now - self.started_);
  if (self.terminal_) {
    // \x1b[K clears what a longer previous line left.
    std::cerr << '\r' << text << "\x1b[K" << std::flush;
  } else {
    std::cerr << "progress: " << text << '\n' << std::flush;
  }
}

std::string RunProgress::line(const engine::ProgressSample& sample,
                              std::chrono::duration<double> elapsed) {
  const uint64_t done = sample.so_far->collectives.size();
  std::string text;
  if (total_ > 0) {
    const double share = std::min(1.0, static_cast<double>(done) / static_cast<double>(total_));
    text = fmt::format("{:.1f} % | collectives {} of {}", share * 100, done, total_);
    // The time left at the pace so far (instances per second of wall time).
    if (done > 0 && done < total_) {
      const double left =
          elapsed.count() * static_cast<double>(total_ - done) / static_cast<double>(done);
      text += fmt::format(" | ETA {}", clock_time(left));
    }
  } else {
    text = fmt::format("collectives {}", done);
  }
  text += fmt::format(" | flows {} | {} {:.3f} ms", sample.so_far->flows,
                      sample.so_far->wall_clock ? "run" : "virtual",
                      static_cast<double>(sample.now) / 1e6);
  // The ports' rates over the run clock since the previous line (the emulated fabric's time on
  // the twin): what each sent, in Gb/s.
  const size_t ports = sample.port_tx_bytes.size();
  if (previous_now_ >= 0 && sample.now > previous_now_ && previous_tx_.size() == ports && ports) {
    const double seconds = static_cast<double>(sample.now - previous_now_) / 1e9;
    std::vector<double> gbps(ports);
    for (size_t p = 0; p < ports; ++p) {
      const uint64_t sent =
          sample.port_tx_bytes[p] - std::min(previous_tx_[p], sample.port_tx_bytes[p]);
      gbps[p] = static_cast<double>(sent) * 8 / seconds / 1e9;
    }
    if (ports <= kPortsNamed) {
      text += " | tx Gb/s";
      for (size_t p = 0; p < ports; ++p) {
        text += fmt::format(" {} {:.1f}", sample.port_names[p], gbps[p]);
      }
    } else {
      double sum = 0;
      for (double g : gbps) sum += g;
      const auto [low, high] = std::minmax_element(gbps.begin(), gbps.end());
      text += fmt::format(" | tx Gb/s: {} ports mean {:.1f}, min {:.1f} ({}), max {:.1f} ({})",
                          ports, sum / static_cast<double>(ports), *low,
                          sample.port_names[static_cast<size_t>(low - gbps.begin())], *high,
                          sample.port_names[static_cast<size_t>(high - gbps.begin())]);
    }
  }
  previous_now_ = sample.now;
  previous_tx_ = sample.port_tx_bytes;
  return text;
}

}  // namespace etwire::runner
