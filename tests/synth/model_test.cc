// `synth model`: the traces it writes hold, per rank, the collectives and point-to-point
// operations the rules of docs/synthetic-workloads.md give, counted by reading the files back
// and compared with the formulas worked out by hand for each configuration.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/testing/test_paths.h"
#include "trace/node_source.h"
#include "trace/synth/model_writer.h"
#include "trace/synth/pipeline_schedule.h"

namespace etwire::synth {
namespace {

using trace::CollectiveType;
using trace::NodeType;
using trace::TraceNode;

// What one rank's file holds, read back through the project's reader.
struct RankOps {
  std::map<CollectiveType, std::multiset<uint64_t>> collectives;  // sizes by type
  std::multiset<uint64_t> sends, recvs;
  std::map<std::string, std::set<CollectiveType>> types_by_pg;
  std::vector<TraceNode> nodes;

  size_t count(CollectiveType type) const {
    auto it = collectives.find(type);
    return it == collectives.end() ? 0 : it->second.size();
  }
  // Every collective of this type has this size.
  bool all_sized(CollectiveType type, uint64_t bytes) const {
    auto it = collectives.find(type);
    if (it == collectives.end()) return false;
    return std::all_of(it->second.begin(), it->second.end(),
                       [bytes](uint64_t b) { return b == bytes; });
  }
};

RankOps read_rank(const std::string& path) {
  RankOps ops;
  auto source = trace::open_node_source(path);
  TraceNode node;
  while (source->next(node)) {
    if (node.type == NodeType::kCommColl) {
      ops.collectives[*node.comm.coll_type].insert(*node.comm.size);
      ops.types_by_pg[node.comm.pg_name.value_or("")].insert(*node.comm.coll_type);
    } else if (node.type == NodeType::kCommSend) {
      ops.sends.insert(*node.comm.size);
    } else if (node.type == NodeType::kCommRecv) {
      ops.recvs.insert(*node.comm.size);
    }
    ops.nodes.push_back(node);
  }
  return ops;
}

std::map<int64_t, std::vector<int32_t>> read_groups(const std::string& path) {
  std::ifstream in(path);
  auto doc = nlohmann::json::parse(in);
  std::map<int64_t, std::vector<int32_t>> groups;
  for (const auto& [key, value] : doc.items()) {
    groups[std::stoll(key)] = value.get<std::vector<int32_t>>();
  }
  return groups;
}

std::multiset<uint64_t> repeated(size_t n, uint64_t value) {
  std::multiset<uint64_t> values;
  for (size_t i = 0; i < n; ++i) values.insert(value);
  return values;
}

struct Written {
  ModelSummary summary;
  std::vector<RankOps> ranks;
  std::map<int64_t, std::vector<int32_t>> groups;
};

Written generate(const ModelSpec& spec, const std::string& tag) {
  auto dir = etwire::testing::make_scratch_dir("synth_model");
  Written w;
  w.summary = write_model(spec, (dir / tag).string());
  EXPECT_EQ(w.summary.paths.size(), static_cast<size_t>(spec.ranks()));
  for (const auto& path : w.summary.paths) w.ranks.push_back(read_rank(path));
  w.groups = read_groups(w.summary.comm_groups_path);
  // Every collective names a group of the file that holds its rank, and the summary counted
  // what the file holds.
  for (size_t r = 0; r < w.ranks.size(); ++r) {
    for (const auto& [pg, types] : w.ranks[r].types_by_pg) {
      const auto& members = w.groups.at(std::stoll(pg));
      EXPECT_THAT(members, ::testing::Contains(static_cast<int32_t>(r))) << "group " << pg;
    }
    const RankOpStats& stats = w.summary.ranks[r];
    for (const auto& [type, sizes] : w.ranks[r].collectives) {
      EXPECT_EQ(stats.collectives[static_cast<size_t>(type)].count, sizes.size());
    }
    EXPECT_EQ(stats.sends.count, w.ranks[r].sends.size());
    EXPECT_EQ(stats.recvs.count, w.ranks[r].recvs.size());
    EXPECT_EQ(stats.nodes, w.ranks[r].nodes.size());
  }
  return w;
}

ModelSpec small() {
  ModelSpec spec;
  spec.hidden = 128;
  spec.seq_len = 64;
  spec.micro_batch = 1;
  spec.layers = 2;
  return spec;
}

TEST(SynthModel, TensorParallelAllReducesTwicePerLayerEachWay) {
  ModelSpec spec = small();
  spec.tp = 4;
  spec.layers = 3;
  spec.hidden = 256;
  spec.micro_batch = 2;
  auto w = generate(spec, "tp");
  const uint64_t activation = 2 * 64 * 256 * 2;  // b x s x h x bf16
  ASSERT_EQ(w.groups.size(), 1u);
  EXPECT_EQ(w.groups.at(1), (std::vector<int32_t>{0, 1, 2, 3}));
  for (const auto& r : w.ranks) {
    // 2 forward + 2 backward per layer, 3 layers, 1 micro-batch.
    EXPECT_EQ(r.count(CollectiveType::kAllReduce), 12u);
    EXPECT_TRUE(r.all_sized(CollectiveType::kAllReduce, activation));
    EXPECT_EQ(r.collectives.size(), 1u);
    EXPECT_TRUE(r.sends.empty() && r.recvs.empty());
  }
}

TEST(SynthModel, SequenceParallelGathersAndScattersInsteadOfAllReduce) {
  ModelSpec spec = small();
  spec.tp = 2;
  spec.sp = true;
  auto w = generate(spec, "sp");
  const uint64_t activation = 64 * 128 * 2;
  for (const auto& r : w.ranks) {
    EXPECT_EQ(r.count(CollectiveType::kAllReduce), 0u);
    // One all-gather (the shard each rank holds) and one reduce-scatter (the full input) per
    // block each way: 4 of each per layer.
    EXPECT_EQ(r.count(CollectiveType::kAllGather), 8u);
    EXPECT_TRUE(r.all_sized(CollectiveType::kAllGather, activation / 2));
    EXPECT_EQ(r.count(CollectiveType::kReduceScatter), 8u);
    EXPECT_TRUE(r.all_sized(CollectiveType::kReduceScatter, activation));
  }
}

TEST(SynthModel, DataParallelBucketsFollowTheBackwardAndDoNotBlockIt) {
  ModelSpec spec = small();
  spec.dp = 4;
  spec.layers = 4;
  spec.bucket_bytes = 500000;
  auto w = generate(spec, "dp");
  // 12 h^2 parameters per layer in bf16 = 393,216 bytes; 4 layers = 1,572,864 bytes: buckets of
  // 500,000 bytes, the last 72,864.
  const uint64_t layer_bytes = 12 * 128 * 128 * 2;
  EXPECT_EQ(w.summary.costs.dense_bytes, layer_bytes);
  ASSERT_EQ(w.groups.size(), 1u);
  EXPECT_EQ(w.groups.at(1), (std::vector<int32_t>{0, 1, 2, 3}));
  for (const auto& r : w.ranks) {
    EXPECT_EQ(r.collectives.at(CollectiveType::kAllReduce),
              (std::multiset<uint64_t>{500000, 500000, 500000, 72864}));
    std::map<uint64_t, const TraceNode*> by_id;
    for (const auto& n : r.nodes) by_id[n.id] = &n;
    std::vector<std::string> ready_after;
    std::set<uint64_t> buckets;
    for (const auto& n : r.nodes) {
      if (n.type != NodeType::kCommColl) continue;
      buckets.insert(n.id);
      // Its gradients are ready after that layer's backward weight-gradient compute.
      for (uint64_t dep : n.data_deps) {
        if (by_id.at(dep)->type == NodeType::kComp) ready_after.push_back(by_id.at(dep)->name);
      }
    }
    // Backward produces layer 3's bytes first: bucket 0 ends inside layer 2, bucket 1 inside
    // layer 1, buckets 2 and 3 inside layer 0.
    EXPECT_EQ(ready_after, (std::vector<std::string>{
                               "it0.mb0.layer2.bwd.attention", "it0.mb0.layer1.bwd.attention",
                               "it0.mb0.layer0.bwd.attention", "it0.mb0.layer0.bwd.attention"}));
    // Overlap: no compute waits for a bucket but the optimizer step.
    for (const auto& n : r.nodes) {
      if (n.type != NodeType::kComp) continue;
      for (uint64_t dep : n.data_deps) {
        if (buckets.count(dep)) {
          EXPECT_EQ(n.name, "it0.optimizer_step");
        }
      }
    }
  }
}

TEST(SynthModel, PipelineRunsOneForwardOneBackward) {
  EXPECT_EQ(one_f_one_b(0, 4, 6), (std::vector<PipelineStep>{{true, 0},
                                                             {true, 1},
                                                             {true, 2},
                                                             {true, 3},
                                                             {false, 0},
                                                             {true, 4},
                                                             {false, 1},
                                                             {true, 5},
                                                             {false, 2},
                                                             {false, 3},
                                                             {false, 4},
                                                             {false, 5}}));
  EXPECT_EQ(one_f_one_b(3, 4, 2),
            (std::vector<PipelineStep>{{true, 0}, {false, 0}, {true, 1}, {false, 1}}));
  // Fewer micro-batches than the warm-up wants: all forwards, then all backwards.
  EXPECT_EQ(one_f_one_b(0, 4, 2),
            (std::vector<PipelineStep>{{true, 0}, {true, 1}, {false, 0}, {false, 1}}));

  ModelSpec spec = small();
  spec.pp = 4;
  spec.layers = 4;
  spec.global_batch = 6;  // 6 micro-batches of 1
  auto w = generate(spec, "pp");
  EXPECT_TRUE(w.groups.empty());
  const uint64_t activation = 64 * 128 * 2;
  for (int32_t stage = 0; stage < 4; ++stage) {
    const auto& r = w.ranks[static_cast<size_t>(stage)];
    EXPECT_TRUE(r.collectives.empty());
    // An end stage talks to one neighbour, a middle one to two: activations one way, their
    // gradients the other, once per micro-batch.
    const size_t per_direction = (stage == 0 || stage == 3) ? 6 : 12;
    EXPECT_EQ(r.sends.size(), per_direction);
    EXPECT_EQ(r.recvs.size(), per_direction);
    EXPECT_EQ(r.sends, repeated(per_direction, activation));
    // The compute follows the stage's 1F1B order.
    std::vector<PipelineStep> order;
    for (const auto& n : r.nodes) {
      if (n.type != NodeType::kComp || n.name.find(".attention") == std::string::npos) continue;
      const bool fwd = n.name.find(".fwd.") != std::string::npos;
      const uint64_t mb = std::stoull(n.name.substr(n.name.find(".mb") + 3));
      if (order.empty() || !(order.back() == PipelineStep{fwd, mb})) order.push_back({fwd, mb});
    }
    EXPECT_EQ(order, one_f_one_b(stage, 4, 6)) << "stage " << stage;
  }
  // Stage 0's sends carry the tags of its micro-batches' activations, stage 1 receives them.
  std::set<int32_t> sent, received;
  for (const auto& n : w.ranks[0].nodes) {
    if (n.type == NodeType::kCommSend) {
      EXPECT_EQ(n.comm.dst, 1);
      sent.insert(*n.comm.tag);
    }
  }
  for (const auto& n : w.ranks[1].nodes) {
    if (n.type == NodeType::kCommRecv && n.comm.src == 0) received.insert(*n.comm.tag);
  }
  EXPECT_EQ(sent, (std::set<int32_t>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(sent, received);
}

TEST(SynthModel, ExpertParallelAllToAllsPerMoeLayer) {
  ModelSpec spec = small();
  spec.dp = 4;
  spec.ep = 4;
  spec.experts = 8;
  spec.top_k = 2;
  spec.capacity_factor = 1.25;
  spec.ffn_hidden = 256;
  auto w = generate(spec, "ep");
  // 64 tokens x top-2 x 1.25 = 160 slots of 128 bf16 elements.
  const uint64_t alltoall = 160 * 128 * 2;
  EXPECT_EQ(w.summary.costs.alltoall, alltoall);
  // Groups: one DP group and one EP group, both every rank; the experts have no replicas
  // (dp x tp / ep = 1), so no expert-data-parallel group.
  ASSERT_EQ(w.groups.size(), 2u);
  for (const auto& r : w.ranks) {
    // Dispatch and combine in forward and in backward, 2 layers.
    EXPECT_EQ(r.count(CollectiveType::kAllToAll), 8u);
    EXPECT_TRUE(r.all_sized(CollectiveType::kAllToAll, alltoall));
    // Attention parameters (4 h^2) replicated over dp: one bucket of 2 layers.
    EXPECT_EQ(r.collectives.at(CollectiveType::kAllReduce),
              (std::multiset<uint64_t>{2 * 4 * 128 * 128 * 2}));
  }
  // Each expert-parallel rank holds 8 / 4 experts of 2 x 128 x 256 weights.
  EXPECT_EQ(w.summary.costs.expert_params, 2u * 2 * 128 * 256);
}

TEST(SynthModel, FsdpGathersParametersAndScattersGradientsPerLayer) {
  ModelSpec spec = small();
  spec.dp = 4;
  spec.fsdp = true;
  spec.layers = 3;
  spec.hidden = 64;
  spec.global_batch = 8;  // 2 micro-batches of 1 per rank
  auto w = generate(spec, "fsdp");
  const uint64_t layer_bytes = 12 * 64 * 64 * 2;  // 98,304
  for (const auto& r : w.ranks) {
    EXPECT_EQ(r.count(CollectiveType::kAllReduce), 0u);
    // Gathered before every layer's forward and backward in each micro-batch.
    EXPECT_EQ(r.count(CollectiveType::kAllGather), 2u * 3 * 2);
    EXPECT_TRUE(r.all_sized(CollectiveType::kAllGather, layer_bytes / 4));
    // Reduce-scattered once per layer, in the last micro-batch.
    EXPECT_EQ(r.count(CollectiveType::kReduceScatter), 3u);
    EXPECT_TRUE(r.all_sized(CollectiveType::kReduceScatter, layer_bytes));
  }
}

TEST(SynthModel, CombinedTensorSequenceDataPipelineAndExpertParallelism) {
  ModelSpec spec = small();
  spec.dp = 2;
  spec.tp = 2;
  spec.pp = 2;
  spec.ep = 2;
  spec.sp = true;
  spec.experts = 4;
  spec.top_k = 2;
  spec.layers = 4;
  spec.ffn_hidden = 256;
  spec.global_batch = 8;  // 8 / (1 x 2) = 4 micro-batches
  spec.bucket_bytes = 64 << 10;
  spec.iterations = 2;
  auto w = generate(spec, "combo");
  EXPECT_EQ(w.summary.micro_batches, 4u);
  const uint64_t activation = 64 * 128 * 2;
  // Each rank routes its 32-token sequence shard, 2 slots each.
  const uint64_t alltoall = 32 * 2 * 128 * 2;
  // Rank layout: t fastest, then d, then p. Stage 0 holds ranks 0-3; EP groups of 2 carved
  // from them in order are {0,1} and {2,3}; the ranks holding the same experts {0,2}, {1,3}.
  const auto& g = w.groups;
  auto has = [&](std::vector<int32_t> ranks) {
    return std::any_of(g.begin(), g.end(), [&](const auto& e) { return e.second == ranks; });
  };
  EXPECT_TRUE(has({0, 1}) && has({2, 3}) && has({4, 5}) && has({6, 7}));  // tp, ep
  EXPECT_TRUE(has({0, 2}) && has({1, 3}) && has({4, 6}) && has({5, 7}));  // dp, edp
  EXPECT_EQ(g.size(), 16u);                                               // 4 of each kind
  // Per stage: 2 layers; per iteration: 4 micro-batches; 2 iterations.
  const uint64_t passes = 2 * 4 * 2;
  // Attention bytes per layer and rank: 4 h^2 / tp in bf16; experts: 2 per rank of 2 x h x ffn.
  const uint64_t dense = 4 * 128 * 128 / 2 * 2;
  const uint64_t expert = 2 * 2 * 128 * 256 * 2;
  const uint64_t dense_buckets = (2 * dense + (64 << 10) - 1) / (64 << 10);
  const uint64_t expert_buckets = (2 * expert + (64 << 10) - 1) / (64 << 10);
  for (int32_t rank = 0; rank < 8; ++rank) {
    const auto& r = w.ranks[static_cast<size_t>(rank)];
    // SP around the attention only (MoE blocks keep the sequence shard): 2 gathers and 2
    // scatters per layer and micro-batch.
    EXPECT_EQ(r.count(CollectiveType::kAllGather), 2 * passes);
    EXPECT_TRUE(r.all_sized(CollectiveType::kAllGather, activation / 2));
    EXPECT_EQ(r.count(CollectiveType::kReduceScatter), 2 * passes);
    EXPECT_EQ(r.count(CollectiveType::kAllToAll), 4 * passes);
    EXPECT_TRUE(r.all_sized(CollectiveType::kAllToAll, alltoall));
    // Gradient buckets: attention over dp, experts over edp, once per iteration.
    EXPECT_EQ(r.count(CollectiveType::kAllReduce), 2 * (dense_buckets + expert_buckets));
    // Pipeline: one neighbour each, 4 micro-batches each way, 2 iterations; SP shards.
    EXPECT_EQ(r.sends, repeated(8, activation / 2));
    EXPECT_EQ(r.recvs, repeated(8, activation / 2));
  }
}

TEST(SynthModel, RejectsWhatCannotBeLaidOutNamingTheFlag) {
  auto flag_of = [](ModelSpec spec) {
    auto problem = validate(spec);
    return problem ? problem->flag : std::string("(valid)");
  };
  ModelSpec spec;
  EXPECT_EQ(flag_of(spec), "(valid)");
  spec.tp = 0;
  EXPECT_EQ(flag_of(spec), "tp");
  spec = {};
  spec.layers = 5;
  spec.pp = 2;
  EXPECT_EQ(flag_of(spec), "layers");
  spec = {};
  spec.dp = 2;
  spec.tp = 2;
  spec.ep = 3;
  EXPECT_EQ(flag_of(spec), "ep");
  spec = {};
  spec.dp = 4;
  spec.global_batch = 6;
  EXPECT_EQ(flag_of(spec), "global-batch");
  spec = {};
  spec.ep = 2;
  spec.dp = 2;
  spec.experts = 3;
  EXPECT_EQ(flag_of(spec), "experts");
  spec.experts = 4;
  spec.top_k = 5;
  EXPECT_EQ(flag_of(spec), "top-k");
  spec = {};
  spec.tp = 2;
  spec.dp = 2;
  spec.ep = 4;
  EXPECT_EQ(flag_of(spec), "sp");
  spec.sp = true;
  spec.seq_len = 3;
  EXPECT_EQ(flag_of(spec), "seq-len");
  spec = {};
  spec.efficiency = 0;
  EXPECT_EQ(flag_of(spec), "efficiency");
  spec = {};
  spec.gpu = "z80";
  EXPECT_EQ(flag_of(spec), "gpu");
  spec = {};
  spec.tp = 0;
  EXPECT_THROW(write_model(spec, "unused"), std::invalid_argument);
}

// Sizes far past any model's are refused at their flag: they wrapped the 64-bit parameter and
// byte counts (a hidden size of 2^32 gave "0 parameters") or asked for memory no machine has.
TEST(SynthModel, RejectsSizesPastAnyModelNamingTheFlag) {
  auto flag_of = [](ModelSpec spec) {
    auto problem = validate(spec);
    return problem ? problem->flag + ": " + problem->message : std::string("(valid)");
  };
  ModelSpec spec;
  spec.hidden = uint64_t{1} << 32;
  EXPECT_EQ(flag_of(spec), "hidden: 4294967296 is above 1048576");
  spec = {};
  spec.layers = 2000000000;
  EXPECT_EQ(flag_of(spec), "layers: 2000000000 is above 65536");
  spec = {};
  spec.layers = 1 << 16;
  spec.hidden = 1 << 20;
  EXPECT_EQ(flag_of(spec).substr(0, 24), "hidden: --layers 65536 x");
  spec = {};
  spec.ep = spec.dp = 2;  // a mixture of two experts
  spec.capacity_factor = 1e300;
  EXPECT_EQ(flag_of(spec), "capacity-factor: must be at most 1024");
  spec.capacity_factor = 1024;
  spec.micro_batch = 1 << 16;
  spec.seq_len = 1 << 24;
  EXPECT_EQ(flag_of(spec).substr(0, 32), "capacity-factor: an all-to-all o");
  spec = {};
  spec.layers = 1 << 16;
  spec.hidden = 1 << 14;
  EXPECT_EQ(flag_of(spec), "(valid)");
}

TEST(SynthModel, ComputeTimesFollowTheRoofline) {
  // 24 b s h^2 + 4 b s^2 h FLOPs per layer forward (h = 1024, s = 2048, b = 1), at
  // 100 TFLOPS x 0.5: attention 8 b s h^2 + 4 b s^2 h, MLP 16 b s h^2.
  ModelSpec spec;
  spec.hidden = 1024;
  spec.seq_len = 2048;
  spec.peak_tflops = 100;
  spec.efficiency = 0.5;
  LayerCosts c = layer_costs(spec);
  const double bs = 2048, h = 1024, s = 2048;
  EXPECT_DOUBLE_EQ(c.attention.flops, 8 * bs * h * h + 4 * bs * s * h);
  EXPECT_DOUBLE_EQ(c.mlp.flops, 16 * bs * h * h);
  EXPECT_EQ(c.mlp.forward_us, 687u);  // 34.36 GFLOP / 50 TFLOPS = 687.2 us
  EXPECT_EQ(c.mlp.backward_us, 1374u);
  // The GPU preset sets the peak: H100 SXM bf16 dense is 989.5 TFLOPS.
  spec.peak_tflops.reset();
  EXPECT_DOUBLE_EQ(layer_costs(spec).peak_tflops, 989.5);
  spec.dtype = Dtype::kFp8;
  EXPECT_DOUBLE_EQ(layer_costs(spec).peak_tflops, 1979);
}

}  // namespace
}  // namespace etwire::synth
