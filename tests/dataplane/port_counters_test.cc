#include "dataplane/port_counters.h"

#include <gtest/gtest.h>

#include <set>
#include <string_view>

namespace etwire::dataplane {
namespace {

TEST(PortCounterTable, EachRowNamesItsOwnMember) {
  PortCounters counters;
  for (size_t i = 0; i < kPortCounterFields.size(); ++i)
    counters.*kPortCounterFields[i].member = i + 1;
  std::set<uint64_t> seen;
  for (size_t i = 0; i < kPortCounterFields.size(); ++i) {
    EXPECT_EQ(counters.*kPortCounterFields[i].member, i + 1) << kPortCounterFields[i].name;
    seen.insert(counters.*kPortCounterFields[i].member);
  }
  EXPECT_EQ(seen.size(), kPortCounterFields.size());  // no member written by two rows
}

TEST(PortCounterTable, NamesAndMetricsAreUniqueAndMetricsAreCounters) {
  std::set<std::string_view> names;
  std::set<std::string_view> metrics;
  for (const PortCounterField& field : kPortCounterFields) {
    EXPECT_TRUE(names.insert(field.name).second) << field.name;
    EXPECT_TRUE(metrics.insert(field.metric).second) << field.metric;
    EXPECT_TRUE(field.metric.starts_with("etwire_port_")) << field.metric;
    EXPECT_TRUE(field.metric.ends_with("_total")) << field.metric;
    EXPECT_FALSE(field.help.empty()) << field.name;
  }
}

TEST(PortCounterTable, CountersAddUpFieldByField) {
  PortCounters a;
  PortCounters b;
  for (size_t i = 0; i < kPortCounterFields.size(); ++i) {
    a.*kPortCounterFields[i].member = 10 * (i + 1);
    b.*kPortCounterFields[i].member = i;
  }
  a += b;
  for (size_t i = 0; i < kPortCounterFields.size(); ++i) {
    EXPECT_EQ(a.*kPortCounterFields[i].member, 11 * i + 10) << kPortCounterFields[i].name;
  }
}

TEST(PortCounterTable, ARecordIsItsCountersWithANameAndSpeed) {
  PortRecord record;
  record.name = "p0";
  record.drops = 7;
  const PortCounters& counters = record;
  EXPECT_EQ(counters.drops, 7u);
  EXPECT_EQ(counters.tx_bytes, 0u);
}

}  // namespace
}  // namespace etwire::dataplane
