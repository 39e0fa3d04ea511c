// The dependency graph one rank of a synthetic transformer runs per training step: its pipeline
// stage's 1F1B sequence of forward and backward passes, each layer's compute blocks with the
// tensor-parallel and expert-parallel collectives on their critical path, the pipeline's sends
// and receives, and the data-parallel gradient traffic overlapping the backward pass.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace/synth/model_costs.h"
#include "trace/synth/model_layout.h"
#include "trace/synth/model_spec.h"
#include "trace/synth/rank_trace_builder.h"

namespace etwire::synth {

class ModelRankProgram {
 public:
  ModelRankProgram(const ModelSpec& spec, const ModelLayout& layout, const LayerCosts& costs,
                   RankTraceBuilder& out);

  // Writes one training step; steps chain through their optimizer node.
  void step(uint32_t iteration);

 private:
  void forward(uint64_t mb);
  void backward(uint64_t mb, bool last_micro_batch);

  // One attention or dense MLP block: its compute with the tensor-parallel collectives around it
  // (an all-reduce after; with SP an all-gather before and a reduce-scatter after). Returns the
  // compute node (the one that produces weight gradients in backward) and moves last_ on.
  uint64_t tensor_parallel_block(const std::string& name, const BlockCost& cost, bool forward,
                                 std::vector<uint64_t> deps);
  // The MoE block: router, dispatch all-to-all, experts, combine all-to-all (backward: combine's
  // gradient, experts, dispatch's gradient, router). Returns the experts' compute node.
  uint64_t moe_block(const std::string& name, bool forward, std::vector<uint64_t> deps);

  // FSDP: the all-gathers of a layer's parameter shards (dense part on the DP group, experts on
  // the EDP group); the node ids, none where the group is absent.
  std::vector<uint64_t> gather_params(int32_t layer, const std::string& phase);
  // After a layer's backward in the last micro-batch: FSDP reduce-scatters, or the DDP buckets
  // that this layer's gradients complete.
  void reduce_gradients(int32_t layer, uint64_t dense_ready, uint64_t expert_ready);

  std::string prefix(uint64_t mb) const;
  int32_t global_layer(int32_t index) const { return stage_ * layers_ + index; }

  const ModelSpec& spec_;
  const LayerCosts& costs_;
  RankTraceBuilder& out_;
  int32_t stage_;
  int32_t layers_;  // per stage
  uint64_t micro_batches_;
  std::optional<int64_t> tp_group_, dp_group_, ep_group_, edp_group_;
  uint64_t dp_size_ = 1, edp_size_ = 1;
  std::optional<int32_t> previous_stage_, next_stage_;

  uint32_t iteration_ = 0;
  uint64_t last_ = 0;  // the compute stream's latest node: what the next block waits for
  // Gradient traffic the optimizer step waits for.
  std::vector<uint64_t> gradient_ops_;
  // FSDP: by layer index within the stage, the all-gathers its next pass waits for.
  std::vector<std::vector<uint64_t>> gathered_;
  // DDP buckets: gradient bytes produced so far in this step's backward and buckets written.
  uint64_t dense_done_ = 0, expert_done_ = 0;
  uint64_t dense_buckets_ = 0, expert_buckets_ = 0;
  uint64_t stage_dense_bytes_ = 0, stage_expert_bytes_ = 0;
};

}  // namespace etwire::synth
