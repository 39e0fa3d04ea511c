// The byte blocks a computation spread over processes exchanges: plain records in and out, a
// block that ends early refused, and the collective calls in a session of one (the MPI case runs
// in tests/cli/partitions_e2e_test.py, same_over_processes).
#include "cluster/spread_work.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace etwire::cluster {
namespace {

struct Sample {
  int64_t at = 0;
  uint32_t port = 0;
  double depth = 0;
  bool operator==(const Sample&) const = default;
};

TEST(SpreadWork, RecordsComeBackAsTheyWent) {
  const std::vector<Sample> samples{{1, 2, 3.5}, {-4, 5, 0.25}};
  std::string block;
  append_value(block, uint32_t{7});
  append_records(block, std::span<const Sample>(samples));
  append_value(block, uint64_t{9});
  std::string_view in = block;
  EXPECT_EQ(take_value<uint32_t>(in), 7u);
  std::vector<Sample> out{{0, 1, 0}};
  take_records(in, samples.size(), out);
  EXPECT_EQ(take_value<uint64_t>(in), 9u);
  EXPECT_TRUE(in.empty());
  ASSERT_EQ(out.size(), 3u);  // appended after what was there
  EXPECT_EQ(out[1], samples[0]);
  EXPECT_EQ(out[2], samples[1]);
}

TEST(SpreadWork, ABlockThatEndsEarlyIsRefused) {
  std::string block;
  append_value(block, Sample{1, 2, 3});
  block.pop_back();
  std::string_view in = block;
  std::vector<Sample> out;
  EXPECT_THROW(take_records(in, 1, out), std::runtime_error);
  EXPECT_TRUE(out.empty());
  std::string_view nothing;
  EXPECT_THROW(take_value<uint32_t>(nothing), std::runtime_error);
  // A count past what any block can hold does not allocate it first.
  std::string_view short_block = block;
  EXPECT_THROW(take_records(short_block, size_t{1} << 60, out), std::runtime_error);
}

TEST(SpreadWork, ASessionOfOneKeepsItsOwn) {
  const Session& one = Session::current();
  ASSERT_FALSE(one.mpi());
  EXPECT_EQ(all_to_all(one, {"mine"}), std::vector<std::string>{"mine"});
  EXPECT_THROW(all_to_all(one, {"a", "b"}), std::logic_error);
  std::array<uint64_t, 2> counts{3, 4};
  all_sum(one, counts);
  EXPECT_EQ(counts, (std::array<uint64_t, 2>{3, 4}));
  std::array<int64_t, 1> next{-5};
  all_min(one, next);
  EXPECT_EQ(next[0], -5);
  struct Pair {
    uint64_t sent = 0;
    uint64_t received = 0;
  };
  std::vector<Pair> pairs{{1, 2}, {3, 4}};
  all_sum_counters(one, pairs);
  EXPECT_EQ(pairs[1].sent, 3u);
  EXPECT_EQ(pairs[1].received, 4u);
}

}  // namespace
}  // namespace etwire::cluster
