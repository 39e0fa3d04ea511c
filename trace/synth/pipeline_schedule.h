// The order in which a pipeline stage runs its micro-batches' forward and backward passes: the
// one-forward-one-backward (1F1B) schedule of PipeDream-Flush and Megatron-LM. Stage s of p first
// runs min(p - s - 1, m) forwards (warm-up), then alternates one forward and one backward, then
// runs the backwards left (cool-down), so at most p - s micro-batches are in flight on it.
#pragma once

#include <cstdint>
#include <vector>

namespace etwire::synth {

struct PipelineStep {
  bool forward = true;
  uint64_t micro_batch = 0;
  bool operator==(const PipelineStep&) const = default;
};

std::vector<PipelineStep> one_f_one_b(int32_t stage, int32_t stages, uint64_t micro_batches);

}  // namespace etwire::synth
