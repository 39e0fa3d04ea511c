#include "trace/synth/pipeline_schedule.h"

#include <algorithm>

namespace etwire::synth {

std::vector<PipelineStep> one_f_one_b(int32_t stage, int32_t stages, uint64_t micro_batches) {
  const auto warmup =
      std::min<uint64_t>(static_cast<uint64_t>(std::max(stages - stage - 1, 0)), micro_batches);
  std::vector<PipelineStep> steps;
  steps.reserve(2 * micro_batches);
  for (uint64_t mb = 0; mb < warmup; ++mb) steps.push_back({true, mb});
  for (uint64_t i = 0; i + warmup < micro_batches; ++i) {
    steps.push_back({true, warmup + i});
    steps.push_back({false, i});
  }
  for (uint64_t mb = micro_batches - warmup; mb < micro_batches; ++mb) steps.push_back({false, mb});
  return steps;
}

}  // namespace etwire::synth
