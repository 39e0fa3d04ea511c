// Names, defaults, byte semantics and the errors resolve() gives for specs it cannot honour.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "collectives/collective_spec.h"

namespace etwire::collectives {
namespace {

using ::testing::HasSubstr;
using trace::CollectiveType;

CollectiveSpec basic(CollectiveKind kind, uint32_t n, uint64_t bytes) {
  CollectiveSpec spec;
  spec.collective = kind;
  for (uint32_t r = 0; r < n; ++r) spec.ranks.push_back(static_cast<int32_t>(100 + r));
  spec.bytes = bytes;
  return spec;
}

std::string error_of(const CollectiveSpec& spec) {
  try {
    resolve(spec);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

TEST(Algorithms, NamesRoundTripAndAliasesParse) {
  for (int i = 0; i < kAlgorithmCount; ++i) {
    const auto a = static_cast<Algorithm>(i);
    EXPECT_EQ(parse_algorithm(algorithm_name(a)), a);
  }
  EXPECT_EQ(parse_algorithm("Bidirectional_Ring"), Algorithm::kBidirectionalRing);
  EXPECT_EQ(parse_algorithm("HD"), Algorithm::kHalvingDoubling);
  EXPECT_EQ(parse_algorithm("rabenseifner"), Algorithm::kHalvingDoubling);
  EXPECT_EQ(parse_algorithm("dbt"), Algorithm::kDoubleBinaryTree);
  EXPECT_EQ(parse_algorithm("butterfly"), std::nullopt);
}

TEST(Algorithms, DefaultsPerCollective) {
  EXPECT_EQ(default_algorithm(CollectiveType::kAllReduce), Algorithm::kRing);
  EXPECT_EQ(default_algorithm(CollectiveType::kAllGather), Algorithm::kRing);
  EXPECT_EQ(default_algorithm(CollectiveType::kAllToAll), Algorithm::kDirect);
  EXPECT_EQ(default_algorithm(CollectiveType::kBroadcast), Algorithm::kRing);
  EXPECT_EQ(default_algorithm(CollectiveType::kGather), Algorithm::kDirect);
  EXPECT_EQ(default_algorithm(CollectiveType::kBarrier), Algorithm::kDissemination);
  EXPECT_EQ(default_algorithm(std::nullopt), Algorithm::kDirect);
  for (int t = 0; t < trace::kCollectiveTypeCount; ++t) {
    EXPECT_FALSE(applicable_algorithms(static_cast<CollectiveType>(t)).empty());
  }
}

TEST(ByteSemantics, AllGatherCommSizeIsTheShardUnlessOutputIsChosen) {
  auto spec = basic(CollectiveType::kAllGather, 4, 1000);
  EXPECT_EQ(resolve(spec).layout.full_bytes(), 4000u);
  spec.size_convention = SizeConvention::kOutput;
  EXPECT_EQ(resolve(spec).layout.full_bytes(), 1000u);
  // Output not divisible by n: blocks as even as possible, every byte in one block.
  spec.bytes = 1003;
  const auto resolved = resolve(spec);
  EXPECT_EQ(resolved.layout.block(0), (ByteRange{0, 251}));
  EXPECT_EQ(resolved.layout.block(3), (ByteRange{753, 250}));
}

TEST(ByteSemantics, ReduceScatterCommSizeIsTheInputUnlessOutputIsChosen) {
  auto spec = basic(CollectiveType::kReduceScatter, 4, 1003);
  EXPECT_EQ(resolve(spec).layout.full_bytes(), 1003u);
  spec.collective = CollectiveType::kReduceScatterBlock;  // equal blocks: the tail is not moved
  EXPECT_EQ(resolve(spec).layout.full_bytes(), 1000u);
  spec.size_convention = SizeConvention::kOutput;
  EXPECT_EQ(resolve(spec).layout.full_bytes(), 4012u);
}

TEST(ByteSemantics, OtherCollectivesUseCommSizeAsTheBuffer) {
  EXPECT_EQ(resolve(basic(CollectiveType::kAllReduce, 3, 77)).layout.full_bytes(), 77u);
  EXPECT_EQ(resolve(basic(CollectiveType::kAllToAll, 3, 77)).layout.full_bytes(), 77u);
  EXPECT_EQ(resolve(basic(CollectiveType::kGather, 3, 77)).layout.full_bytes(), 231u);
  EXPECT_EQ(resolve(basic(CollectiveType::kScatter, 3, 77)).layout.full_bytes(), 77u);
  EXPECT_EQ(resolve(basic(CollectiveType::kBarrier, 3, 77)).layout.full_bytes(), 0u);
}

TEST(Chunking, BySizeCountAndNeverFinerThanABytePerChunk) {
  auto spec = basic(CollectiveType::kAllReduce, 2, 1000);
  spec.chunk_bytes = 300;
  EXPECT_EQ(resolve(spec).chunks, 4u);
  spec.chunk_bytes.reset();
  spec.chunks = 64;
  EXPECT_EQ(resolve(spec).chunks, 64u);
  spec.bytes = 10;
  EXPECT_EQ(resolve(spec).chunks, 10u);
  spec.bytes = 0;
  EXPECT_EQ(resolve(spec).chunks, 1u);
}

TEST(SpecErrors, NameTheProblem) {
  auto spec = basic(CollectiveType::kAllReduce, 4, 100);
  spec.algorithm = Algorithm::kDirect;
  EXPECT_THAT(
      error_of(spec),
      HasSubstr(
          "direct does not apply to ALL_REDUCE (choose from: ring, bidir-ring, "
          "halving-doubling, double-binary-tree, tree, nvls, nvls-tree, hierarchical, collnet)"));

  spec = basic(CollectiveType::kBroadcast, 4, 100);
  spec.root = 7;
  EXPECT_THAT(error_of(spec), HasSubstr("root: rank 7 is not in the process group"));

  spec = basic(CollectiveType::kAllReduce, 3, 100);
  spec.ranks = {4, 9, 4};
  EXPECT_THAT(error_of(spec), HasSubstr("rank 4 appears twice"));
  spec.ranks = {};
  EXPECT_THAT(error_of(spec), HasSubstr("empty"));
  spec.ranks = {-1};
  EXPECT_THAT(error_of(spec), HasSubstr("negative"));

  spec = basic(std::nullopt, 3, 100);
  EXPECT_THAT(error_of(spec), HasSubstr("send/recv involves a sender and a receiver"));

  spec = basic(CollectiveType::kAllToAll, 3, 100);
  spec.peer_bytes = {1, 2, 3};
  EXPECT_THAT(error_of(spec), HasSubstr("3 values given; all-to-all-v over 3 ranks needs 3 x 3"));
  spec = basic(CollectiveType::kAllGather, 3, 100);
  spec.peer_bytes = {1, 2, 3};
  EXPECT_THAT(error_of(spec), HasSubstr("only all-to-all takes per-peer sizes"));

  spec = basic(CollectiveType::kAllReduce, 3, 100);
  spec.qps = 0;
  EXPECT_THAT(error_of(spec), HasSubstr("qps"));
  spec.qps = 1;
  spec.chunks = 0;
  EXPECT_THAT(error_of(spec), HasSubstr("chunks"));
  spec.chunks = 1;
  spec.chunk_bytes = 1;
  spec.bytes = uint64_t{1} << 40;
  EXPECT_THAT(error_of(spec), HasSubstr("at most"));

  spec = basic(CollectiveType::kAllGather, 3, UINT64_MAX / 2);
  EXPECT_THAT(error_of(spec), HasSubstr("overflows"));
}

}  // namespace
}  // namespace etwire::collectives
