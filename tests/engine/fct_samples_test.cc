// FctSamples: the percentiles of times kept as distinct values with their counts are exactly the
// nearest-rank percentiles of every sample, whatever the order the samples came in and however
// many folds they went through; and memory follows the distinct times, not the samples.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "engine/fct_percentiles.h"

namespace etwire::engine {
namespace {

using trace::CollectiveType;

TEST(FctSamples, PercentilesAreThoseOfEverySample) {
  std::mt19937_64 rng(7);
  // Few distinct times (a uniform ring), many (a congested fabric), and one sample.
  for (const uint64_t span : {uint64_t{1}, uint64_t{50}, uint64_t{100000}, uint64_t{1} << 40}) {
    for (const size_t count : {size_t{1}, size_t{999}, size_t{300000}}) {
      std::vector<clock::Nanos> samples;
      FctSamples kept;
      for (size_t i = 0; i < count; ++i) {
        const auto fct = static_cast<clock::Nanos>(1000 + rng() % span);
        samples.push_back(fct);
        kept.add(fct);
      }
      EXPECT_EQ(kept.count(), count);
      std::vector<clock::Nanos> sorted = samples;
      std::sort(sorted.begin(), sorted.end());
      EXPECT_EQ(kept.expanded(), sorted) << "span " << span << " count " << count;
      EXPECT_EQ(kept.percentiles(CollectiveType::kAllReduce),
                fct_percentiles(CollectiveType::kAllReduce, samples));
      EXPECT_LE(kept.distinct(), std::min<size_t>(count, span));
    }
  }
}

TEST(FctSamples, SamplesAddedAfterReadingCountToo) {
  FctSamples kept;
  std::vector<clock::Nanos> samples;
  for (clock::Nanos fct : {50, 10, 30}) {
    kept.add(fct);
    samples.push_back(fct);
  }
  EXPECT_EQ(kept.percentiles(std::nullopt), fct_percentiles(std::nullopt, samples));
  for (clock::Nanos fct : {10, 90, 90, 5}) {
    kept.add(fct);
    samples.push_back(fct);
  }
  EXPECT_EQ(kept.percentiles(std::nullopt), fct_percentiles(std::nullopt, samples));
  EXPECT_EQ(kept.distinct(), 5u);
}

TEST(FctSamples, NoSamples) {
  const FctSamples kept;
  EXPECT_TRUE(kept.empty());
  std::vector<clock::Nanos> none;
  EXPECT_EQ(kept.percentiles(CollectiveType::kAllGather),
            fct_percentiles(CollectiveType::kAllGather, none));
  EXPECT_TRUE(kept.expanded().empty());
}

}  // namespace
}  // namespace etwire::engine
