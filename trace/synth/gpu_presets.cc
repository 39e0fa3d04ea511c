#include "trace/synth/gpu_presets.h"

namespace etwire::synth {

double GpuPreset::peak_tflops(Dtype dtype) const {
  switch (dtype) {
    case Dtype::kFp32:
      return fp32_tflops;
    case Dtype::kBf16:
    case Dtype::kFp16:
      return bf16_tflops;
    case Dtype::kFp8:
      return fp8_tflops;
  }
  return bf16_tflops;
}

const std::vector<GpuPreset>& gpu_presets() {
  // The datasheets print sparse figures with an asterisk; the dense rate is half of them.
  static const std::vector<GpuPreset> presets = {
      {"a100", 156, 312, 312, "NVIDIA A100 Tensor Core GPU datasheet (SXM and PCIe, dense)"},
      {"h100-sxm", 494.5, 989.5, 1979,
       "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM column (half the sparse figures)"},
      {"h100-pcie", 378, 756, 1513,
       "NVIDIA H100 Tensor Core GPU datasheet, H100 PCIe column (half the sparse figures)"},
  };
  return presets;
}

const GpuPreset* find_gpu_preset(std::string_view name) {
  for (const auto& preset : gpu_presets()) {
    if (preset.name == name) return &preset;
  }
  return nullptr;
}

}  // namespace etwire::synth
