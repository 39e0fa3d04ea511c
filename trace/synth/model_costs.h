// The sizes and compute times of one transformer layer on one rank, from the model's shape: what
// each collective and send moves, how many parameters (and so gradient bytes) a rank holds, and
// how long each compute block takes on the roofline FLOPs / (peak x efficiency).
// docs/synthetic-workloads.md derives every formula.
#pragma once

#include <cstdint>

#include "trace/synth/model_spec.h"

namespace etwire::synth {

// FLOPs and microseconds of one compute block, forward and backward (backward = 2 x forward).
struct BlockCost {
  double flops = 0;  // forward, per rank, per micro-batch
  uint64_t forward_us = 0;
  uint64_t backward_us = 0;
};

struct LayerCosts {
  // Bytes, per rank and micro-batch. `activation` is micro_batch x seq_len x hidden x dtype bytes.
  uint64_t activation = 0;
  uint64_t tp_shard = 0;    // activation / tp: what each rank contributes to an SP all-gather
  uint64_t pp_message = 0;  // a stage boundary's send: the shard with SP, else the activation
  uint64_t tokens = 0;      // tokens a rank routes to experts: b x s, / tp with SP
  uint64_t capacity = 0;    // token slots a rank sends to experts: ceil(tokens x top_k x cf)
  uint64_t alltoall = 0;    // capacity x hidden x dtype bytes, each dispatch and combine

  // Parameters a rank holds per layer. "Dense" covers what is replicated over the data-parallel
  // group (attention, and the MLP of a dense model); "expert" the rank's experts, replicated over
  // the expert-data-parallel group. Parameters and their gradients are both in the model's dtype,
  // so the bytes serve FSDP's parameter all-gathers and every gradient reduction alike.
  uint64_t dense_params = 0;
  uint64_t expert_params = 0;
  uint64_t dense_bytes = 0;
  uint64_t expert_bytes = 0;

  BlockCost attention;
  BlockCost mlp;     // dense models
  BlockCost router;  // MoE models
  BlockCost experts;

  double peak_tflops = 0;  // the rate durations were computed at (before efficiency)
};

LayerCosts layer_costs(const ModelSpec& spec);

// Parameters of the whole model's layers (embeddings and output layer left out, as everywhere
// in the generator).
uint64_t model_params(const ModelSpec& spec);

// Microseconds for `flops` at `tflops`: rounded to the nearest microsecond, at least 1 for any
// work at all (a trace's durations are whole microseconds).
uint64_t roofline_us(double flops, double tflops);

}  // namespace etwire::synth
