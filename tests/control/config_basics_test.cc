// Key paths, "did you mean", and addresses: the small parts the loader is built from.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "config/addresses.h"
#include "control/load/key_path.h"
#include "control/load/nearest_name.h"

namespace etwire::control {

using namespace etwire::config;
namespace {

TEST(KeyPath, ParsesKeysAndIndexes) {
  auto steps = parse_key_path("workload.jobs[0].filter.node_types[2]");
  ASSERT_TRUE(steps);
  ASSERT_EQ(steps->size(), 6u);
  EXPECT_EQ((*steps)[0].key, "workload");
  EXPECT_EQ((*steps)[1].key, "jobs");
  EXPECT_EQ((*steps)[2].index, 0u);
  EXPECT_EQ((*steps)[4].key, "node_types");
  EXPECT_EQ((*steps)[5].index, 2u);
  EXPECT_TRUE(parse_key_path("ports[10].mtu"));
  EXPECT_TRUE(parse_key_path("a-b.c_d"));
}

TEST(KeyPath, RejectsMalformedPaths) {
  for (const char* bad : {"", ".", "a.", ".a", "a..b", "a[", "a[]", "a[x]", "a[-1]", "[0]", "a[0]b",
                          "a b", "a.b=c"}) {
    EXPECT_FALSE(parse_key_path(bad)) << bad;
  }
}

TEST(KeyPath, WithinMatchesWholeSteps) {
  EXPECT_TRUE(path_within("ports[1].mtu", "ports[1]"));
  EXPECT_TRUE(path_within("ports[1]", "ports[1]"));
  EXPECT_TRUE(path_within("ports[1]", "ports"));
  EXPECT_FALSE(path_within("ports[10]", "ports[1]"));
  EXPECT_FALSE(path_within("portsx", "ports"));
  EXPECT_EQ(child_path("", "run"), "run");
  EXPECT_EQ(child_path("run", "seed"), "run.seed");
  EXPECT_EQ(element_path("ports", 3), "ports[3]");
}

TEST(NearestName, SuggestsPlausibleTyposOnly) {
  std::vector<std::string> keys{"mtu", "speed", "name", "backend", "qpn_base", "enabled"};
  EXPECT_EQ(nearest_name("mttu", keys), "mtu");
  EXPECT_EQ(nearest_name("speeed", keys), "speed");
  EXPECT_EQ(nearest_name("enabeld", keys), "enabled");  // a swap is one edit
  EXPECT_EQ(nearest_name("MTU", keys), "mtu");
  EXPECT_EQ(nearest_name("backedn", keys), "backend");
  EXPECT_FALSE(nearest_name("zzzzzz", keys));
  EXPECT_FALSE(nearest_name("qos", keys));
  EXPECT_EQ(did_you_mean("nmae", keys), " (did you mean \"name\"?)");
  EXPECT_EQ(did_you_mean("xyzzy", keys), "");
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("ab", "ba"), 1u);
}

// nearest_name skips candidates whose length alone rules them out; the answer must be the one
// a full search gives: the first candidate at the smallest distance within the limit.
TEST(NearestName, AgreesWithASearchOfEveryCandidate) {
  std::mt19937 random(7);
  auto word = [&](size_t max_length) {
    std::string w(random() % (max_length + 1), 'a');
    for (char& c : w) c = static_cast<char>('a' + random() % 3);  // few letters: many near ties
    return w;
  };
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::string> candidates;
    for (size_t i = 0, n = 1 + random() % 8; i < n; ++i) candidates.push_back(word(12));
    const std::string typed = word(round % 10 == 0 ? 60 : 12);
    const size_t limit = std::max<size_t>(1, typed.size() / 3);
    std::optional<std::string> expected;
    size_t expected_distance = limit + 1;
    for (const std::string& candidate : candidates) {
      const size_t distance = edit_distance(typed, candidate);
      if (distance < expected_distance) {
        expected_distance = distance;
        expected = candidate;
      }
    }
    EXPECT_EQ(nearest_name(typed, candidates), expected) << typed;
  }
}

TEST(Addresses, MacParseFormatOffset) {
  auto mac = MacAddress::parse("02:00:0A:00:00:FF");
  ASSERT_TRUE(mac);
  EXPECT_EQ(mac->to_string(), "02:00:0a:00:00:ff");
  EXPECT_EQ(mac->plus(1)->to_string(), "02:00:0a:00:01:00");  // carries
  EXPECT_EQ(MacAddress::parse("02-00-0a-00-00-01")->to_string(), "02:00:0a:00:00:01");
  EXPECT_TRUE(MacAddress::parse("01:00:5e:00:00:01")->is_multicast());
  EXPECT_FALSE(MacAddress::parse("ff:ff:ff:ff:ff:ff")->plus(1));
  for (const char* bad :
       {"", "02:00:0a:00:00", "02:00:0a:00:00:0g", "02:00-0a:00:00:01", "0200.0a00.0001"}) {
    EXPECT_FALSE(MacAddress::parse(bad)) << bad;
  }
}

TEST(Addresses, Ipv4ParseFormatOffset) {
  auto ip = Ipv4Address::parse("10.0.1.255");
  ASSERT_TRUE(ip);
  EXPECT_EQ(ip->value, 0x0A0001FFu);
  EXPECT_EQ(ip->plus(1)->to_string(), "10.0.2.0");
  EXPECT_TRUE(ip->is_unicast());
  EXPECT_FALSE(Ipv4Address::parse("224.0.0.1")->is_unicast());
  EXPECT_FALSE(Ipv4Address::parse("0.0.0.0")->is_unicast());
  EXPECT_FALSE(Ipv4Address::parse("255.255.255.255")->plus(1));
  for (const char* bad :
       {"", "10.0.0", "10.0.0.256", "10.0.0.1.2", "010.0.0.1", "10.0.0.x", " 10.0.0.1"}) {
    EXPECT_FALSE(Ipv4Address::parse(bad)) << bad;
  }
}

TEST(Addresses, Ipv6ParseCanonicalOffset) {
  auto ip = Ipv6Address::parse("FD00:0:0:0:0:0:0:1");
  ASSERT_TRUE(ip);
  EXPECT_EQ(ip->to_string(), "fd00::1");
  EXPECT_EQ(ip->plus(0xFFFF)->to_string(), "fd00::1:0");
  EXPECT_TRUE(ip->is_unicast());
  EXPECT_FALSE(Ipv6Address::parse("::")->is_unicast());
  EXPECT_FALSE(Ipv6Address::parse("ff02::1")->is_unicast());
  EXPECT_FALSE(Ipv6Address::parse("fd00:::1"));
  EXPECT_FALSE(Ipv6Address::parse("10.0.0.1"));
}

}  // namespace
}  // namespace etwire::control
