// The results of a run split across several emulator processes (MPI). Each process's engine
// replays some of the trace ranks and drives some of the ports, so its RunResults is partial: the
// collectives its ranks joined, its ranks' share of each iteration, its ports' counters. Each
// process serializes its part; process 0 merges them into the RunResults one process would have
// produced, and writes the result files from that.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "clock/time.h"
#include "engine/result_fields.h"
#include "engine/run_results.h"

namespace etwire::engine {

// What one emulator process contributes to the results of a split run.
struct PartialResults {
  RunResults results;  // this process's results (its ranks' records, its ports' counters)
  // FCT samples of measured flows by collective kind index (trace::kCollectiveTypeCount + 1
  // entries; the last is point-to-point), as the engine keeps them. Percentiles do not merge, the
  // samples do.
  std::vector<std::vector<clock::Nanos>> fct_samples;
  // Parallel to results.collectives: how many of each instance's members this process replayed.
  // An instance is complete in the run when the processes' counts add up to its group size.
  std::vector<uint32_t> members_here;
  std::vector<std::vector<uint8_t>>
      ranks_here;                   // per job, per rank: 1 when this process replays it
  std::vector<uint8_t> ports_here;  // per port: 1 when this process drives it
  // Each timestamp t of this part is t x time_scale + time_shift on process 0's time base
  // (to_reference_time): the scale corrects the rate of the process's run clock against the
  // clock the offsets were measured with.
  double time_scale = 1.0;
  clock::Nanos time_shift = 0;
  std::string host;      // the host the process ran on
  std::string emulator;  // its emulator name (may be empty)

  bool operator==(const PartialResults&) const = default;
};

// Between processes only.
template <>
struct ResultFields<PartialResults> {
  static constexpr auto list = std::tuple{
      field<InSummary::kNo>("results", &PartialResults::results),
      field<InSummary::kNo>("fct_samples", &PartialResults::fct_samples),
      field<InSummary::kNo>("members_here", &PartialResults::members_here),
      field<InSummary::kNo>("ranks_here", &PartialResults::ranks_here),
      field<InSummary::kNo>("ports_here", &PartialResults::ports_here),
      field<InSummary::kNo>("time_scale", &PartialResults::time_scale),
      field<InSummary::kNo>("time_shift", &PartialResults::time_shift),
      field<InSummary::kNo>("host", &PartialResults::host),
      field<InSummary::kNo>("emulator", &PartialResults::emulator),
  };
};
static_assert(lists_every_member<PartialResults>(), "every PartialResults member needs its entry");

// A timestamp of a part on process 0's time base; kNever stays kNever.
inline clock::Nanos to_reference_time(clock::Nanos t, double scale, clock::Nanos shift) {
  if (t == clock::kNever) return t;
  return static_cast<clock::Nanos>(std::llround(static_cast<double>(t) * scale)) + shift;
}

// A length-prefixed little-endian binary encoding, led by a magic and a version.
std::string serialize_partial(const PartialResults& part);
// Throws std::runtime_error("partial results: ...") naming what is malformed (truncated, a count
// larger than the bytes left, a value out of range). Allocates no more than the input can fill.
PartialResults deserialize_partial(std::string_view bytes);

// One RunResults as a single process would have produced it: times on process 0's time base,
// instances kept only when every process that replays one of their members completed them, each
// port's record from the process that drives it, FCT percentiles over every process's samples.
// Throws std::invalid_argument when `parts` is empty.
// `numbers`, when given, receives per part the merged number of each of its instances (by the
// part's own instance number), for the flow records that name them.
using InstanceNumbers = std::unordered_map<uint64_t, uint64_t>;
RunResults merge_partials(std::vector<PartialResults> parts,
                          std::vector<InstanceNumbers>* numbers = nullptr);

}  // namespace etwire::engine
