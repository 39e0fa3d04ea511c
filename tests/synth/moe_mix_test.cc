// `synth moe-mix`: every iteration holds the all-reduces and all-to-alls asked for, on their two
// groups, with the all-to-alls on the compute's critical path and the all-reduces off it.
#include "trace/synth/moe_mix.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tests/testing/test_paths.h"
#include "trace/node_source.h"

namespace etwire::synth {
namespace {

using trace::CollectiveType;
using trace::NodeType;
using trace::TraceNode;

TEST(SynthMoeMix, InterleavesAllReducesAndAllToAllsPerIteration) {
  auto dir = etwire::testing::make_scratch_dir("synth_moe_mix");
  MoeMixSpec spec;
  spec.ranks = 4;
  spec.allreduces = 3;
  spec.alltoalls = 8;
  spec.allreduce_bytes = 1 << 20;
  spec.alltoall_bytes = 64 << 10;
  spec.compute_us = 50;
  spec.iterations = 2;
  auto summary = write_moe_mix(spec, (dir / "mix").string());
  ASSERT_EQ(summary.paths.size(), 4u);
  std::ifstream groups(summary.comm_groups_path);
  std::stringstream text;
  text << groups.rdbuf();
  EXPECT_EQ(text.str(), "{\n  \"1\": [0, 1, 2, 3],\n  \"2\": [0, 1, 2, 3]\n}\n");
  for (const auto& path : summary.paths) {
    auto source = trace::open_node_source(path);
    std::map<uint64_t, TraceNode> nodes;
    TraceNode node;
    std::multiset<std::pair<std::string, uint64_t>> colls;  // (pg, bytes)
    uint64_t computes = 0;
    while (source->next(node)) {
      nodes[node.id] = node;
      if (node.type == NodeType::kCommColl) {
        const bool ar = node.comm.coll_type == CollectiveType::kAllReduce;
        EXPECT_EQ(*node.comm.pg_name, ar ? "1" : "2");
        colls.insert({*node.comm.pg_name, *node.comm.size});
      } else if (node.type == NodeType::kComp && node.duration_us > 0) {
        EXPECT_EQ(node.duration_us, 50u);
        ++computes;
      }
    }
    EXPECT_EQ(colls.count({"1", 1 << 20}), 6u);  // 3 per iteration
    EXPECT_EQ(colls.count({"2", 64 << 10}), 16u);
    EXPECT_EQ(computes, 16u);  // one per step, 8 steps per iteration
    // The compute after an all-to-all waits for it; no compute waits for an all-reduce except
    // the iteration's end.
    for (const auto& [id, n] : nodes) {
      if (n.type != NodeType::kComp) continue;
      for (uint64_t dep : n.data_deps) {
        const auto& parent = nodes.at(dep);
        if (parent.type == NodeType::kCommColl &&
            parent.comm.coll_type == CollectiveType::kAllReduce) {
          EXPECT_EQ(n.duration_us, 0u) << n.name;
        }
      }
    }
  }
  // Bad input names the flag.
  spec.alltoalls = 0;
  spec.allreduces = 0;
  ASSERT_TRUE(validate(spec).has_value());
  EXPECT_EQ(validate(spec)->flag, "alltoall-count");
}

}  // namespace
}  // namespace etwire::synth
