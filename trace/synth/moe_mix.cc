#include "trace/synth/moe_mix.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <numeric>
#include <stdexcept>

#include "trace/synth/model_writer.h"
#include "trace/synth/synth.h"

namespace etwire::synth {

using trace::CollectiveType;

namespace {

// Whether the k-th of `count` events spread evenly over `steps` steps falls on step `i`: the
// events land after steps floor(steps / count) apart, the last one on the last step.
bool due(uint64_t i, uint64_t count, uint64_t steps) {
  return (i + 1) * count / steps > i * count / steps;
}

void write_groups(int32_t ranks, const std::string& path) {
  std::vector<int32_t> all(static_cast<size_t>(ranks));
  std::iota(all.begin(), all.end(), 0);
  const std::string members = fmt::format("{}", fmt::join(all, ", "));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << fmt::format("{{\n  \"{}\": [{}],\n  \"{}\": [{}]\n}}\n", kMoeMixAllReduceGroup, members,
                     kMoeMixAllToAllGroup, members);
  out.close();
  if (!out) throw std::runtime_error(fmt::format("{}: cannot write the comm-group file", path));
}

}  // namespace

std::optional<SpecProblem> validate(const MoeMixSpec& spec) {
  if (spec.ranks < 2) return SpecProblem{"ranks", "must be at least 2"};
  if (spec.iterations < 1) return SpecProblem{"iterations", "must be at least 1"};
  if (spec.allreduces == 0 && spec.alltoalls == 0) {
    return SpecProblem{"alltoall-count",
                       "no collective at all: give --allreduce-count or "
                       "--alltoall-count above 0"};
  }
  if (spec.allreduces > 0 && spec.allreduce_bytes == 0) {
    return SpecProblem{"allreduce-bytes", "must be at least 1"};
  }
  if (spec.alltoalls > 0 && spec.alltoall_bytes == 0) {
    return SpecProblem{"alltoall-bytes", "must be at least 1"};
  }
  return std::nullopt;
}

MoeMixSummary write_moe_mix(const MoeMixSpec& spec, const std::string& prefix,
                            trace::WriteFormat format) {
  if (auto problem = validate(spec)) {
    throw std::invalid_argument(fmt::format("--{}: {}", problem->flag, problem->message));
  }
  const std::string description =
      fmt::format("moe-mix ranks={} allreduce={}x{} alltoall={}x{} compute_us={} iterations={}",
                  spec.ranks, spec.allreduces, spec.allreduce_bytes, spec.alltoalls,
                  spec.alltoall_bytes, spec.compute_us, spec.iterations);
  const auto metadata = synth_metadata(description);
  const uint64_t steps = std::max(spec.allreduces, spec.alltoalls);

  MoeMixSummary summary;
  for (int32_t rank = 0; rank < spec.ranks; ++rank) {
    std::string path = rank_file_path(prefix, rank, format);
    auto writer = trace::open_trace_writer(path, format, metadata);
    RankTraceBuilder out(*writer, rank);
    uint64_t last = 0;
    for (uint32_t it = 0; it < spec.iterations; ++it) {
      std::vector<uint64_t> pending;
      for (uint64_t i = 0; i < steps; ++i) {
        const std::string name = fmt::format("it{}.step{}", it, i);
        if (spec.compute_us > 0) last = out.compute(name + ".compute", spec.compute_us, 0, {last});
        // The gradient all-reduce overlaps what follows; nothing waits for it but the step's end.
        if (due(i, spec.allreduces, steps)) {
          pending.push_back(out.collective(name + ".all_reduce", CollectiveType::kAllReduce,
                                           spec.allreduce_bytes, kMoeMixAllReduceGroup, {last}));
        }
        // The token exchange is on the critical path: the next compute needs its result.
        if (due(i, spec.alltoalls, steps)) {
          last = out.collective(name + ".all_to_all", CollectiveType::kAllToAll,
                                spec.alltoall_bytes, kMoeMixAllToAllGroup, {last});
        }
      }
      pending.push_back(last);
      last = out.compute(fmt::format("it{}.end", it), 0, 0, pending);
    }
    writer->close();
    summary.ranks.push_back(out.stats());
    summary.paths.push_back(std::move(path));
  }
  summary.comm_groups_path = comm_groups_path(prefix);
  write_groups(spec.ranks, summary.comm_groups_path);
  return summary;
}

}  // namespace etwire::synth
