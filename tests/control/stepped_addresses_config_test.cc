// A port entry's explicit address steps by one per port of the entry: a step that leaves the
// unicast range (a MAC into multicast, an IPv4 address into 224/4 or past 255.255.255.255) is an
// error at the entry's key naming the first port it hits, as an explicit multicast address is.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "control/resolve/config_loader.h"
#include "tests/control/test_configs.h"

namespace etwire::control {
namespace {

using ::testing::HasSubstr;
using testing::load_inline;

std::string with_ports(const std::string& addresses, int count) {
  return "workload:\n  jobs:\n    - trace: traces/allreduce_8r/allreduce\n"
         "ports:\n  - name: p\n    count: " +
         std::to_string(count) + "\n    speed: 100Gbps\n" + addresses;
}

const Diagnostic* find(const RunPlan& loaded, const std::string& key) {
  for (const auto& d : loaded.diagnostics.items()) {
    if (d.key_path == key) return &d;
  }
  return nullptr;
}

TEST(SteppedAddresses, StayingUnicastTheyLoad) {
  const auto loaded =
      load_inline(with_ports("    mac: 02:ff:ff:ff:ff:f8\n    ipv4: 223.255.255.248\n", 8));
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  EXPECT_EQ(loaded.config.ports[7].mac.to_string(), "02:ff:ff:ff:ff:ff");
  EXPECT_EQ(loaded.config.ports[7].ipv4.to_string(), "223.255.255.255");
}

TEST(SteppedAddresses, LeavingUnicastIsAnErrorAtTheEntrysKey) {
  const struct {
    std::string addresses;
    std::string key;
    std::string says;
  } cases[] = {
      {"    mac: 02:ff:ff:ff:ff:fc\n", "ports[0].mac", "port p4 would get 03:00:00:00:00:00"},
      {"    mac: fe:ff:ff:ff:ff:fc\n", "ports[0].mac", "port p4 would get"},
      {"    ipv4: 223.255.255.252\n", "ports[0].ipv4", "port p4 would get 224.0.0.0"},
      {"    ipv4: 239.0.0.1\n", "ports[0].ipv4", "unicast"},
      {"    ipv6: feff:ffff:ffff:ffff:ffff:ffff:ffff:fffc\n", "ports[0].ipv6",
       "port p4 would get ff00::"},
  };
  for (const auto& c : cases) {
    const auto loaded = load_inline(with_ports(c.addresses, 8));
    EXPECT_FALSE(loaded.ok()) << c.addresses;
    const Diagnostic* d = find(loaded, c.key);
    ASSERT_NE(d, nullptr) << c.addresses << loaded.diagnostics.to_text();
    EXPECT_GT(d->where.line, 0) << c.addresses;
    EXPECT_THAT(d->message, HasSubstr(c.says)) << c.addresses;
  }
  // Reported once per entry, not once per port past the edge.
  const auto loaded = load_inline(with_ports("    mac: 02:ff:ff:ff:ff:fc\n", 8));
  EXPECT_EQ(loaded.diagnostics.items().size(), 1u) << loaded.diagnostics.to_text();
}

}  // namespace
}  // namespace etwire::control
