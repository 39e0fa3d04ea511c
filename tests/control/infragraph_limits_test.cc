// fabric.infragraph on hostile files: graphs that are small to write and huge (or deep) to
// expand. Each is refused at its place in the file before the work or the memory it would take,
// never with a crash or an allocation failure. The files are generated here, not kept.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "control/resolve/config_loader.h"
#include "tests/testing/test_paths.h"

namespace etwire::control {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Loads a run of 8 loopback ports whose fabric imports `graph`, written as graph.yaml beside it
// (traces not read: only the fabric's diagnostics matter).
RunPlan load_written(const std::string& graph) {
  const fs::path dir = etwire::testing::make_scratch_dir("infragraph-limits");
  std::ofstream(dir / "graph.yaml") << graph;
  const std::string run =
      "workload:\n  jobs:\n    - trace: " +
      (etwire::testing::source_dir() / "configs/traces/alltoall_8r/alltoall").string() +
      "\nports:\n  - name: p\n    count: 8\n    speed: 100Gbps\nfabric:\n  infragraph: "
      "graph.yaml\n";
  LoadOptions options;
  options.read_traces = false;
  return load_config_text(run, (dir / "run.yaml").string(), dir.string(), options);
}

// The error at `key_path`, in graph.yaml, whose message has `says`; null when there is none.
const Diagnostic* find(const RunPlan& loaded, const std::string& key_path,
                       const std::string& says) {
  for (const Diagnostic& d : loaded.diagnostics.items()) {
    if (d.severity == Severity::kError && d.key_path == key_path &&
        fs::path(d.where.file).filename() == "graph.yaml" &&
        d.message.find(says) != std::string::npos) {
      return &d;
    }
  }
  return nullptr;
}
const Diagnostic* find(const RunPlan&& loaded, const std::string& key_path,
                       const std::string& says) = delete;

// Device i is made of device i + 1, down to the last, which holds a NIC: each device's host-ness
// is that of the device at the bottom of the chain.
std::string composition_chain(size_t depth, const std::string& last_component) {
  std::string text = "devices:\n";
  for (size_t i = 0; i + 1 < depth; ++i) {
    text += "  - {name: d" + std::to_string(i) + ", components: [{name: d" + std::to_string(i + 1) +
            ", choice: device, count: 1}]}\n";
  }
  text += "  - {name: d" + std::to_string(depth - 1) + ", components: [" + last_component + "]}\n";
  return text;
}

TEST(InfraGraphLimits, ADeepChainOfCompositionsIsWalkedWithoutRecursion) {
  // 60,000 devices deep overflowed the stack of the walk that finds hosts (SIGSEGV); the file's
  // entry cap now stops that one before the parse (below), and the deepest chain it lets through
  // (4 entries a device) is walked. Closing the chain into a loop at its bottom shows the walk
  // reached it.
  constexpr size_t kDepth = 32'000;
  const RunPlan looped =
      load_written(composition_chain(kDepth, "{name: d0, choice: device, count: 1}"));
  EXPECT_FALSE(looped.ok());
  const Diagnostic* d = find(looped, "devices[31999].components[0]",
                             "device \"d0\" is composed into itself: component \"d0\" of device "
                             "\"d31999\" closes the loop");
  ASSERT_NE(d, nullptr) << looped.diagnostics.to_text();
  EXPECT_EQ(d->where.line, static_cast<int>(kDepth) + 1);
}

// The 60,000-deep chain is 240,000 entries: refused where it passes the cap, before yaml-cpp
// spends 1.7 s parsing it.
TEST(InfraGraphLimits, TheSixtyThousandDeepChainIsRefusedAtTheEntryCap) {
  const RunPlan chain =
      load_written(composition_chain(60'000, "{name: d0, choice: device, count: 1}"));
  ASSERT_EQ(chain.diagnostics.error_count(), 1u) << chain.diagnostics.to_text();
  const Diagnostic& d = chain.diagnostics.items().front();
  EXPECT_EQ(fs::path(d.where.file).filename(), "graph.yaml");
  EXPECT_EQ(d.where.line, 32'770);  // 4 entries a line: where the one past the cap starts
  EXPECT_THAT(d.message, HasSubstr("holds more than 131072 lines and list items"));
}

// Servers of one NIC, switches of one port, one link; `instances` and `edges` are the lists'
// entries.
std::string servers_and_switches(const std::string& instances, const std::string& edges) {
  return "devices:\n"
         "  - {name: server, components: [{name: nic, choice: nic, count: 1}]}\n"
         "  - {name: switch, components: [{name: port, choice: port, count: 1}]}\n"
         "links:\n  - {name: l}\ninstances:\n" +
         instances + "edges:\n" + edges;
}

TEST(InfraGraphLimits, AnEdgeRefusedForACabledEndLeavesItsOtherEndFree) {
  // The second edge is refused: b.0's port has a cable. It once left a.1's NIC recorded as
  // cabled by a cable never made, so the third edge, a.1's first, was refused too, naming a cable
  // read past the end of the list (a heap overflow the fuzzer found).
  const std::string edge =
      "  - {ep1: {instance: \"a[$A]\", component: nic}, ep2: {instance: "
      "\"b[$B]\", component: port}, scheme: one2one, link: l}\n";
  const auto cable = [&](const char* a, const char* b) {
    std::string text = edge;
    text.replace(text.find("$A"), 2, a);
    text.replace(text.find("$B"), 2, b);
    return text;
  };
  const RunPlan loaded = load_written(servers_and_switches(
      "  - {name: a, device: server, count: 2}\n  - {name: b, device: switch, count: 2}\n",
      cable("0", "0") + cable("1", "0") + cable("1", "1")));
  EXPECT_NE(find(loaded, "edges[1]", "b.0.port.0 is cabled twice: to a.0.nic.0 by edges[0]"),
            nullptr)
      << loaded.diagnostics.to_text();
  EXPECT_EQ(find(loaded, "edges[2]", "cabled twice"), nullptr) << loaded.diagnostics.to_text();
}

TEST(InfraGraphLimits, AManyToManyEdgeIsCountedBeforeItsCablesAreMade) {
  // 900 million pairs were made before the cap on cables was looked at: 4.2 GB, bad_alloc.
  const RunPlan loaded = load_written(servers_and_switches(
      "  - {name: a, device: server, count: 30000}\n  - {name: b, device: switch, count: 30000}\n",
      "  - {ep1: {instance: a, component: nic}, ep2: {instance: b, component: port}, "
      "scheme: many2many, link: l}\n"));
  EXPECT_FALSE(loaded.ok());
  const Diagnostic* d = find(loaded, "edges[0]",
                             "many2many of 30000 ends with 30000 makes more than 65536 cables: a "
                             "graph holds at most 65536");
  ASSERT_NE(d, nullptr) << loaded.diagnostics.to_text();
  EXPECT_EQ(d->where.line, 10);

  // The cap holds over the whole graph: each edge below it, together above.
  const RunPlan together = load_written(servers_and_switches(
      "  - {name: a, device: server, count: 40000}\n  - {name: b, device: switch, count: 40000}\n"
      "  - {name: c, device: server, count: 40000}\n  - {name: d, device: switch, count: "
      "40000}\n",
      "  - {ep1: {instance: a, component: nic}, ep2: {instance: b, component: port}, "
      "scheme: one2one, link: l}\n"
      "  - {ep1: {instance: c, component: nic}, ep2: {instance: d, component: port}, "
      "scheme: one2one, link: l}\n"));
  EXPECT_NE(find(together, "edges[1]",
                 "one2one of 40000 ends with 40000 makes 40000 cables, after the 40000 of the "
                 "edges before it: a graph holds at most 65536"),
            nullptr)
      << together.diagnostics.to_text();
}

TEST(InfraGraphLimits, AnEndpointIsCountedStepByStepWithoutOverflow) {
  // 65,536 copies of a server made of 65,536 boards of 65,536 chips of 65,536 NICs: 2^64 ends,
  // which wrapped to 0 and passed the cap, then ran out of memory making them.
  const RunPlan loaded = load_written(
      "devices:\n"
      "  - {name: server, components: [{name: board, choice: device, count: 65536}]}\n"
      "  - {name: board, components: [{name: chip, choice: device, count: 65536}]}\n"
      "  - {name: chip, components: [{name: nic, choice: nic, count: 65536}]}\n"
      "  - {name: switch, components: [{name: port, choice: port, count: 1}]}\n"
      "links:\n  - {name: l}\n"
      "instances:\n  - {name: a, device: server, count: 65536}\n"
      "  - {name: b, device: switch, count: 1}\n"
      "edges:\n  - {ep1: {instance: a, component: board.chip.nic}, ep2: {instance: b, component: "
      "port}, scheme: one2one, link: l}\n");
  EXPECT_FALSE(loaded.ok());
  const Diagnostic* d = find(loaded, "edges[0].ep1.component",
                             "the endpoint expands to more than 262144 components: a graph's "
                             "endpoints expand to at most 262144");
  ASSERT_NE(d, nullptr) << loaded.diagnostics.to_text();
  EXPECT_EQ(d->where.line, 12);
}

TEST(InfraGraphLimits, ANameIsAtMost256Bytes) {
  // A 1 MiB instance name, repeated in the name of each of its 4,096 copies' ends: bad_alloc.
  const std::string name(size_t{1} << 20, 'h');
  const RunPlan loaded = load_written(
      servers_and_switches("  - {name: " + name +
                               ", device: server, count: 4096}\n"
                               "  - {name: b, device: switch, count: 4096}\n",
                           "  - {ep1: {instance: " + name +
                               ", component: nic}, ep2: {instance: b, component: port}, "
                               "scheme: one2one, link: l}\n"));
  EXPECT_FALSE(loaded.ok());
  const Diagnostic* d =
      find(loaded, "instances[0].name", "a text of 1048576 bytes: a name takes at most 256");
  ASSERT_NE(d, nullptr) << loaded.diagnostics.to_text();
  EXPECT_EQ(d->where.line, 7);
  // The message does not repeat the name.
  for (const Diagnostic& each : loaded.diagnostics.items()) EXPECT_LT(each.message.size(), 4096u);
  // 256 bytes is a name.
  const RunPlan longest = load_written(servers_and_switches(
      "  - {name: " + std::string(256, 'h') + ", device: server, count: 1}\n", ""));
  EXPECT_EQ(find(longest, "instances[0].name", "a name takes at most"), nullptr)
      << longest.diagnostics.to_text();
}

TEST(InfraGraphLimits, AFileHoldsAtMost65536DevicesAnd131072Entries) {
  std::string devices = "devices:\n";
  for (int i = 0; i <= 65'536; ++i) devices += "  - {name: d" + std::to_string(i) + "}\n";
  const RunPlan many = load_written(devices);
  EXPECT_FALSE(many.ok());
  const Diagnostic* d =
      find(many, "devices[65536]", "devices holds 65537 entries: at most 65536 are read");
  ASSERT_NE(d, nullptr) << many.diagnostics.to_text();
  EXPECT_EQ(d->where.line, 65'538);

  // 300,000 devices took 54 s and 2.3 GB in the YAML parser before any check saw them.
  for (int i = 65'537; i < 300'000; ++i) devices += "  - {name: d" + std::to_string(i) + "}\n";
  const RunPlan more = load_written(devices);
  EXPECT_FALSE(more.ok());
  ASSERT_EQ(more.diagnostics.error_count(), 1u) << more.diagnostics.to_text();
  const Diagnostic& entries = more.diagnostics.items().front();
  EXPECT_EQ(fs::path(entries.where.file).filename(), "graph.yaml");
  EXPECT_EQ(entries.where.line, 131'074);  // where the entry past the cap starts
  EXPECT_THAT(entries.message, HasSubstr("the InfraGraph file holds more than 131072 lines and "
                                         "list items, the limit"));
}

TEST(InfraGraphLimits, ManySeparateNetworksAreCountedOnce) {
  // 50,000 leaves of one host each, one of them under a spine: 50,000 networks no switch joins.
  // Each leaf was compared with a leaf of every network found before it (over 10^9 comparisons).
  const RunPlan loaded = load_written(
      "devices:\n"
      "  - {name: server, components: [{name: nic, choice: nic, count: 1}]}\n"
      "  - {name: switch, components: [{name: port, choice: port, count: 2}]}\n"
      "links:\n  - {name: l}\n"
      "instances:\n  - {name: h, device: server, count: 50000}\n"
      "  - {name: leaf, device: switch, count: 50000}\n"
      "  - {name: spine, device: switch, count: 1}\n"
      "edges:\n  - {ep1: {instance: h, component: nic}, ep2: {instance: leaf, component: "
      "\"port[0]\"}, scheme: one2one, link: l}\n"
      "  - {ep1: {instance: \"leaf[0]\", component: \"port[1]\"}, ep2: {instance: spine, "
      "component: \"port[0]\"}, scheme: one2one, link: l}\n");
  EXPECT_FALSE(loaded.ok());
  EXPECT_NE(find(loaded, "",
                 "the switches form 50000 networks that no switch joins (leaf leaf.0's and leaf "
                 "leaf.1's)"),
            nullptr)
      << loaded.diagnostics.to_text();
}

}  // namespace
}  // namespace etwire::control
