// The run engine's reporting: what is stuck when a run cannot go on, and the results at the end.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/units.h"
#include "control/check/trace_facts.h"
#include "engine/fct_percentiles.h"
#include "engine/run_engine.h"

namespace etwire::engine {

namespace {

// "0-3, 5, 7-9", at most `limit` ranges then "...".
std::string rank_list(const std::vector<int32_t>& ranks, size_t limit = 16) {
  std::string text;
  size_t ranges = 0;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!text.empty()) text += ", ";
    if (++ranges > limit) {
      text += fmt::format("... ({} ranks in all)", ranks.size());
      break;
    }
    text += j == i ? fmt::format("{}", ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
    i = j + 1;
  }
  return text.empty() ? std::string("none") : text;
}

}  // namespace

void RunEngine::stop_stuck(std::string diagnosis) {
  if (stopped_) return;
  stopped_ = true;
  results_.status = RunStatus::kStuck;
  results_.diagnosis = std::move(diagnosis);
}

// What rank `rank` of job `job` does instead of joining a stalled instance.
std::string RunEngine::describe_rank(uint32_t job, int32_t rank) const {
  if (!rank_here(job, rank)) return split_.replayed_elsewhere(job, rank);
  const RankRuntime& rt = runtimes_[jobs_[job].first_runtime + static_cast<uint32_t>(rank)];
  if (rt.finished()) return "finished its trace";
  if (!rt.joined().empty()) {
    const InstanceKey& key = rt.joined().front();
    if (key.group == kPointToPointGroup) {
      return fmt::format("waits in a send/recv from rank {} to rank {} (tag {}, #{})", key.src,
                         key.dst, key.tag, key.sequence);
    }
    return fmt::format("waits in collective #{} of {}", key.sequence,
                       control::group_label(key.group));
  }
  if (rt.compute_in_flight() > 0)
    return fmt::format("runs {} compute nodes", rt.compute_in_flight());
  return "has nothing in flight";
}

std::string RunEngine::failed_flows_cause() const {
  if (results_.failed_flows == 0 || !split_.active()) return {};
  // A flow that failed here never reaches its receiver in another emulator process, which waits
  // for it until its watchdog: without this line both processes read as a deadlock.
  std::string by_status;
  for (size_t s = 0; s < results_.flows_by_status.size(); ++s) {
    const auto status = static_cast<transport::FlowStatus>(s);
    if (status == transport::FlowStatus::kCompleted || results_.flows_by_status[s] == 0) continue;
    by_status += fmt::format("{}{} {}", by_status.empty() ? "" : ", ",
                             transport::flow_status_name(status), results_.flows_by_status[s]);
  }
  return fmt::format(
      "  {} flows failed here ({}): a message that failed is never delivered to its receiver in "
      "another emulator process, which waits for it; the instances below cannot complete. A "
      "connection fails when its retries run out (transport.retry_count, "
      "transport.retransmit_timeout): on a busy machine a process that loses its core for longer "
      "than that fails its peers' connections\n",
      results_.failed_flows, by_status);
}

std::string RunEngine::diagnose_stall(const std::string& why) const {
  std::string text =
      fmt::format("{} ({} time {} ns; last progress at {} ns)\n", why,
                  results_.wall_clock ? "run" : "virtual", clock_.now(), last_progress_);
  text += failed_flows_cause();
  // One line per open instance: who is there, who is not, and what the missing ranks are doing.
  for (const auto& [key, instance] : instances_.open()) {
    const CollectiveRecord& record = instance->record();
    const ReplayedJob& job = jobs_[key.job];
    std::vector<int32_t> arrived;
    std::vector<int32_t> missing;
    std::vector<int32_t> running;
    // Members another emulator process replays: their arrival is not seen here (that process's
    // own diagnosis says what they wait on).
    std::vector<int32_t> elsewhere;
    for (uint32_t p = 0; p < instance->size(); ++p) {
      const int32_t rank = instance->ranks()[p];
      const InstanceMember& member = instance->member(p);
      if (!instance->here(p)) {
        elsewhere.push_back(rank);
        continue;
      }
      (member.arrived ? arrived : missing).push_back(rank);
      if (member.arrived && !member.done) running.push_back(rank);
    }
    std::sort(arrived.begin(), arrived.end());
    std::sort(missing.begin(), missing.end());
    std::sort(running.begin(), running.end());
    std::sort(elsewhere.begin(), elsewhere.end());
    std::string what;
    if (key.group == kPointToPointGroup) {
      what = fmt::format("job \"{}\": send/recv #{} from rank {} to rank {} (tag {}, {})",
                         job.config->name, key.sequence, key.src, key.dst, key.tag,
                         format_bytes(record.trace_bytes));
      if (!missing.empty()) {
        const bool recv_missing = missing.front() == key.dst;
        what += fmt::format(": the {} on rank {} was never issued; rank {} {}",
                            recv_missing ? "RECV" : "SEND", missing.front(), missing.front(),
                            describe_rank(key.job, missing.front()));
      }
    } else {
      what = fmt::format("job \"{}\": {} #{} of {} ({}, {} ranks): {} of {} arrived",
                         job.config->name, kind_label(record.kind), key.sequence,
                         control::group_label(key.group), format_bytes(record.trace_bytes),
                         instance->size(), instance->arrived(), instance->members_here());
      if (!elsewhere.empty()) {
        // Grouped by where they are replayed.
        std::map<std::string, std::vector<int32_t>> by_place;
        for (int32_t rank : elsewhere)
          by_place[split_.replayed_elsewhere(key.job, rank)].push_back(rank);
        what += " here";
        for (const auto& [place, ranks] : by_place) {
          what += fmt::format("; rank{} {} {}{}", ranks.size() == 1 ? "" : "s", rank_list(ranks),
                              ranks.size() == 1 ? "is" : "are", place.substr(2));
        }
      }
      if (!missing.empty()) {
        what +=
            fmt::format("; missing rank{} {}", missing.size() == 1 ? "" : "s", rank_list(missing));
        // What the first few missing ranks are doing instead.
        for (size_t i = 0; i < std::min<size_t>(missing.size(), 4); ++i) {
          what += fmt::format("; rank {} {}", missing[i], describe_rank(key.job, missing[i]));
        }
      }
    }
    if (missing.empty()) {
      what += fmt::format(": every member {}arrived; ranks {} still running, {} flows in progress",
                          elsewhere.empty() ? "" : "here ", rank_list(running),
                          data_plane_->flows_in_progress());
    }
    if (record.failed_flows > 0) {
      what += fmt::format("; {} of its flows failed here", record.failed_flows);
    }
    text += "  ";
    text += what;
    text += "\n";
  }
  // Ranks that wait on nothing shared: done, or between nodes.
  for (size_t j = 0; j < jobs_.size(); ++j) {
    std::vector<int32_t> finished;
    for (int32_t rank = 0; rank < jobs_[j].world_size; ++rank) {
      if (runtimes_[jobs_[j].first_runtime + static_cast<uint32_t>(rank)].finished()) {
        finished.push_back(rank);
      }
    }
    if (!finished.empty()) {
      text +=
          fmt::format("  job \"{}\": rank{} {} finished every iteration\n", jobs_[j].config->name,
                      finished.size() == 1 ? "" : "s", rank_list(finished));
    }
  }
  return text;
}

void RunEngine::finalize() {
  clock_at_end_ = read_clocks();
  data_plane_->finish();
  results_.end_time = clock_.now();
  if (port_sampler_) port_sampler_->finish(results_.end_time);
  results_.events = data_plane_->events_run();
  results_.notes = data_plane_->notes();
  results_.ports.clear();
  for (size_t p = 0; p < data_plane_->ports(); ++p) {
    results_.ports.push_back(data_plane_->port_record(p));
  }
  collect_qp_records();
  results_.fct.clear();
  for (size_t kind = 0; kind < fct_samples_.size(); ++kind) {
    if (fct_samples_[kind].empty()) continue;
    collectives::CollectiveKind which;
    if (kind < trace::kCollectiveTypeCount) which = static_cast<trace::CollectiveType>(kind);
    results_.fct.push_back(fct_samples_[kind].percentiles(which));
  }
  std::stable_sort(results_.iterations.begin(), results_.iterations.end(),
                   [](const IterationRecord& a, const IterationRecord& b) {
                     return a.job != b.job ? a.job < b.job : a.iteration < b.iteration;
                   });
  if (results_.status == RunStatus::kCompleted && results_.failed_flows > 0) {
    results_.status = RunStatus::kFlowsFailed;
  }
  if (options_.flows) options_.flows->flush();
  telemetry_.snapshot(true, results_.status);
}

PartialResults RunEngine::partial_results() const {
  PartialResults part;
  part.results = results_;
  part.fct_samples.resize(fct_samples_.size());
  for (size_t kind = 0; kind < fct_samples_.size(); ++kind) {
    part.fct_samples[kind] = fct_samples_[kind].expanded();
  }
  part.members_here = collective_members_here_;
  split_.describe(part);
  return part;
}

}  // namespace etwire::engine
