#include "collectives/nccl_sizes.h"

#include <gtest/gtest.h>

#include <limits>

#include "collectives/collective_spec.h"

namespace etwire::collectives {
namespace {

using config::SizeConvention;
using trace::CollectiveType;

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * kKiB;

TEST(NcclSizes, StepsFromMinToMaxByTheFactor) {
  EXPECT_EQ(stepped_sizes(1 * kKiB, 64 * kMiB, 2).size(), 17u);
  EXPECT_EQ(stepped_sizes(8, 128, 2), (std::vector<uint64_t>{8, 16, 32, 64, 128}));
  // The last step stays at or below the maximum, as nccl-tests' loop does.
  EXPECT_EQ(stepped_sizes(8, 100, 4), (std::vector<uint64_t>{8, 32}));
  EXPECT_EQ(stepped_sizes(1000, 1000, 2), (std::vector<uint64_t>{1000}));
  EXPECT_EQ(stepped_sizes(3, 100, 3), (std::vector<uint64_t>{3, 9, 27, 81}));
}

TEST(NcclSizes, NoStepsForAnEmptyOrEndlessRange) {
  EXPECT_TRUE(stepped_sizes(0, 100, 2).empty());
  EXPECT_TRUE(stepped_sizes(200, 100, 2).empty());
  EXPECT_TRUE(stepped_sizes(8, 100, 1).empty());
  EXPECT_TRUE(stepped_sizes(8, 100, 0).empty());
}

TEST(NcclSizes, StopsBeforeTheProductOverflows) {
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  const auto sizes = stepped_sizes(uint64_t{1} << 62, max, 2);
  EXPECT_EQ(sizes, (std::vector<uint64_t>{uint64_t{1} << 62, uint64_t{1} << 63}));
  EXPECT_EQ(stepped_sizes(1, max, 2).size(), 64u);
}

TEST(NcclSizes, WholeBufferCollectivesRoundToWholeElements) {
  for (CollectiveKind kind :
       {CollectiveKind{CollectiveType::kAllReduce}, CollectiveKind{CollectiveType::kBroadcast},
        CollectiveKind{CollectiveType::kReduce}, CollectiveKind{}}) {
    EXPECT_FALSE(is_block_collective(kind));
    EXPECT_EQ(nccl_rounded_bytes(kind, 1024, 8), 1024u);
    EXPECT_EQ(nccl_rounded_bytes(kind, 1023, 8), 1020u);
    EXPECT_EQ(nccl_rounded_bytes(kind, 8, 8), 8u);
    EXPECT_EQ(nccl_rounded_bytes(kind, 3, 8), 0u);
    EXPECT_EQ(nccl_count(kind, 1024, 8), 256u);
  }
}

TEST(NcclSizes, BlockCollectivesRoundEachRanksBlockTo16Bytes) {
  for (CollectiveType type : {CollectiveType::kAllGather, CollectiveType::kReduceScatter,
                              CollectiveType::kReduceScatterBlock, CollectiveType::kAllToAll,
                              CollectiveType::kGather, CollectiveType::kScatter}) {
    EXPECT_TRUE(is_block_collective(type));
    // 8 ranks: multiples of 128 bytes.
    EXPECT_EQ(nccl_rounded_bytes(type, 1024, 8), 1024u);
    EXPECT_EQ(nccl_rounded_bytes(type, 1000, 8), 896u);
    EXPECT_EQ(nccl_rounded_bytes(type, 127, 8), 0u);
    // 3 ranks: 1 MiB is 349525.33 bytes a rank, rounded to 349520.
    EXPECT_EQ(nccl_rounded_bytes(type, kMiB, 3), 3 * 349520u);
    // count: elements of one rank's block.
    EXPECT_EQ(nccl_count(type, 1024, 8), 32u);
  }
}

TEST(NcclSizes, RedopAndRootColumns) {
  EXPECT_EQ(nccl_redop(CollectiveType::kAllReduce), "sum");
  EXPECT_EQ(nccl_redop(CollectiveType::kReduceScatter), "sum");
  EXPECT_EQ(nccl_redop(CollectiveType::kReduce), "sum");
  EXPECT_EQ(nccl_redop(CollectiveType::kAllGather), "none");
  EXPECT_EQ(nccl_redop(CollectiveType::kAllToAll), "none");
  EXPECT_EQ(nccl_redop(std::nullopt), "none");
  EXPECT_EQ(nccl_root(CollectiveType::kAllReduce), -1);
  EXPECT_EQ(nccl_root(CollectiveType::kBroadcast), 0);
  EXPECT_EQ(nccl_root(CollectiveType::kScatter), 0);
  EXPECT_EQ(nccl_root(std::nullopt), -1);
}

// comm_size_for inverts the byte semantics the generator applies: the spec resolved from the
// comm_size it gives has the full buffer asked for, under either convention.
TEST(NcclSizes, CommSizeGivesBackTheFullBuffer) {
  constexpr uint32_t kRanks = 8;
  std::vector<int32_t> group;
  for (uint32_t r = 0; r < kRanks; ++r) group.push_back(static_cast<int32_t>(r));
  for (int t = 0; t < trace::kCollectiveTypeCount; ++t) {
    const auto type = static_cast<CollectiveType>(t);
    if (type == CollectiveType::kBarrier) continue;
    for (SizeConvention convention : {SizeConvention::kInput, SizeConvention::kOutput}) {
      const uint64_t full = nccl_rounded_bytes(type, 64 * kKiB, kRanks);
      CollectiveSpec spec;
      spec.collective = type;
      spec.ranks = group;
      spec.bytes = comm_size_for(type, full, kRanks, convention);
      spec.size_convention = convention;
      EXPECT_EQ(resolve(spec).layout.full_bytes(), full)
          << trace::collective_type_name(type) << " " << size_convention_name(convention);
    }
  }
  EXPECT_EQ(comm_size_for(CollectiveType::kAllGather, 1024, kRanks, SizeConvention::kInput), 128u);
  EXPECT_EQ(comm_size_for(CollectiveType::kAllGather, 1024, kRanks, SizeConvention::kOutput),
            1024u);
  EXPECT_EQ(comm_size_for(CollectiveType::kReduceScatter, 1024, kRanks, SizeConvention::kInput),
            1024u);
  EXPECT_EQ(comm_size_for(CollectiveType::kReduceScatter, 1024, kRanks, SizeConvention::kOutput),
            128u);
}

}  // namespace
}  // namespace etwire::collectives
