#include "runner/sweep_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "collectives/nccl_sizes.h"
#include "collectives/tuner.h"
#include "common/exact_bytes.h"
#include "common/units.h"
#include "outputs/results_files.h"
#include "trace/node.h"

namespace etwire::runner {

namespace {

using collectives::CollectiveKind;

// The names `synth microbench -c` takes, barrier left out.
std::vector<std::string> collective_names() {
  std::vector<std::string> names;
  for (int t = 0; t < trace::kCollectiveTypeCount; ++t) {
    const auto type = static_cast<trace::CollectiveType>(t);
    if (type == trace::CollectiveType::kBarrier) continue;
    std::string name(trace::collective_type_name(type));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    names.push_back(std::move(name));
  }
  names.emplace_back("send_recv");
  return names;
}

std::string algorithm_list(CollectiveKind kind) {
  std::vector<std::string_view> names;
  for (auto algorithm : collectives::applicable_algorithms(kind)) {
    names.push_back(collectives::algorithm_name(algorithm));
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

// Comma-separated items, blanks around them ignored; an empty item is an error.
std::vector<std::string> split_list(const std::string& text, const std::string& flag) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty()) {
      throw SweepInputError(
          fmt::format("{}: \"{}\" has an empty item; give names separated by "
                      "commas, such as all_reduce,all_gather",
                      flag, text));
    }
    items.push_back(std::move(item));
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

// The largest buffer a sweep runs. nccl-tests sweeps buffers that fit a GPU's memory beside
// their output (8 to 16 GiB on today's largest); and each size is a run of its own in which
// every packet is an event on the twin: a 16 GiB all-reduce over 100 Gb/s ports already takes
// minutes, one of a TiB would take days.
constexpr uint64_t kMaxSweepBytes = uint64_t{16} << 30;

uint64_t read_bytes(const std::string& text, const std::string& flag) {
  const auto bytes = parse_bytes(text);
  if (!bytes) {
    throw SweepInputError(
        fmt::format("{}: \"{}\" is not a byte size (e.g. 8, 4096, 64KiB, 1GiB)", flag, text));
  }
  if (*bytes == 0)
    throw SweepInputError(fmt::format("{}: a size of 0 bytes measures nothing", flag));
  return *bytes;
}

// "1000 -> 896, 2000 -> 1920": the sizes rounding changed, at most a few.
std::string changed_sizes(const std::vector<std::pair<uint64_t, uint64_t>>& changed) {
  constexpr size_t kShown = 4;
  std::vector<std::string> shown;
  for (size_t i = 0; i < changed.size() && i < kShown; ++i) {
    shown.push_back(fmt::format("{} -> {}", changed[i].first, changed[i].second));
  }
  std::string text = fmt::format("{}", fmt::join(shown, ", "));
  if (changed.size() > kShown) text += fmt::format(" and {} more", changed.size() - kShown);
  return text;
}

}  // namespace

size_t SweepPlan::points() const {
  size_t n = 0;
  for (const SweepSeries& s : series) n += s.sizes.size();
  return n;
}

SweepRequest read_sweep_flags(const SweepFlags& flags) {
  SweepRequest request;
  for (const std::string& name : split_list(flags.collectives, "-c/--collectives")) {
    CollectiveKind kind;
    if (name == "send_recv" || name == "sendrecv") {
      kind = std::nullopt;
    } else if (auto type = trace::parse_collective_type(name)) {
      if (*type == trace::CollectiveType::kBarrier) {
        throw SweepInputError(
            "-c/--collectives: barrier moves no payload, so a sweep over sizes does not apply to "
            "it");
      }
      kind = *type;
    } else {
      throw SweepInputError(fmt::format("-c/--collectives: unknown collective \"{}\" (known: {})",
                                        name, fmt::join(collective_names(), ", ")));
    }
    if (std::find(request.kinds.begin(), request.kinds.end(), kind) == request.kinds.end()) {
      request.kinds.push_back(kind);
    }
  }
  if (!flags.algorithms.empty()) {
    for (const std::string& name : split_list(flags.algorithms, "-a/--algorithms")) {
      if (name == "auto") {
        request.tuned = true;
        continue;
      }
      const auto algorithm = collectives::parse_algorithm(name);
      if (!algorithm) {
        throw SweepInputError(
            fmt::format("-a/--algorithms: unknown algorithm \"{}\" (known: {}, auto)", name,
                        collectives::algorithm_names()));
      }
      if (std::find(request.algorithms.begin(), request.algorithms.end(), *algorithm) ==
          request.algorithms.end()) {
        request.algorithms.push_back(*algorithm);
      }
    }
  }
  request.min_bytes = read_bytes(flags.min_bytes, "-b/--min-bytes");
  request.max_bytes = read_bytes(flags.max_bytes, "-e/--max-bytes");
  if (request.max_bytes > kMaxSweepBytes) {
    throw SweepInputError(fmt::format("-e/--max-bytes {}: at most {}", flags.max_bytes,
                                      format_bytes_exact(kMaxSweepBytes)));
  }
  if (request.min_bytes > request.max_bytes) {
    throw SweepInputError(fmt::format(
        "-b/--min-bytes {} is above -e/--max-bytes {}: the sweep goes from the first to the "
        "second",
        flags.min_bytes, flags.max_bytes));
  }
  if (flags.step_factor < 2) {
    throw SweepInputError(fmt::format(
        "-f/--step-factor {}: expected 2 or more (each size is the previous one times the factor)",
        flags.step_factor));
  }
  request.step_factor = flags.step_factor;
  request.sizes =
      collectives::stepped_sizes(request.min_bytes, request.max_bytes, request.step_factor);
  return request;
}

SweepPlan plan_sweep(const SweepRequest& request, uint32_t ranks,
                     const config::CollectivesConfig& collectives) {
  SweepPlan plan;
  for (const CollectiveKind kind : request.kinds) {
    if (!kind && ranks < 2) {
      throw SweepInputError(fmt::format(
          "-c/--collectives: send_recv needs 2 ranks or more; the configuration's first job has {}",
          ranks));
    }
    std::vector<collectives::Algorithm> algorithms;
    const bool tunable = kind && !collectives::tuner_algorithms(*kind).empty();
    // Without -a: the configuration's algorithm, `auto` among them.
    bool tuned =
        request.algorithms.empty() && !request.tuned && kind && collectives.algorithm_tuned(*kind);
    if (request.algorithms.empty() && !request.tuned && !tuned) {
      std::optional<collectives::Algorithm> configured;
      if (kind) configured = collectives.algorithm_for(*kind);
      algorithms.push_back(configured.value_or(collectives::default_algorithm(kind)));
    }
    if (request.tuned && tunable) {
      tuned = true;
    } else if (request.tuned) {
      plan.notes.push_back(
          fmt::format("auto does not run {}: NCCL's tuner chooses for all_reduce, all_gather and "
                      "reduce_scatter only: left out",
                      outputs::collective_type_label(kind)));
    }
    for (const collectives::Algorithm algorithm : request.algorithms) {
      if (collectives::is_applicable(algorithm, kind)) {
        algorithms.push_back(algorithm);
      } else {
        plan.notes.push_back(fmt::format(
            "{} does not run {} (it runs {}): left out", collectives::algorithm_name(algorithm),
            outputs::collective_type_label(kind), algorithm_list(kind)));
      }
    }
    std::vector<std::pair<uint64_t, uint64_t>> sizes, changed;
    std::vector<uint64_t> dropped;
    for (const uint64_t size : request.sizes) {
      const uint64_t rounded = collectives::nccl_rounded_bytes(kind, size, ranks);
      if (rounded != size) changed.emplace_back(size, rounded);
      if (rounded == 0 || (!sizes.empty() && sizes.back().second == rounded)) {
        dropped.push_back(size);
        continue;
      }
      sizes.emplace_back(size, rounded);
    }
    if (!changed.empty()) {
      const bool blocks = collectives::is_block_collective(kind);
      plan.notes.push_back(fmt::format(
          "{}: {} size{} rounded down, as nccl-tests rounds them, to {}: {}",
          outputs::collective_type_label(kind), changed.size(), changed.size() == 1 ? "" : "s",
          blocks ? fmt::format("{} blocks of a multiple of {} bytes (one per rank)", ranks,
                               collectives::kNcclBlockAlignment)
                 : fmt::format("whole {}-byte elements", collectives::kNcclElementBytes),
          changed_sizes(changed)));
    }
    if (sizes.empty()) {
      throw SweepInputError(fmt::format(
          "-b/--min-bytes, -e/--max-bytes: every size rounds to 0 bytes for {} over {} ranks; it "
          "needs at least {} bytes",
          outputs::collective_type_label(kind), ranks,
          collectives::is_block_collective(kind) ? ranks * collectives::kNcclBlockAlignment
                                                 : collectives::kNcclElementBytes));
    }
    if (!dropped.empty()) {
      plan.notes.push_back(fmt::format("{}: {} left out: {} to nothing or to a size already swept",
                                       outputs::collective_type_label(kind),
                                       fmt::join(dropped, ", "),
                                       dropped.size() == 1 ? "it rounds" : "they round"));
    }
    for (const collectives::Algorithm algorithm : algorithms) {
      plan.series.push_back({kind, algorithm, false, sizes});
    }
    if (tuned) plan.series.push_back({kind, collectives::Algorithm::kRing, true, sizes});
  }
  if (plan.series.empty()) {
    std::vector<std::string> lists;
    for (const CollectiveKind kind : request.kinds) {
      lists.push_back(
          fmt::format("{}: {}", outputs::collective_type_label(kind), algorithm_list(kind)));
    }
    throw SweepInputError(fmt::format(
        "-a/--algorithms: none of them runs the collectives swept ({})", fmt::join(lists, "; ")));
  }
  return plan;
}

}  // namespace etwire::runner
