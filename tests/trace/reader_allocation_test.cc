// The binary decode path must not touch the heap per node once its buffers have grown.
#include <gtest/gtest.h>

#include "tests/testing/test_paths.h"
#include "tests/trace/allocation_counter.h"
#include "tests/trace/trace_test_support.h"
#include "trace/node_source.h"

namespace etwire::trace {
namespace {

using testing::attr_bool;
using testing::attr_int32;
using testing::attr_int64;
using testing::attr_string;
using testing::make_node;

TEST(ReaderAllocation, NoHeapAllocationPerNodeAfterWarmUp) {
  auto dir = etwire::testing::make_scratch_dir("alloc");
  std::vector<ChakraProtoMsg::Node> nodes;
  for (uint64_t id = 1; id <= 50000; ++id) {
    switch (id % 4) {
      case 0: {
        auto node = make_node(id, ChakraProtoMsg::COMM_COLL_NODE,
                              {attr_bool("is_cpu_op", false), attr_int64("comm_type", 0),
                               attr_int64("comm_size", 1 << 20),
                               attr_string("pg_name", "12.0 (longer than a short string)")},
                              {id - 1});
        auto* dims = node.add_attr();
        dims->set_name("involved_dim");
        dims->mutable_bool_list()->add_values(true);
        dims->mutable_bool_list()->add_values(id % 8 == 0);
        nodes.push_back(node);
        break;
      }
      case 1: {
        auto node = make_node(id, ChakraProtoMsg::COMP_NODE, {attr_int32("is_cpu_op", 0)},
                              {id - 1, id > 2 ? id - 2 : 0});
        node.set_duration_micros(id);
        node.mutable_inputs()->set_values("[[" + std::to_string(id) +
                                          ", 0, 0, 4096, 4, 'cuda:0']]");
        node.set_name("a compute node with a name longer than the small-string buffer");
        // STG writes tensor names and sizes as string lists with long elements.
        auto* inputs = node.add_attr();
        inputs->set_name("inputs");
        inputs->mutable_string_list()->add_values("mb0.transformer.0.input_norm.y@0 MicroBatch");
        inputs->mutable_string_list()->add_values("256.0 bytes of a tensor, also long");
        nodes.push_back(node);
        break;
      }
      case 2:
        nodes.push_back(make_node(
            id, ChakraProtoMsg::COMM_SEND_NODE,
            {attr_int32("comm_dst", 3), attr_int32("comm_tag", 0), attr_int64("comm_size", 65536)},
            {id - 1}));
        break;
      default: {
        auto node =
            make_node(id, ChakraProtoMsg::COMM_RECV_NODE,
                      {attr_int32("comm_src", 1), attr_int64("tensor_size", 65536)}, {id - 2});
        node.add_ctrl_deps(id - 3);
        nodes.push_back(node);
      }
    }
  }
  // Large enough that the byte source refills its buffer many times during the counted part.
  std::string bytes = testing::trace_bytes(ChakraProtoMsg::GlobalMetadata(), nodes);
  ASSERT_GT(bytes.size(), size_t{2} << 20);
  testing::write_file(dir / "t.et", bytes);

  auto source = open_node_source((dir / "t.et").string());
  TraceNode node;
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(source->next(node));
  uint64_t before = testing::allocation_count();
  size_t read = 1000;
  while (source->next(node)) ++read;
  uint64_t during = testing::allocation_count() - before;
  EXPECT_EQ(read, nodes.size());
  EXPECT_EQ(during, 0u) << "heap allocations while decoding " << read - 1000 << " nodes";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace etwire::trace
