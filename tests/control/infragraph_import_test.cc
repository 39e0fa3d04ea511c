// fabric.infragraph: InfraGraph files (tests/control/configs/infragraph, and variants of them
// written to scratch directories) imported as the twin's topology, the twin built from them, and
// every kind of graph the twin cannot model refused by name, located in the file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "control/plan/config_summary.h"
#include "control/resolve/config_loader.h"
#include "tests/testing/test_paths.h"

namespace etwire::control {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

fs::path graphs() {
  return etwire::testing::source_dir() / "tests/control/configs/infragraph";
}

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// `ports` loopback ports at `speed` running the bundled 8-rank all-to-all, with `fabric` (the
// lines under "fabric:"), as a file run.yaml in `dir`.
std::string run_config(const std::string& fabric, int ports = 8,
                       const std::string& speed = "100Gbps") {
  return "workload:\n  jobs:\n    - trace: " +
         (etwire::testing::source_dir() / "configs/traces/alltoall_8r/alltoall").string() +
         "\nports:\n  - name: p\n    count: " + std::to_string(ports) + "\n    speed: " + speed +
         "\nfabric:\n" + fabric;
}

RunPlan load_in(const fs::path& dir, const std::string& text, bool read_traces) {
  LoadOptions options;
  options.read_traces = read_traces;
  return load_config_text(text, (dir / "run.yaml").string(), dir.string(), options);
}

RunPlan load_graph(const std::string& file, int ports = 8, const std::string& speed = "100Gbps") {
  return load_in(graphs(), run_config("  infragraph: " + file + "\n", ports, speed), true);
}

// Writes `graph` as graph.yaml into a scratch directory and loads a run that imports it (traces
// not read: only the fabric's diagnostics matter).
RunPlan load_written(const std::string& graph, const std::string& fabric_extra = "", int ports = 8,
                     const std::string& speed = "100Gbps") {
  const fs::path dir = etwire::testing::make_scratch_dir("infragraph");
  std::ofstream(dir / "graph.yaml") << graph;
  return load_in(dir, run_config("  infragraph: graph.yaml\n" + fabric_extra, ports, speed), false);
}

// The diagnostic at `key_path` whose message has `says`, or null.
const Diagnostic* find(const RunPlan& loaded, const std::string& key_path,
                       const std::string& says) {
  for (const Diagnostic& d : loaded.diagnostics.items()) {
    if (d.key_path == key_path && d.message.find(says) != std::string::npos) return &d;
  }
  return nullptr;
}
// The diagnostic found would not outlive a temporary configuration.
const Diagnostic* find(const RunPlan&& loaded, const std::string& key_path,
                       const std::string& says) = delete;

// The 1-based line on which `text` first occurs in `in`.
int line_of(const std::string& in, const std::string& text) {
  const size_t at = in.find(text);
  return at == std::string::npos
             ? -1
             : 1 + static_cast<int>(
                       std::count(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(InfraGraphImport, TwoLeafTwoSpineClosIsALeafSpineTwin) {
  const RunPlan loaded = load_graph("clos-2x2.yaml");
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  const config::FabricConfig& f = loaded.config.fabric;
  EXPECT_EQ(f.topology, config::Topology::kLeafSpine);
  EXPECT_EQ(f.leaf_spine.ports_per_leaf, 4u);
  EXPECT_EQ(f.leaf_spine.spines, 2u);
  EXPECT_EQ(f.leaf_spine.links, 1u);
  EXPECT_EQ(f.leaf_spine.uplink_speed_bps, 200'000'000'000u);
  EXPECT_DOUBLE_EQ(f.leaf_spine.oversubscription, 1.0);  // 4 x 100G over 2 x 200G
  EXPECT_EQ(f.rails.nics_per_host, 0u);
  EXPECT_EQ(f.propagation_delay_ns, 1'000u);  // no latency in the file: the default

  const auto& layout = loaded.twin.layout;
  ASSERT_TRUE(layout) << (loaded.twin.problem ? loaded.twin.problem->message() : "not on the twin");
  EXPECT_EQ(layout->leaves(), 2u);
  EXPECT_EQ(layout->spines(), 2u);
  EXPECT_EQ(layout->cables(), 8u + 2 * 2);
  EXPECT_EQ(layout->uplink_speed_bps(), 200'000'000'000u);
  EXPECT_EQ(layout->switches_between(0, 3), 1u);  // host.0 and host.1 share leafsw.0
  EXPECT_EQ(layout->switches_between(3, 4), 3u);  // host.1 to host.2 crosses a spine
}

TEST(InfraGraphImport, JsonWithAnnotationsImportsAsItsYaml) {
  const RunPlan yaml = load_graph("clos-2x2.yaml");
  const RunPlan json = load_graph("clos-2x2-annotated.json");
  ASSERT_TRUE(json.ok()) << json.diagnostics.to_text();
  EXPECT_EQ(json.config.fabric.topology, yaml.config.fabric.topology);
  EXPECT_EQ(json.config.fabric.leaf_spine.ports_per_leaf, 4u);
  EXPECT_EQ(json.config.fabric.leaf_spine.uplink_speed_bps,
            yaml.config.fabric.leaf_spine.uplink_speed_bps);
}

TEST(InfraGraphImport, InfraGraphsClosBlueprintImports) {
  // one2one pairs each server's 2 NICs with its leaf's first 2 of 16 ports.
  const RunPlan loaded = load_graph("closfabric.yaml");
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  const config::FabricConfig& f = loaded.config.fabric;
  EXPECT_EQ(f.topology, config::Topology::kLeafSpine);
  EXPECT_EQ(f.leaf_spine.ports_per_leaf, 2u);
  EXPECT_EQ(f.leaf_spine.spines, 3u);
  EXPECT_EQ(f.leaf_spine.uplink_speed_bps, 400'000'000'000u);
  const auto& layout = loaded.twin.layout;
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->leaves(), 4u);
  // What validate and plan print, so that the import can be checked without reading the graph.
  EXPECT_EQ(describe_fabric(loaded),
            "leaf-spine twin of 4 leaves, 3 spines, 1 x 400 Gb/s per leaf-spine pair, cables 1 us "
            "one way, switches 500 ns (fabric.infragraph: 8 host NICs)");
}

TEST(InfraGraphImport, ThreeTierClosIsAThreeTierTwin) {
  const RunPlan loaded = load_graph("three-tier.yaml", 8, "400Gbps");
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  const config::FabricConfig& f = loaded.config.fabric;
  EXPECT_EQ(f.topology, config::Topology::kThreeTier);
  EXPECT_EQ(f.leaf_spine.ports_per_leaf, 2u);
  EXPECT_EQ(f.leaf_spine.spines, 2u);
  EXPECT_EQ(f.leaf_spine.uplink_speed_bps, 400'000'000'000u);
  EXPECT_EQ(f.three_tier.leaves_per_pod, 2u);
  EXPECT_EQ(f.three_tier.super_spines, 2u);
  EXPECT_EQ(f.three_tier.links, 1u);
  EXPECT_EQ(f.three_tier.uplink_speed_bps, 200'000'000'000u);  // 25 GB/s
  EXPECT_EQ(f.propagation_delay_ns, 2'000u);                   // 2 us and 2000 ns
  EXPECT_THAT(describe_fabric(loaded),
              ::testing::StartsWith("three-tier twin of 4 leaves in 2 pods, 2 spines per pod, 1 x "
                                    "400 Gb/s per leaf-spine pair, 2 super-spines per spine, 1 x "
                                    "200 Gb/s per spine-super-spine pair, cables 2 us one way"));
  const auto& layout = loaded.twin.layout;
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->pods(), 2u);
  EXPECT_EQ(layout->super_spines(), 2u);
  EXPECT_EQ(layout->switches_between(0, 1), 1u);
  EXPECT_EQ(layout->switches_between(0, 2), 3u);
  EXPECT_EQ(layout->switches_between(0, 4), 5u);
}

// Four servers of two NICs; NIC i of servers 0-1 on rail leaf i, of servers 2-3 on rail leaf
// 2 + i; `spines` the leaf-spine edges.
std::string rails_graph(const std::string& spines) {
  return R"(devices:
  - name: server
    components:
      - {name: xpu, count: 2, choice: xpu}
      - {name: nic, count: 2, choice: nic}
  - name: switch
    components:
      - {name: port, count: 8, choice: port}
instances:
  - {name: host, device: server, count: 4}
  - {name: rail, device: switch, count: 4}
  - {name: spine, device: switch, count: 2}
links:
  - {name: l, physical: {bandwidth: {gigabits_per_second: 100}}}
edges:
  - {ep1: {instance: "host[0:2]", component: "nic[0]"}, ep2: {instance: "rail[0]", component: "port[0:2]"}, scheme: one2one, link: l}
  - {ep1: {instance: "host[0:2]", component: "nic[1]"}, ep2: {instance: "rail[1]", component: "port[0:2]"}, scheme: one2one, link: l}
  - {ep1: {instance: "host[2:4]", component: "nic[0]"}, ep2: {instance: "rail[2]", component: "port[0:2]"}, scheme: one2one, link: l}
  - {ep1: {instance: "host[2:4]", component: "nic[1]"}, ep2: {instance: "rail[3]", component: "port[0:2]"}, scheme: one2one, link: l}
)" + spines;
}

TEST(InfraGraphImport, HostsWithNicsOnDifferentLeavesAreRailsAndSeparateNetworksPlanes) {
  RunPlan loaded = load_written(rails_graph(
      R"(  - {ep1: {instance: "rail[0:4]", component: "port[2]"}, ep2: {instance: "spine[0]", component: "port[0:4]"}, scheme: one2one, link: l}
  - {ep1: {instance: "rail[0:4]", component: "port[3]"}, ep2: {instance: "spine[1]", component: "port[0:4]"}, scheme: one2one, link: l}
)"));
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  EXPECT_EQ(loaded.config.fabric.topology, config::Topology::kLeafSpine);
  EXPECT_EQ(loaded.config.fabric.rails.nics_per_host, 2u);
  EXPECT_EQ(loaded.config.fabric.rails.planes, 1u);
  EXPECT_EQ(loaded.config.fabric.leaf_spine.ports_per_leaf, 2u);  // servers per rail leaf
  EXPECT_EQ(loaded.config.fabric.leaf_spine.spines, 2u);
  // Rails 0 (leaves 0 and 2) and 1 (leaves 1 and 3) under a spine each: two planes.
  loaded = load_written(rails_graph(
      R"(  - {ep1: {instance: "rail[0:4:2]", component: "port[2]"}, ep2: {instance: "spine[0]", component: "port[0:2]"}, scheme: one2one, link: l}
  - {ep1: {instance: "rail[1:4:2]", component: "port[2]"}, ep2: {instance: "spine[1]", component: "port[0:2]"}, scheme: one2one, link: l}
)"));
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  EXPECT_EQ(loaded.config.fabric.rails.nics_per_host, 2u);
  EXPECT_EQ(loaded.config.fabric.rails.planes, 2u);
  EXPECT_EQ(loaded.config.fabric.leaf_spine.spines, 1u);
  const auto& layout = loaded.twin.layout;
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->switches_between(0, 1), 0u);  // the NICs of a server: two planes
  EXPECT_EQ(layout->switches_between(0, 2), 1u);  // NIC 0 of servers 0 and 1: one rail leaf
  EXPECT_EQ(layout->switches_between(0, 4), 3u);
}

TEST(InfraGraphImport, EveryHostOnOneSwitchIsASingleSwitch) {
  const std::string graph = replaced(
      read(graphs() / "clos-2x2.yaml"), "  - name: leafsw\n    device: switch\n    count: 2\n",
      "  - name: leafsw\n    device: switch\n    count: 2\n  - name: tor\n    device: switch\n"
      "    count: 1\n");
  const size_t cut = graph.find("edges:\n  # Each");
  ASSERT_NE(cut, std::string::npos);
  const RunPlan loaded = load_written(
      graph.substr(0, cut) +
      "edges:\n  - {ep1: {instance: host, component: nic}, ep2: {instance: tor, component: "
      "\"port\"}, scheme: one2one, link: host-link}\n");
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  EXPECT_EQ(loaded.config.fabric.topology, config::Topology::kSingleSwitch);
}

// Variants of clos-2x2.yaml that the twin cannot model, each refused at the element.
TEST(InfraGraphImport, WhatTheTwinCannotModelIsRefusedByName) {
  const std::string base = read(graphs() / "clos-2x2.yaml");
  const std::string to_spine_1 =
      "    ep2: {instance: \"spinesw[1]\", component: \"port[0:2]\"}\n    scheme: one2one\n"
      "    link: fabric-link\n";
  const struct {
    std::string name;
    std::string graph;
    std::string key;
    std::string says;
  } cases[] = {
      {"a link between leaves",
       base + "  - ep1: {instance: \"leafsw[0]\", component: \"port[6]\"}\n"
              "    ep2: {instance: \"leafsw[1]\", component: \"port[6]\"}\n"
              "    scheme: one2one\n    link: fabric-link\n",
       "edges[6]",
       "cables leaf leafsw.0 to leaf leafsw.1 directly (leafsw.0.port.6 to leafsw.1.port.6): "
       "etwire models Clos fabrics only"},
      {"two bandwidths on the leaf-spine tier",
       replaced(replaced(base, "  - name: fabric-link\n",
                         "  - name: fast-link\n    physical:\n      bandwidth: "
                         "{choice: gigabits_per_second, gigabits_per_second: 400}\n"
                         "  - name: fabric-link\n"),
                to_spine_1, replaced(to_spine_1, "fabric-link", "fast-link")),
       "edges[5]",
       "links of different bandwidths on one tier: this edge cables leaves to spines by link "
       "fast-link (400 Gb/s), edges[4] cables leaves to spines by link fabric-link (200 Gb/s)"},
      {"a leaf under one spine of two",
       replaced(base, "  - ep1: {instance: \"leafsw[0:2]\", component: \"port[5]\"}\n" + to_spine_1,
                "  - ep1: {instance: \"leafsw[0]\", component: \"port[5]\"}\n" +
                    replaced(to_spine_1, "port[0:2]", "port[0]")),
       "edges[4]", "leaf leafsw.1 is cabled to 1 spine, leafsw.0 to 2"},
      {"hosts interleaved over the leaves",
       replaced(replaced(base,
                         "{instance: \"host[1]\", component: nic}\n    ep2: {instance: "
                         "\"leafsw[0]\", component: \"port[2:4]\"}",
                         "{instance: \"host[1]\", component: nic}\n    ep2: {instance: "
                         "\"leafsw[1]\", component: \"port[2:4]\"}"),
                "{instance: \"host[3]\", component: nic}\n    ep2: {instance: \"leafsw[1]\", "
                "component: \"port[2:4]\"}",
                "{instance: \"host[3]\", component: nic}\n    ep2: {instance: \"leafsw[0]\", "
                "component: \"port[2:4]\"}"),
       "edges[1]",
       "ports 0 (host.0.nic.0, on leaf leafsw.0) and 2 (host.1.nic.0, on leaf leafsw.1) are on "
       "different leaves, which etwire puts on one: etwire fills leaves in port order"},
      {"a port cabled twice",
       replaced(base, "instance: \"leafsw[0]\", component: \"port[2:4]\"",
                "instance: \"leafsw[0]\", component: \"port[1:3]\""),
       "edges[1]", "leafsw.0.port.1 is cabled twice: to host.0.nic.1 by edges[0]"},
      {"a host cabled to a host",
       base + "  - {ep1: {instance: \"host[0]\", component: \"mgmt\"}, ep2: {instance: "
              "\"host[1]\", component: \"mgmt\"}, scheme: one2one, link: host-link}\n",
       "edges[6]", "cables host host.0.mgmt.0 directly to host host.1.mgmt.0"},
      {"a fourth tier",
       replaced(base, "  - name: spinesw\n",
                "  - name: top\n    device: switch\n    count: 2\n"
                "  - name: spinesw\n") +
           "  - {ep1: {instance: \"spinesw[0:2]\", component: \"port[6]\"}, ep2: {instance: "
           "\"top[0]\", component: \"port[0:2]\"}, scheme: one2one, link: fabric-link}\n"
           "  - {ep1: {instance: \"top[0]\", component: \"port[7]\"}, ep2: {instance: "
           "\"top[1]\", component: \"port[7]\"}, scheme: one2one, link: fabric-link}\n",
       "edges[7]", "top.1 is a fourth tier of switches, above super-spine top.0"},
      {"a device kind InfraGraph does not define", replaced(base, "choice: xpu", "choice: gpu"),
       "devices[0].components[1].choice", "\"gpu\" is not a component kind InfraGraph defines"},
      {"an instance name that is not defined",
       replaced(base, "instance: \"spinesw[1]\"", "instance: \"spinsw[1]\""),
       "edges[5].ep2.instance",
       "instances has no instance named \"spinsw\" (did you mean \"spinesw\"?)"},
      {"a slice beyond the count",
       replaced(base, "component: \"port[4]\"", "component: \"port[8]\""), "edges[4].ep1.component",
       "index 8 is outside port's 8 (0 to 7)"},
      {"a slice whose step is the largest an int64 holds (it wrapped the index past the stop)",
       replaced(base, "instance: \"leafsw[0]\", component: \"port[2:4]\"",
                "instance: \"leafsw[0]\", component: \"port[2:4:9223372036854775807]\""),
       "edges[1].ep2.component",
       "the step 9223372036854775807 is larger than port's 8: give one "
       "from 1 to 8"},
      {"a ring edge",
       replaced(base, "    scheme: one2one\n    link: fabric-link",
                "    scheme: ring\n    link: fabric-link"),
       "edges[4].scheme", "etwire does not expand ring edges"},
      {"a bandwidth in transfers",
       replaced(base, "choice: gigabits_per_second\n        gigabits_per_second: 200",
                "choice: gigatransfers_per_second\n        gigatransfers_per_second: 32"),
       "links[1]", "gives its bandwidth in gigatransfers per second"},
      {"a link faster than etwire models",
       replaced(base, "gigabits_per_second: 200", "gigabits_per_second: 9000"),
       "links[1].physical.bandwidth", "link \"fabric-link\" runs at 9 Tb/s, outside the speeds"},
      {"InfraGraph's earlier connection strings",
       "infrastructure:\n  name: old\n  connections:\n    - server.0.nic.0.eth.leafsw.0.port.0\n",
       "infrastructure.connections", "etwire reads edges"},
  };
  for (const auto& c : cases) {
    const RunPlan loaded = load_written(c.graph);
    EXPECT_FALSE(loaded.ok()) << c.name;
    const Diagnostic* d = find(loaded, c.key, c.says);
    ASSERT_NE(d, nullptr) << c.name << "\n" << loaded.diagnostics.to_text();
    EXPECT_EQ(fs::path(d->where.file).filename(), "graph.yaml") << c.name;
    EXPECT_GT(d->where.line, 0) << c.name;
    // Nothing imported: the fabric stays as it was.
    EXPECT_EQ(loaded.config.fabric.topology, config::Topology::kSingleSwitch) << c.name;
  }
  // Located at the edge itself: the leaf-to-leaf one is the file's last.
  const std::string graph = cases[0].graph;
  const RunPlan leaf_to_leaf = load_written(graph);  // outlives the diagnostic found in it
  const Diagnostic* d = find(leaf_to_leaf, "edges[6]", "directly");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->where.line,
            line_of(graph, "  - ep1: {instance: \"leafsw[0]\", component: \"port[6]\"}"));
}

TEST(InfraGraphImport, TheGraphsHostsMustBeTheRunsPorts) {
  RunPlan loaded = load_graph("clos-2x2.yaml", 6);
  EXPECT_FALSE(loaded.ok());
  const Diagnostic* d =
      find(loaded, "fabric.infragraph",
           "the graph cables 8 NICs of its hosts to switches (host.0.nic.0 .. host.3.nic.1), and "
           "the run has 6 ports on the fabric twin");
  ASSERT_NE(d, nullptr) << loaded.diagnostics.to_text();
  EXPECT_EQ(fs::path(d->where.file).filename(), "run.yaml");
  EXPECT_EQ(d->where.line, 9);
  loaded = load_graph("clos-2x2.yaml", 8, "400Gbps");
  EXPECT_FALSE(loaded.ok());
  EXPECT_NE(find(loaded, "fabric.infragraph",
                 "port \"p0\" runs at 400 Gb/s, but its NIC in the graph (host.0.nic.0) is "
                 "cabled at 100 Gb/s (link host-link, edges[0])"),
            nullptr)
      << loaded.diagnostics.to_text();
}

TEST(InfraGraphImport, MissingAndMalformedFilesAreErrors) {
  RunPlan loaded = load_graph("no-such-graph.yaml");
  EXPECT_FALSE(loaded.ok());
  EXPECT_NE(find(loaded, "fabric.infragraph",
                 "cannot read the InfraGraph file " + (graphs() / "no-such-graph.yaml").string() +
                     ": no such file"),
            nullptr)
      << loaded.diagnostics.to_text();

  loaded = load_written("devices:\n  - name: server\n    components: [\n");
  EXPECT_FALSE(loaded.ok());
  ASSERT_EQ(loaded.diagnostics.error_count(), 1u) << loaded.diagnostics.to_text();
  const Diagnostic& d = loaded.diagnostics.items().front();
  EXPECT_EQ(d.problem, Problem::kSyntax);
  EXPECT_EQ(fs::path(d.where.file).filename(), "graph.yaml");
  EXPECT_GT(d.where.line, 0);
  EXPECT_THAT(d.message, HasSubstr("invalid YAML or JSON in the InfraGraph file"));

  loaded = load_written("");
  EXPECT_NE(find(loaded, "", "the InfraGraph file is empty"), nullptr)
      << loaded.diagnostics.to_text();
  loaded = load_written("edges:\n  - {ep1: {instance: h, component: nic}}\n");
  EXPECT_NE(find(loaded, "edges[0].scheme", "required key \"scheme\" is missing"), nullptr)
      << loaded.diagnostics.to_text();
}

TEST(InfraGraphImport, TheTopologyHasOneSourceOfTruth) {
  const std::string graph = read(graphs() / "three-tier.yaml");
  const RunPlan loaded =
      load_written(graph,
                   "  topology: leaf-spine\n  leaf_spine: {spines: 4, ecmp: five-tuple}\n"
                   "  rails: {nics_per_host: 2}\n  propagation_delay: 1us\n",
                   8, "400Gbps");
  EXPECT_FALSE(loaded.ok());
  for (const char* key : {"fabric.topology", "fabric.leaf_spine.spines", "fabric.rails",
                          "fabric.propagation_delay"}) {
    EXPECT_NE(find(loaded, key, "give either it or this key, not both"), nullptr)
        << key << "\n"
        << loaded.diagnostics.to_text();
  }
  // Only those: ecmp is not the shape, and no key the shape would need is asked for.
  EXPECT_EQ(loaded.diagnostics.error_count(), 4u) << loaded.diagnostics.to_text();
  // Routing keys of leaf_spine go with the graph.
  const RunPlan routed =
      load_written(graph, "  leaf_spine: {ecmp: five-tuple, ecmp_seed: 7}\n", 8, "400Gbps");
  ASSERT_TRUE(routed.ok()) << routed.diagnostics.to_text();
  EXPECT_EQ(routed.config.fabric.leaf_spine.ecmp, config::EcmpHash::kFiveTuple);
  EXPECT_EQ(routed.config.fabric.three_tier.leaves_per_pod, 2u);
}

// `etwire run` on the imported twin and on the same twin given by keys: the same flows, packet
// for packet; and not those of another twin.
TEST(InfraGraphImport, AnImportedTwinRunsAsTheSameTwinGivenByKeys) {
  const fs::path dir = etwire::testing::make_scratch_dir("infragraph-run");
  const auto run = [&](const std::string& name, const std::string& fabric) {
    std::ofstream(dir / (name + ".yaml")) << run_config(fabric);
    const auto result =
        etwire::testing::run_etwire("run '" + (dir / (name + ".yaml")).string() + "' --out '" +
                                    (dir / name).string() + "' --no-progress --no-metrics");
    EXPECT_EQ(result.code, 0) << name << "\n" << result.output;
    return read(dir / name / "flows.csv");
  };
  const std::string imported =
      run("imported", "  infragraph: " + (graphs() / "clos-2x2.yaml").string() + "\n");
  const std::string keyed = run("keyed",
                                "  topology: leaf-spine\n  leaf_spine: {ports_per_leaf: 4, "
                                "spines: 2, uplink_speed: 200Gbps}\n");
  const std::string one_spine = run("one-spine",
                                    "  topology: leaf-spine\n  leaf_spine: {ports_per_leaf: 4, "
                                    "spines: 1, uplink_speed: 200Gbps}\n");
  ASSERT_FALSE(imported.empty());
  EXPECT_EQ(imported, keyed);
  EXPECT_NE(imported, one_spine);
  const auto summary = nlohmann::json::parse(read(dir / "imported" / "summary.json"));
  EXPECT_EQ(summary["run"]["topology"], "leaf-spine");

  // validate names the graph file, line and edge of what it refuses.
  std::ofstream(dir / "ring.yaml")
      << replaced(read(graphs() / "clos-2x2.yaml"), "    scheme: one2one\n    link: fabric-link",
                  "    scheme: ring\n    link: fabric-link");
  std::ofstream(dir / "refused.yaml") << run_config("  infragraph: ring.yaml\n");
  const auto refused =
      etwire::testing::run_etwire("validate '" + (dir / "refused.yaml").string() + "'");
  EXPECT_EQ(refused.code, 2) << refused.output;
  EXPECT_THAT(refused.output,
              HasSubstr((dir / "ring.yaml").string() + ":95:13: edges[4].scheme: etwire does not "
                                                       "expand ring edges"));
}

}  // namespace
}  // namespace etwire::control
