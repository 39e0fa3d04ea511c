// A synthetic microbenchmark trace set (trace/synth) for a test, which links etwire_synth.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "trace/synth/synth.h"

namespace etwire::testing {

// `iterations` of one `type` collective of `bytes` over `ranks` ranks, written under `dir`;
// returns the trace set's prefix.
inline std::string microbench_trace(const std::filesystem::path& dir, trace::CollectiveType type,
                                    uint64_t bytes, int32_t ranks, uint32_t iterations = 1) {
  synth::MicrobenchSpec spec;
  spec.collective = type;
  spec.bytes = bytes;
  spec.ranks = ranks;
  spec.iterations = iterations;
  std::filesystem::create_directories(dir);
  const std::string prefix = (dir / "t").string();
  synth::write_microbench(spec, prefix);
  return prefix;
}

}  // namespace etwire::testing
