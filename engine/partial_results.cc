// The merge of every process's part of a split run into one run's results.
#include "engine/partial_results.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "engine/fct_percentiles.h"
#include "trace/node.h"

namespace etwire::engine {

namespace {

// Per kind index of the FCT samples (trace::kCollectiveTypeCount + 1): the last is
// point-to-point, as the engine keeps them.
constexpr size_t kFctKinds = static_cast<size_t>(trace::kCollectiveTypeCount) + 1;

void shift_times(RunResults& results, double scale, clock::Nanos shift) {
  if (scale == 1.0 && shift == 0) return;
  auto move = [&](clock::Nanos& t) { t = to_reference_time(t, scale, shift); };
  move(results.end_time);
  for (CollectiveRecord& c : results.collectives) {
    move(c.first_arrival);
    move(c.last_arrival);
    move(c.end);
  }
  for (IterationRecord& it : results.iterations) {
    move(it.start);
    move(it.end);
    for (RankIteration& rank : it.ranks) {
      move(rank.start);
      move(rank.end);
    }
  }
}

// Percentiles of the samples of every part, by kind index as the engine's finalize maps them.
std::vector<FctPercentiles> fct_from_samples(const std::vector<PartialResults>& parts) {
  std::vector<std::vector<clock::Nanos>> samples(kFctKinds);
  for (const PartialResults& part : parts) {
    for (size_t kind = 0; kind < part.fct_samples.size(); ++kind) {
      std::vector<clock::Nanos>& into = samples[std::min(kind, kFctKinds - 1)];
      into.insert(into.end(), part.fct_samples[kind].begin(), part.fct_samples[kind].end());
    }
  }
  std::vector<FctPercentiles> fct;
  for (size_t kind = 0; kind < samples.size(); ++kind) {
    if (samples[kind].empty()) continue;
    collectives::CollectiveKind which;
    if (kind < static_cast<size_t>(trace::kCollectiveTypeCount))
      which = static_cast<trace::CollectiveType>(kind);
    fct.push_back(fct_percentiles(which, samples[kind]));
  }
  return fct;
}

bool replays(const PartialResults& part, uint32_t job, int64_t rank) {
  if (job >= part.ranks_here.size() || rank < 0) return false;
  const std::vector<uint8_t>& ranks = part.ranks_here[job];
  return static_cast<uint64_t>(rank) < ranks.size() && ranks[static_cast<size_t>(rank)] != 0;
}

bool replays_any(const PartialResults& part, uint32_t job) {
  if (job >= part.ranks_here.size()) return false;
  const std::vector<uint8_t>& ranks = part.ranks_here[job];
  return std::any_of(ranks.begin(), ranks.end(), [](uint8_t here) { return here != 0; });
}

int severity(RunStatus status) {
  switch (status) {
    case RunStatus::kCompleted:
      return 0;
    case RunStatus::kFlowsFailed:
      return 1;
    case RunStatus::kInterrupted:
      return 2;
    case RunStatus::kStuck:
      return 3;
    case RunStatus::kFailed:
      return 4;
  }
  return 4;
}

// The order merged instances are written in (tag before the endpoints, unlike InstanceKey).
using InstanceSortKey = std::tuple<uint32_t, int64_t, uint64_t, int32_t, int32_t, int32_t>;

InstanceSortKey instance_key(const CollectiveRecord& c) {
  return {c.job, c.group, c.sequence, c.tag, c.src, c.dst};
}

struct MergedInstance {
  CollectiveRecord record;
  uint64_t members = 0;      // members completed, over the parts that have the instance
  bool from_sender = false;  // point-to-point: last_arrival is the sender's part's
  std::vector<std::pair<size_t, uint64_t>> local_ids;  // (part, the part's instance number)
};

std::vector<CollectiveRecord> merge_collectives(const std::vector<PartialResults>& parts,
                                                std::vector<InstanceNumbers>* numbers) {
  std::map<InstanceSortKey, MergedInstance> instances;
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto& collectives = parts[i].results.collectives;
    for (size_t n = 0; n < collectives.size(); ++n) {
      const CollectiveRecord& c = collectives[n];
      const bool p2p = c.group == kPointToPointGroup;
      const bool sender = p2p && replays(parts[i], c.job, c.src);
      auto [it, inserted] = instances.try_emplace(instance_key(c));
      MergedInstance& m = it->second;
      if (inserted) {
        m.record = c;
        m.from_sender = sender;
      } else {
        CollectiveRecord& r = m.record;
        r.first_arrival = std::min(r.first_arrival, c.first_arrival);
        r.end = std::max(r.end, c.end);
        r.flows += c.flows;
        r.failed_flows += c.failed_flows;
        r.wire_bytes += c.wire_bytes;
        // A SEND is issued on its sender's process; the receiver's record only saw the RECV.
        if (!p2p || (!sender && !m.from_sender)) {
          r.last_arrival = std::max(r.last_arrival, c.last_arrival);
        } else if (sender) {
          r.last_arrival = c.last_arrival;
          m.from_sender = true;
        }
      }
      m.members += n < parts[i].members_here.size() ? parts[i].members_here[n] : 0;
      m.local_ids.emplace_back(i, c.instance);
    }
  }

  // An instance some process did not complete (a stopped run) is not in the run's results.
  std::vector<CollectiveRecord> merged;
  std::vector<const MergedInstance*> origin;  // parallel to merged, until it is sorted
  for (auto& [key, m] : instances) {
    if (m.members < m.record.group_size) continue;
    merged.push_back(m.record);
    origin.push_back(&m);
  }
  // Each merged record carries its position in `origin` as its number until it is renumbered.
  for (size_t i = 0; i < merged.size(); ++i) merged[i].instance = i;
  // In order of completion, as one engine lists them; instances numbered by first arrival.
  auto by = [](auto time) {
    return [time](const CollectiveRecord& a, const CollectiveRecord& b) {
      return std::pair(time(a), instance_key(a)) < std::pair(time(b), instance_key(b));
    };
  };
  std::sort(merged.begin(), merged.end(), by([](const CollectiveRecord& c) { return c.end; }));
  std::vector<size_t> order(merged.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto by_arrival = by([](const CollectiveRecord& c) { return c.first_arrival; });
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return by_arrival(merged[a], merged[b]); });
  if (numbers != nullptr) numbers->assign(parts.size(), {});
  for (size_t n = 0; n < order.size(); ++n) {
    CollectiveRecord& record = merged[order[n]];
    if (numbers != nullptr) {
      for (const auto& [part, local] : origin[record.instance]->local_ids) {
        (*numbers)[part][local] = n;
      }
    }
    record.instance = n;
  }
  return merged;
}

std::vector<IterationRecord> merge_iterations(const std::vector<PartialResults>& parts) {
  struct MergedIteration {
    IterationRecord record;
    std::vector<bool> in_part;
  };
  std::map<std::pair<uint32_t, uint32_t>, MergedIteration> iterations;
  for (size_t i = 0; i < parts.size(); ++i) {
    for (const IterationRecord& it : parts[i].results.iterations) {
      auto [entry, inserted] = iterations.try_emplace(std::pair(it.job, it.iteration));
      MergedIteration& m = entry->second;
      if (inserted) {
        m.record = it;
        m.in_part.assign(parts.size(), false);
      } else {
        m.record.start = std::min(m.record.start, it.start);
        m.record.end = std::max(m.record.end, it.end);
        if (m.record.ranks.size() < it.ranks.size()) m.record.ranks.resize(it.ranks.size());
      }
      // A rank's share comes from the process that replays it; the others hold nothing for it.
      for (size_t r = 0; r < it.ranks.size(); ++r)
        if (replays(parts[i], it.job, static_cast<int64_t>(r))) m.record.ranks[r] = it.ranks[r];
      m.in_part[i] = true;
    }
  }
  std::vector<IterationRecord> merged;
  for (auto& [key, m] : iterations) {
    bool complete = true;
    for (size_t i = 0; i < parts.size() && complete; ++i)
      complete = m.in_part[i] || !replays_any(parts[i], key.first);
    if (complete) merged.push_back(std::move(m.record));
  }
  return merged;
}

std::vector<PortRecord> merge_ports(const std::vector<PartialResults>& parts) {
  size_t count = 0;
  for (const PartialResults& part : parts) count = std::max(count, part.results.ports.size());
  std::vector<PortRecord> ports;
  ports.reserve(count);
  for (size_t p = 0; p < count; ++p) {
    const PartialResults* owner = nullptr;
    for (const PartialResults& part : parts) {
      if (p < part.ports_here.size() && part.ports_here[p] != 0 && p < part.results.ports.size()) {
        owner = &part;
        break;
      }
    }
    if (owner != nullptr) {
      ports.push_back(owner->results.ports[p]);
      ports.back().host = owner->host;
      continue;
    }
    // Driven by no process (a port of the plan no emulator runs): as process 0 has it.
    for (const PartialResults& part : parts) {
      if (p < part.results.ports.size()) {
        ports.push_back(part.results.ports[p]);
        break;
      }
    }
  }
  return ports;
}

}  // namespace

RunResults merge_partials(std::vector<PartialResults> parts,
                          std::vector<InstanceNumbers>* numbers) {
  if (parts.empty()) throw std::invalid_argument("merge_partials: no partial results");
  for (PartialResults& part : parts) shift_times(part.results, part.time_scale, part.time_shift);
  if (parts.size() == 1) {
    if (numbers != nullptr) {
      numbers->assign(1, {});
      for (const CollectiveRecord& c : parts[0].results.collectives)
        (*numbers)[0][c.instance] = c.instance;
    }
    RunResults results = std::move(parts[0].results);
    results.fct = fct_from_samples(parts);
    return results;
  }

  const RunResults& first = parts[0].results;
  RunResults merged;
  merged.run_name = first.run_name;
  merged.config_file = first.config_file;
  merged.config_digest = first.config_digest;
  merged.seed = first.seed;
  merged.topology = first.topology;
  merged.world_size = first.world_size;
  merged.wall_clock = first.wall_clock;
  merged.goodput_bytes_per_second = first.goodput_bytes_per_second;
  merged.jobs = first.jobs;
  for (JobSummary& job : merged.jobs) job.nodes_issued = 0;
  merged.end_time = first.end_time;

  std::set<std::string> notes_seen;
  for (size_t i = 0; i < parts.size(); ++i) {
    const PartialResults& part = parts[i];
    const RunResults& r = part.results;
    for (size_t j = 0; j < merged.jobs.size() && j < r.jobs.size(); ++j)
      merged.jobs[j].nodes_issued += r.jobs[j].nodes_issued;
    merged.events += r.events;
    merged.flows += r.flows;
    merged.failed_flows += r.failed_flows;
    for (size_t s = 0; s < merged.flows_by_status.size(); ++s)
      merged.flows_by_status[s] += r.flows_by_status[s];
    merged.wall_seconds = std::max(merged.wall_seconds, r.wall_seconds);
    merged.end_time = std::max(merged.end_time, r.end_time);
    if (severity(r.status) > severity(merged.status)) merged.status = r.status;

    if (!r.diagnosis.empty()) {
      merged.diagnosis += part.emulator.empty()
                              ? fmt::format("process {} on {}:\n", i, part.host)
                              : fmt::format("emulator \"{}\" on {}:\n", part.emulator, part.host);
      merged.diagnosis += r.diagnosis;
      if (r.diagnosis.back() != '\n') merged.diagnosis += '\n';
    }
    // Processes on one host see the same devices and often report the same note once each.
    for (const std::string& note : r.notes) {
      std::string line = fmt::format("{}: {}", part.host, note);
      if (notes_seen.insert(line).second) merged.notes.push_back(std::move(line));
    }
  }

  merged.collectives = merge_collectives(parts, numbers);
  merged.iterations = merge_iterations(parts);
  merged.ports = merge_ports(parts);
  merged.fct = fct_from_samples(parts);
  // Each process counted the QP halves on its own ports: together, every half once. Counted
  // only when every process could count its own.
  merged.qps_counted = true;
  for (const PartialResults& part : parts) {
    merged.qps_counted = merged.qps_counted && part.results.qps_counted;
  }
  if (merged.qps_counted) {
    for (const PartialResults& part : parts) {
      merged.qps.insert(merged.qps.end(), part.results.qps.begin(), part.results.qps.end());
    }
  }
  return merged;
}

}  // namespace etwire::engine
