// Peak dense tensor-core throughput of a few GPUs, per data type, from the vendor's datasheets
// (docs/synthetic-workloads.md cites them). The roofline of `etwire synth model` divides FLOPs by
// these times an efficiency.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "trace/synth/model_spec.h"

namespace etwire::synth {

struct GpuPreset {
  std::string name;
  // Dense (no structured sparsity) TFLOPS. fp32 is TF32 tensor-core math, as frameworks use for
  // fp32 matmuls on these GPUs.
  double fp32_tflops = 0;
  double bf16_tflops = 0;  // fp16 is the same on every GPU listed
  // A GPU without FP8 tensor cores runs fp8 models at its bf16 rate.
  double fp8_tflops = 0;
  std::string source;

  double peak_tflops(Dtype dtype) const;
};

const std::vector<GpuPreset>& gpu_presets();
const GpuPreset* find_gpu_preset(std::string_view name);

}  // namespace etwire::synth
