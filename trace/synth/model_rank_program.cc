#include "trace/synth/model_rank_program.h"

#include <fmt/format.h>

#include <algorithm>

#include "trace/synth/pipeline_schedule.h"

namespace etwire::synth {

using trace::CollectiveType;

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) {
  return (a + b - 1) / b;
}

// Pipeline messages of micro-batch mb: activations forward, their gradients backward. A tag per
// micro-batch and direction keeps the matching independent of the order the ends are issued in.
int32_t pipeline_tag(uint64_t mb, bool forward) {
  return static_cast<int32_t>(2 * mb + (forward ? 0 : 1));
}

}  // namespace

ModelRankProgram::ModelRankProgram(const ModelSpec& spec, const ModelLayout& layout,
                                   const LayerCosts& costs, RankTraceBuilder& out)
    : spec_(spec),
      costs_(costs),
      out_(out),
      stage_(layout.coords(out.rank()).p),
      layers_(spec.layers_per_stage()),
      micro_batches_(spec.micro_batches()),
      tp_group_(layout.group(out.rank(), GroupKind::kTensor)),
      dp_group_(layout.group(out.rank(), GroupKind::kData)),
      ep_group_(layout.group(out.rank(), GroupKind::kExpert)),
      edp_group_(layout.group(out.rank(), GroupKind::kExpertData)),
      dp_size_(static_cast<uint64_t>(spec.dp)),
      edp_size_(static_cast<uint64_t>(spec.dp * spec.tp / spec.ep)),
      previous_stage_(layout.previous_stage(out.rank())),
      next_stage_(layout.next_stage(out.rank())),
      gathered_(static_cast<size_t>(spec.layers_per_stage())) {
  stage_dense_bytes_ = costs.dense_bytes * static_cast<uint64_t>(layers_);
  stage_expert_bytes_ = costs.expert_bytes * static_cast<uint64_t>(layers_);
}

std::string ModelRankProgram::prefix(uint64_t mb) const {
  return fmt::format("it{}.mb{}.", iteration_, mb);
}

void ModelRankProgram::step(uint32_t iteration) {
  iteration_ = iteration;
  gradient_ops_.clear();
  dense_done_ = expert_done_ = 0;
  dense_buckets_ = expert_buckets_ = 0;
  for (const PipelineStep& s : one_f_one_b(stage_, spec_.pp, micro_batches_)) {
    if (s.forward) {
      forward(s.micro_batch);
    } else {
      backward(s.micro_batch, s.micro_batch + 1 == micro_batches_);
    }
  }
  // The optimizer needs every reduced gradient; its own time is memory-bound and not modelled.
  std::vector<uint64_t> deps = gradient_ops_;
  deps.push_back(last_);
  last_ = out_.compute(fmt::format("it{}.optimizer_step", iteration), 0, 0, deps);
}

void ModelRankProgram::forward(uint64_t mb) {
  const std::string p = prefix(mb);
  std::vector<uint64_t> inputs = {last_};
  if (previous_stage_) {
    inputs.push_back(out_.recv(p + "recv_activation", *previous_stage_, costs_.pp_message,
                               pipeline_tag(mb, true), {last_}));
  }
  if (spec_.fsdp) gathered_[0] = gather_params(0, p + "fwd");
  for (int32_t i = 0; i < layers_; ++i) {
    const std::string name = fmt::format("{}layer{}.fwd", p, global_layer(i));
    // Prefetch: the next layer's parameters are gathered while this one computes.
    if (spec_.fsdp && i + 1 < layers_) {
      gathered_[static_cast<size_t>(i + 1)] = gather_params(i + 1, p + "fwd");
    }
    std::vector<uint64_t> deps = i == 0 ? inputs : std::vector<uint64_t>{last_};
    if (spec_.fsdp) {
      const auto& g = gathered_[static_cast<size_t>(i)];
      deps.insert(deps.end(), g.begin(), g.end());
    }
    tensor_parallel_block(name + ".attention", costs_.attention, true, deps);
    if (spec_.moe()) {
      moe_block(name + ".moe", true, {last_});
    } else {
      tensor_parallel_block(name + ".mlp", costs_.mlp, true, {last_});
    }
  }
  // Sends are asynchronous: the stage goes on with its next step at once.
  if (next_stage_) {
    out_.send(p + "send_activation", *next_stage_, costs_.pp_message, pipeline_tag(mb, true),
              {last_});
  }
}

void ModelRankProgram::backward(uint64_t mb, bool last_micro_batch) {
  const std::string p = prefix(mb);
  std::vector<uint64_t> inputs = {last_};
  if (next_stage_) {
    inputs.push_back(out_.recv(p + "recv_gradient", *next_stage_, costs_.pp_message,
                               pipeline_tag(mb, false), {last_}));
  }
  if (spec_.fsdp) {
    gathered_[static_cast<size_t>(layers_ - 1)] = gather_params(layers_ - 1, p + "bwd");
  }
  for (int32_t i = layers_ - 1; i >= 0; --i) {
    const std::string name = fmt::format("{}layer{}.bwd", p, global_layer(i));
    if (spec_.fsdp && i >= 1) {
      gathered_[static_cast<size_t>(i - 1)] = gather_params(i - 1, p + "bwd");
    }
    std::vector<uint64_t> deps = i == layers_ - 1 ? inputs : std::vector<uint64_t>{last_};
    if (spec_.fsdp) {
      const auto& g = gathered_[static_cast<size_t>(i)];
      deps.insert(deps.end(), g.begin(), g.end());
    }
    // Backward runs the layer's blocks in reverse: MLP (or experts) first, then attention.
    uint64_t expert_ready = 0;
    if (spec_.moe()) {
      expert_ready = moe_block(name + ".moe", false, deps);
    } else {
      tensor_parallel_block(name + ".mlp", costs_.mlp, false, deps);
    }
    const uint64_t dense_ready =
        tensor_parallel_block(name + ".attention", costs_.attention, false, {last_});
    // Gradients are accumulated over the micro-batches and reduced once, during the last
    // micro-batch's backward, each as soon as the layers it covers are done.
    if (last_micro_batch) reduce_gradients(i, dense_ready, expert_ready);
  }
  if (previous_stage_) {
    out_.send(p + "send_gradient", *previous_stage_, costs_.pp_message, pipeline_tag(mb, false),
              {last_});
  }
}

uint64_t ModelRankProgram::tensor_parallel_block(const std::string& name, const BlockCost& cost,
                                                 bool forward, std::vector<uint64_t> deps) {
  // Forward: SP gathers the sequence shards before the block and reduce-scatters after it; plain
  // TP all-reduces the block's partial output. Backward has the same pattern: the gradient of a
  // reduce-scatter is an all-gather and the other way round; that of the all-reduce at the
  // block's input (an identity forward) is an all-reduce.
  const bool sharded = spec_.sp && tp_group_.has_value();
  if (sharded) {
    deps = {out_.collective(name + ".tp_all_gather", CollectiveType::kAllGather, costs_.tp_shard,
                            *tp_group_, deps)};
  }
  const uint64_t compute = out_.compute(name, forward ? cost.forward_us : cost.backward_us,
                                        forward ? cost.flops : 2 * cost.flops, deps);
  last_ = compute;
  if (tp_group_) {
    last_ = out_.collective(name + (sharded ? ".tp_reduce_scatter" : ".tp_all_reduce"),
                            sharded ? CollectiveType::kReduceScatter : CollectiveType::kAllReduce,
                            costs_.activation, *tp_group_, {compute});
  }
  return compute;
}

uint64_t ModelRankProgram::moe_block(const std::string& name, bool forward,
                                     std::vector<uint64_t> deps) {
  const BlockCost& router = costs_.router;
  const BlockCost& experts = costs_.experts;
  auto exchange = [&](const std::string& what, std::vector<uint64_t> after) {
    if (!ep_group_) return after;
    return std::vector<uint64_t>{out_.collective(name + "." + what + "_all_to_all",
                                                 CollectiveType::kAllToAll, costs_.alltoall,
                                                 *ep_group_, after)};
  };
  if (forward) {
    const uint64_t route = out_.compute(name + ".router", router.forward_us, router.flops, deps);
    const uint64_t expert = out_.compute(name + ".experts", experts.forward_us, experts.flops,
                                         exchange("dispatch", {route}));
    last_ = exchange("combine", {expert}).front();
    return expert;
  }
  const uint64_t expert = out_.compute(name + ".experts", experts.backward_us, 2 * experts.flops,
                                       exchange("combine", deps));
  last_ = out_.compute(name + ".router", router.backward_us, 2 * router.flops,
                       exchange("dispatch", {expert}));
  return expert;
}

std::vector<uint64_t> ModelRankProgram::gather_params(int32_t layer, const std::string& phase) {
  std::vector<uint64_t> ids;
  const std::string name = fmt::format("{}.layer{}", phase, global_layer(layer));
  // Shards are padded to equal size, as FSDP pads its flat parameters.
  if (dp_group_ && costs_.dense_bytes > 0) {
    ids.push_back(out_.collective(name + ".fsdp_all_gather", CollectiveType::kAllGather,
                                  ceil_div(costs_.dense_bytes, dp_size_), *dp_group_, {last_}));
  }
  if (edp_group_ && costs_.expert_bytes > 0) {
    ids.push_back(out_.collective(name + ".fsdp_expert_all_gather", CollectiveType::kAllGather,
                                  ceil_div(costs_.expert_bytes, edp_size_), *edp_group_, {last_}));
  }
  return ids;
}

void ModelRankProgram::reduce_gradients(int32_t layer, uint64_t dense_ready,
                                        uint64_t expert_ready) {
  const std::string it = fmt::format("it{}", iteration_);
  if (spec_.fsdp) {
    const std::string name = fmt::format("{}.layer{}", it, global_layer(layer));
    if (dp_group_ && costs_.dense_bytes > 0) {
      gradient_ops_.push_back(out_.collective(
          name + ".fsdp_reduce_scatter", CollectiveType::kReduceScatter,
          ceil_div(costs_.dense_bytes, dp_size_) * dp_size_, *dp_group_, {dense_ready}));
    }
    if (edp_group_ && costs_.expert_bytes > 0) {
      gradient_ops_.push_back(out_.collective(
          name + ".fsdp_expert_reduce_scatter", CollectiveType::kReduceScatter,
          ceil_div(costs_.expert_bytes, edp_size_) * edp_size_, *edp_group_, {expert_ready}));
    }
    return;
  }
  // DDP buckets fill with gradient bytes in the order backward produces them (last layer
  // first); a bucket is all-reduced once the layer holding its last byte is done.
  auto buckets = [&](const char* kind, const std::optional<int64_t>& group, uint64_t layer_bytes,
                     uint64_t stage_bytes, uint64_t& done, uint64_t& written, uint64_t ready) {
    done += layer_bytes;
    if (!group) return;
    const uint64_t cap = spec_.bucket_bytes;
    while (written * cap < stage_bytes) {
      const uint64_t end = std::min((written + 1) * cap, stage_bytes);
      if (end > done) break;
      gradient_ops_.push_back(
          out_.collective(fmt::format("{}.{}_bucket{}.all_reduce", it, kind, written),
                          CollectiveType::kAllReduce, end - written * cap, *group, {ready}));
      ++written;
    }
  };
  buckets("dp", dp_group_, costs_.dense_bytes, stage_dense_bytes_, dense_done_, dense_buckets_,
          dense_ready);
  buckets("edp", edp_group_, costs_.expert_bytes, stage_expert_bytes_, expert_done_,
          expert_buckets_, expert_ready);
}

}  // namespace etwire::synth
