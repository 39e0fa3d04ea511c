#include "trace/synth/model_costs.h"

#include <algorithm>
#include <cmath>

#include "trace/synth/gpu_presets.h"

namespace etwire::synth {

namespace {

// Weights of the attention block: Q and O are hidden x hidden, K and V hidden x kv_width, where
// kv_width = hidden x kv_heads / heads (grouped-query attention), hidden without heads given.
uint64_t attention_params(const ModelSpec& spec) {
  const uint64_t h = spec.hidden;
  uint64_t kv_width = h;
  if (spec.heads > 0) {
    const auto kv = static_cast<uint64_t>(spec.kv_heads > 0 ? spec.kv_heads : spec.heads);
    kv_width = h / static_cast<uint64_t>(spec.heads) * kv;
  }
  return 2 * h * h + 2 * h * kv_width;
}

// Weights of one MLP (or one expert): two matrices hidden x ffn, three with a gated MLP.
uint64_t mlp_params(const ModelSpec& spec) {
  return (spec.gated_mlp ? 3 : 2) * spec.hidden * spec.ffn();
}

BlockCost block(double flops, double tflops, double efficiency) {
  BlockCost cost;
  cost.flops = flops;
  cost.forward_us = roofline_us(flops, tflops * efficiency);
  cost.backward_us = roofline_us(2 * flops, tflops * efficiency);
  return cost;
}

}  // namespace

uint64_t roofline_us(double flops, double tflops) {
  if (flops <= 0) return 0;
  // TFLOPS = 1e12 FLOP/s, so FLOPs / (TFLOPS x 1e6) is microseconds.
  const double us = flops / (tflops * 1e6);
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(us)));
}

LayerCosts layer_costs(const ModelSpec& spec) {
  LayerCosts c;
  const uint64_t bytes = dtype_bytes(spec.dtype);
  const auto tp = static_cast<uint64_t>(spec.tp);
  const uint64_t b = spec.micro_batch;
  const uint64_t s = spec.seq_len;
  const uint64_t h = spec.hidden;
  const bool sharded = spec.sp && spec.tp > 1;

  c.activation = b * s * h * bytes;
  c.tp_shard = c.activation / tp;
  c.pp_message = sharded ? c.tp_shard : c.activation;

  c.peak_tflops =
      spec.peak_tflops ? *spec.peak_tflops : find_gpu_preset(spec.gpu)->peak_tflops(spec.dtype);
  const double rate = c.peak_tflops;
  const double eff = spec.efficiency;
  const auto bs = static_cast<double>(b * s);

  // Attention: the four projections (2 FLOPs per weight per token) plus the score and context
  // matmuls, 2 x b x s^2 x h each; all split over the tensor-parallel ranks.
  const double attention_flops = (2 * bs * static_cast<double>(attention_params(spec)) +
                                  4 * bs * static_cast<double>(s) * static_cast<double>(h)) /
                                 static_cast<double>(tp);
  c.attention = block(attention_flops, rate, eff);
  c.dense_params = attention_params(spec) / tp;

  if (!spec.moe()) {
    c.mlp =
        block(2 * bs * static_cast<double>(mlp_params(spec)) / static_cast<double>(tp), rate, eff);
    c.dense_params += mlp_params(spec) / tp;
  } else {
    const auto experts = static_cast<uint64_t>(spec.expert_count());
    // With tensor parallelism (which needs SP here) each rank routes its own sequence shard.
    c.tokens = sharded ? b * s / tp : b * s;
    c.capacity = static_cast<uint64_t>(std::ceil(
        static_cast<double>(c.tokens * static_cast<uint64_t>(spec.top_k)) * spec.capacity_factor -
        1e-9));
    c.alltoall = c.capacity * h * bytes;
    c.router = block(2 * static_cast<double>(c.tokens * h * experts), rate, eff);
    // Balanced routing: every rank's experts receive as many token slots as it sends.
    c.experts = block(2 * static_cast<double>(c.capacity) * static_cast<double>(mlp_params(spec)),
                      rate, eff);
    c.expert_params = experts / static_cast<uint64_t>(spec.ep) * mlp_params(spec);
  }
  c.dense_bytes = c.dense_params * bytes;
  c.expert_bytes = c.expert_params * bytes;
  return c;
}

uint64_t model_params(const ModelSpec& spec) {
  uint64_t per_layer = attention_params(spec);
  if (spec.moe()) {
    const auto experts = static_cast<uint64_t>(spec.expert_count());
    per_layer += experts * mlp_params(spec) + spec.hidden * experts;  // experts and router
  } else {
    per_layer += mlp_params(spec);
  }
  return per_layer * static_cast<uint64_t>(spec.layers);
}

}  // namespace etwire::synth
