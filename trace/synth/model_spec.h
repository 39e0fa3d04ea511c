// What `etwire synth model` generates: the shape of a transformer, how it is parallelised, and
// how fast its GPUs compute. Named presets fill in the shape; explicit settings override them.
// docs/synthetic-workloads.md states every rule and formula that turns this into traces.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etwire::synth {

enum class Dtype { kFp32, kBf16, kFp16, kFp8 };

// "fp32", "bf16", "fp16", "fp8" (any case); nullopt otherwise.
std::optional<Dtype> parse_dtype(std::string_view text);
std::string_view dtype_name(Dtype dtype);
uint64_t dtype_bytes(Dtype dtype);

struct ModelSpec {
  // Parallelism. Ranks = dp x tp x pp; expert parallelism is carved from the dp x tp ranks of a
  // pipeline stage, so it adds no ranks.
  int32_t dp = 1;
  int32_t tp = 1;
  int32_t pp = 1;
  int32_t ep = 1;
  // Shape.
  int32_t layers = 1;
  uint64_t hidden = 1024;
  uint64_t ffn_hidden = 0;  // 0 = 4 x hidden
  bool gated_mlp = false;   // SwiGLU: three MLP matrices (gate, up, down) instead of two
  // Attention heads only matter through kv_heads / heads (grouped-query attention shrinks the K
  // and V projections); 0 = multi-head attention.
  int32_t heads = 0;
  int32_t kv_heads = 0;  // 0 = heads
  uint64_t seq_len = 2048;
  uint64_t micro_batch = 1;
  uint64_t global_batch = 0;  // sequences per step; 0 = micro_batch x dp (one micro-batch)
  Dtype dtype = Dtype::kBf16;
  // Tensor parallelism with sequence parallelism: all-gather + reduce-scatter in place of each
  // all-reduce, activations between blocks sharded over the sequence.
  bool sp = false;
  // Mixture of experts: every layer's MLP is `experts` experts of which each token visits top_k.
  // 0 = dense, unless ep > 1 (then experts = ep).
  int32_t experts = 0;
  int32_t top_k = 2;
  double capacity_factor = 1.0;
  // Data parallelism as fully sharded parameters (one unit per layer) instead of replicated
  // parameters with bucketed gradient all-reduces.
  bool fsdp = false;
  uint64_t bucket_bytes = 25ull << 20;
  uint32_t iterations = 1;
  // Compute speed: peak TFLOPS of the GPU preset for the dtype, unless peak_tflops is set.
  std::string gpu = "h100-sxm";
  std::optional<double> peak_tflops;
  double efficiency = 0.5;

  int32_t ranks() const { return dp * tp * pp; }
  int32_t expert_count() const { return experts > 0 ? experts : (ep > 1 ? ep : 0); }
  bool moe() const { return expert_count() > 0; }
  uint64_t ffn() const { return ffn_hidden > 0 ? ffn_hidden : 4 * hidden; }
  uint64_t micro_batches() const;  // global_batch / (micro_batch x dp), at least 1
  int32_t layers_per_stage() const { return layers / pp; }
};

// A spec that cannot be generated: the flag (without dashes) and why.
struct SpecProblem {
  std::string flag;
  std::string message;
};

// Checks every rule of docs/synthetic-workloads.md ("Bad input"); nullopt when the spec is valid.
std::optional<SpecProblem> validate(const ModelSpec& spec);

// A named model shape: what it sets and where its numbers come from.
struct ModelPreset {
  std::string name;
  std::string description;
  void (*apply)(ModelSpec& spec);
};

const std::vector<ModelPreset>& model_presets();
const ModelPreset* find_model_preset(std::string_view name);

}  // namespace etwire::synth
