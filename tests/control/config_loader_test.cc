// Loading whole configurations: the shipped configs, defaults, derived values, overrides,
// warnings, and robustness against any input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "control/resolve/config_loader.h"
#include "tests/control/test_configs.h"

namespace etwire::control {

using namespace etwire::config;
namespace {

using ::testing::HasSubstr;
using testing::kMinimalConfig;
using testing::load_inline;
using testing::shipped_config;

std::string errors_of(const RunPlan& loaded) {
  return loaded.diagnostics.to_text();
}

TEST(ShippedConfigs, AllFourAreValidWithoutWarnings) {
  for (const char* name :
       {"loopback-demo.yaml", "twin-congestion.yaml", "dpdk-lab.yaml", "dpdk-ring.yaml",
        "verbs-lab.yaml", "multi-host-memif.yaml", "multi-host-lab.yaml"}) {
    auto loaded = load_config_file(shipped_config(name));
    EXPECT_TRUE(loaded.ok()) << name << "\n" << errors_of(loaded);
    EXPECT_EQ(loaded.diagnostics.warning_count(), 0u) << name << "\n" << errors_of(loaded);
    EXPECT_TRUE(loaded.addresses) << name;
  }
}

TEST(ShippedConfigs, LoopbackDemoResolvesAsDocumented) {
  auto loaded = load_config_file(shipped_config("loopback-demo.yaml"));
  ASSERT_TRUE(loaded.ok()) << errors_of(loaded);
  const RunConfig& c = loaded.config;
  EXPECT_EQ(c.run.name, "loopback-demo");
  ASSERT_EQ(c.workload.jobs.size(), 1u);
  EXPECT_EQ(c.workload.jobs[0].iterations, 4u);
  EXPECT_EQ(c.workload.jobs[0].warmup_iterations, 1u);
  EXPECT_THAT(c.workload.jobs[0].trace, HasSubstr("configs/traces/allreduce_8r/allreduce"));
  ASSERT_EQ(c.ports.size(), 8u);
  EXPECT_EQ(c.ports[3].name, "host3");
  EXPECT_EQ(c.ports[3].key_path, "ports[0]");
  EXPECT_EQ(c.ports[3].ipv4.to_string(), "10.0.3.1");
  EXPECT_EQ(c.ports[3].mac.to_string(), "02:00:0a:00:03:01");
  EXPECT_TRUE(c.ports[3].ipv4_derived);
  EXPECT_EQ(c.transport.pmtu, 4096u);  // auto: MTU 4200 carries 4096 + 96
  EXPECT_TRUE(c.transport.pmtu_auto);
  ASSERT_TRUE(loaded.traces[0]);
  EXPECT_EQ(loaded.traces[0]->world_size, 8);
  ASSERT_TRUE(loaded.placements[0]);
  EXPECT_EQ(loaded.placements[0]->port(5), 5u);
}

// Parallel links between each leaf and spine share the leaf's uplink capacity: 1:1 with as many
// links as ports per leaf over spines runs each at the port speed.
TEST(ConfigLoader, ParallelLeafSpineLinksRunAtTheirShareOfTheUplinkCapacity) {
  const std::string base = std::string(kMinimalConfig) + "    speed: 400Gbps\n";
  auto loaded = load_inline(base +
                            "fabric: {topology: leaf-spine, leaf_spine: {ports_per_leaf: 4, "
                            "spines: 2, links: 2, ecmp_seed: 7}}\n");
  ASSERT_TRUE(loaded.ok()) << errors_of(loaded);
  const auto& ls = loaded.config.fabric.leaf_spine;
  EXPECT_EQ(ls.links, 2u);
  EXPECT_EQ(ls.ecmp_seed, 7u);
  EXPECT_EQ(ls.uplink_speed_bps, 400'000'000'000u);
  // A given link speed: the oversubscription follows, counting every link.
  loaded = load_inline(base +
                       "fabric: {topology: leaf-spine, leaf_spine: {ports_per_leaf: 4, "
                       "spines: 2, links: 2, uplink_speed: 100Gbps}}\n");
  ASSERT_TRUE(loaded.ok()) << errors_of(loaded);
  EXPECT_DOUBLE_EQ(loaded.config.fabric.leaf_spine.oversubscription, 4.0);
  loaded = load_inline(base +
                       "fabric: {topology: leaf-spine, leaf_spine: {ports_per_leaf: 4, "
                       "links: 0}}\n");
  EXPECT_FALSE(loaded.ok());
  EXPECT_THAT(errors_of(loaded), HasSubstr("fabric.leaf_spine.links"));
}

TEST(ShippedConfigs, TwinCongestionDerivesTheLeafSpine) {
  auto loaded = load_config_file(shipped_config("twin-congestion.yaml"));
  ASSERT_TRUE(loaded.ok()) << errors_of(loaded);
  const FabricConfig& f = loaded.config.fabric;
  EXPECT_EQ(f.topology, Topology::kLeafSpine);
  EXPECT_EQ(f.leaf_spine.ports_per_leaf, 4u);
  // 4 x 100G down, 2 spines, 2:1 -> each uplink 100G.
  EXPECT_EQ(f.leaf_spine.uplink_speed_bps, 100'000'000'000u);
  EXPECT_TRUE(f.pfc.enabled);
  ASSERT_EQ(f.port_overrides.size(), 1u);
  const FabricPortOverride* h0 = f.override_for("h0");
  ASSERT_NE(h0, nullptr);
  EXPECT_EQ(h0->ecn.kmin_bytes, 20'000u);
  EXPECT_EQ(h0->ecn.kmax_bytes, 200'000u);
  EXPECT_DOUBLE_EQ(h0->ecn.pmax, 0.01);  // inherited from fabric.ecn
  EXPECT_TRUE(h0->pfc.enabled);          // inherited from fabric.pfc
  EXPECT_EQ(h0->propagation_delay_ns, 1'000u);
  EXPECT_EQ(f.override_for("h1"), nullptr);
  EXPECT_EQ(loaded.config.workload.jobs[1].mode, ReplayMode::kCommOnly);
  EXPECT_EQ(loaded.config.collectives.chunk_bytes, 256u * 1024);
  EXPECT_EQ(loaded.placements[1]->port(0), 1u);  // job b's rank 0 on h1
}

TEST(ShippedConfigs, LabConfigsCarryTheirBackendSettings) {
  auto dpdk = load_config_file(shipped_config("dpdk-lab.yaml"));
  ASSERT_TRUE(dpdk.ok()) << errors_of(dpdk);
  EXPECT_EQ(dpdk.config.ports[1].dpdk.pci, "0000:3b:00.1");
  EXPECT_EQ(dpdk.config.ports[1].vlan, 100u);
  EXPECT_EQ(dpdk.config.dpdk.eal_args, (std::vector<std::string>{"-l", "0-2", "--in-memory"}));
  EXPECT_EQ(dpdk.addresses->endpoint(0, 5).ipv4.to_string(), "192.168.11.2");
  EXPECT_EQ(dpdk.addresses->endpoint(0, 5).mac.to_string(), "02:00:c0:a8:0b:02");

  auto verbs = load_config_file(shipped_config("verbs-lab.yaml"));
  ASSERT_TRUE(verbs.ok()) << errors_of(verbs);
  ASSERT_EQ(verbs.config.ports.size(), 8u);
  EXPECT_EQ(verbs.config.ports[6].verbs.device, "mlx5_6");
  EXPECT_EQ(verbs.config.ports[6].verbs.gid_index, 3u);
  EXPECT_EQ(verbs.config.ports[6].ipv4.to_string(), "172.16.0.7");
  EXPECT_EQ(verbs.config.mapping.jobs[0].hosts.ranks_per_host, 4u);
  EXPECT_EQ(verbs.config.mapping.jobs[0].hosts.bandwidth_bps, 3'600'000'000'000u);
  EXPECT_EQ(verbs.placements[0]->host(5), 1);
  EXPECT_EQ(verbs.config.verbs.rnic, RnicKind::kHardware);  // the defaults
  EXPECT_EQ(verbs.config.verbs.max_message, 1u << 20);
  EXPECT_EQ(verbs.config.verbs.queue_depth, 128u);
  EXPECT_FALSE(verbs.config.ports[0].verbs.rate_limit_bps);

  auto soft = load_config_file(
      shipped_config("verbs-software.yaml"),
      {.overrides = {"verbs.max_message=64KiB", "verbs.start_psn=4660", "verbs.rnr_retry=3",
                     "ports[0].verbs.dcqcn=apply", "ports[0].verbs.rate_limit=25Gbps"}});
  ASSERT_TRUE(soft.ok()) << errors_of(soft);
  EXPECT_EQ(soft.config.verbs.rnic, RnicKind::kSoftware);
  EXPECT_EQ(soft.config.verbs.max_message, 64u << 10);
  EXPECT_EQ(soft.config.verbs.start_psn, 4660u);
  EXPECT_EQ(soft.config.verbs.rnr_retry, 3);
  EXPECT_FALSE(soft.config.ports[3].verbs.gid_index);  // found by the port's address at run time
  EXPECT_EQ(soft.config.ports[3].verbs.dcqcn, VerbsDcqcn::kApply);
  EXPECT_EQ(soft.config.ports[7].verbs.rate_limit_bps, 25'000'000'000u);
  EXPECT_TRUE(on_fabric_twin(soft.config, soft.config.ports[0]));
  EXPECT_FALSE(on_fabric_twin(verbs.config, verbs.config.ports[0]));
}

TEST(ConfigLoader, AVerbsSectionWithoutVerbsPortsIsIgnoredWithAWarning) {
  auto loaded = load_config_file(shipped_config("loopback-demo.yaml"),
                                 {.overrides = {"verbs.rnic=software"}});
  ASSERT_TRUE(loaded.ok()) << errors_of(loaded);
  EXPECT_THAT(loaded.diagnostics.to_text(), HasSubstr("ignored: no port uses backend verbs"));
}

TEST(Defaults, DcqcnDefaultsAreNvidiasColumn) {
  auto loaded = load_inline(kMinimalConfig);
  ASSERT_TRUE(loaded.ok()) << errors_of(loaded);
  const DcqcnConfig& d = loaded.config.transport.dcqcn;
  EXPECT_TRUE(d.enabled);
  EXPECT_DOUBLE_EQ(d.alpha_gain, 5.0 / 1024);  // DCE_TCP_G 1019
  EXPECT_EQ(d.alpha_update_period_ns, 1'000u);
  EXPECT_DOUBLE_EQ(d.initial_alpha, 1023.0 / 1024);
  EXPECT_EQ(d.rate_reduce_period_ns, 4'000u);
  EXPECT_DOUBLE_EQ(d.rate_cut_scale, 0.5);
  EXPECT_DOUBLE_EQ(d.max_rate_cut, 0.5);
  EXPECT_EQ(d.rate_increase_period_ns, 300'000u);
  EXPECT_EQ(d.rate_increase_bytes, 32'767u);
  EXPECT_EQ(d.fast_recovery_stages, 1u);
  EXPECT_EQ(d.additive_increase_bps, 5'000'000u);
  EXPECT_EQ(d.hyper_increase_bps, 50'000'000u);
  EXPECT_EQ(d.min_rate_bps, 1'000'000u);
  EXPECT_EQ(d.rate_on_first_cnp_bps, 0u);
  EXPECT_FALSE(d.clamp_target_rate);
  EXPECT_TRUE(d.clamp_target_rate_after_time_increase);
  EXPECT_EQ(d.min_time_between_cnps_ns, 4'000u);
}

TEST(Defaults, EverySectionHasItsDocumentedDefault) {
  auto loaded = load_inline(kMinimalConfig);
  ASSERT_TRUE(loaded.ok()) << errors_of(loaded);
  const RunConfig& c = loaded.config;
  EXPECT_EQ(c.run.name, "inline");
  EXPECT_EQ(c.run.seed, 1u);
  EXPECT_EQ(c.workload.jobs[0].name, "job0");
  EXPECT_EQ(c.workload.jobs[0].mode, ReplayMode::kFull);
  EXPECT_EQ(c.workload.comm_size, SizeConvention::kInput);
  EXPECT_EQ(c.ports[0].backend, Backend::kLoopback);
  EXPECT_EQ(c.ports[0].speed_bps, 100'000'000'000u);
  EXPECT_EQ(c.ports[0].mtu, 4200u);
  EXPECT_EQ(c.ports[0].qos.data.dscp, 26u);
  EXPECT_EQ(c.ports[0].qos.data.ecn, EcnCodepoint::kEct0);
  EXPECT_EQ(c.ports[0].qos.cnp.dscp, 48u);
  EXPECT_EQ(c.ports[0].qos.cnp.priority, 6u);
  EXPECT_EQ(c.mapping.jobs[0].placement, Placement::kBlock);
  EXPECT_EQ(c.mapping.jobs[0].key_path, "mapping");
  EXPECT_EQ(c.mapping.addressing.qpn_base, 256u);
  EXPECT_EQ(c.collectives.qps_per_peer, 1u);
  EXPECT_FALSE(c.collectives.algorithm_for(trace::CollectiveType::kAllReduce));
  EXPECT_EQ(c.transport.op, RdmaOp::kWriteWithImmediate);
  EXPECT_EQ(c.transport.retransmit_timeout_ns, 67'108'864u);
  EXPECT_EQ(c.transport.retry_count, 7u);
  EXPECT_EQ(c.transport.retransmission, config::Retransmission::kAdaptive);
  EXPECT_EQ(c.transport.adaptive_first_timeout_ns, 0u);  // a quarter of the QP's timeout
  EXPECT_FALSE(c.transport.retransmission_model_set);
  EXPECT_TRUE(c.transport.naks_count_as_retries);
  EXPECT_EQ(c.fabric.topology, Topology::kSingleSwitch);
  EXPECT_EQ(c.fabric.ecn.kmin_bytes, 150'000u);
  EXPECT_EQ(c.fabric.ecn.kmax_bytes, 1'500'000u);
  EXPECT_EQ(c.fabric.ecn.mark_at, EcnMarkPoint::kDequeue);
  EXPECT_EQ(c.fabric.buffer.ingress_reserve_bytes, 16'384u);
  EXPECT_FALSE(c.fabric.pfc.enabled);
  EXPECT_TRUE(c.telemetry.metrics.enabled);
  EXPECT_EQ(c.telemetry.metrics.address, "127.0.0.1");
  EXPECT_EQ(c.telemetry.metrics.port, 9464u);
}

TEST(Overrides, ChangeAnyKeyIncludingListElements) {
  auto loaded = load_inline(
      kMinimalConfig, {"ports[0].mtu=9000", "transport.dcqcn.enabled=false", "fabric.ecn.kmin=50KB",
                       "transport.retransmission=fixed", "transport.naks_count_as_retries=false",
                       "run.seed=42", "workload.jobs[0].iterations=3",
                       "telemetry.metrics.listen=127.0.0.1:9999", "run.time_scale=0.001"});
  ASSERT_TRUE(loaded.ok()) << errors_of(loaded);
  EXPECT_EQ(loaded.config.ports[7].mtu, 9000u);  // ports[0] is the entry making all eight
  EXPECT_FALSE(loaded.config.transport.dcqcn.enabled);
  EXPECT_EQ(loaded.config.fabric.ecn.kmin_bytes, 50'000u);
  EXPECT_EQ(loaded.config.transport.retransmission, config::Retransmission::kFixed);
  EXPECT_FALSE(loaded.config.transport.naks_count_as_retries);
  EXPECT_EQ(loaded.config.run.seed, 42u);
  EXPECT_EQ(loaded.config.workload.jobs[0].iterations, 3u);
  EXPECT_EQ(loaded.config.telemetry.metrics.port, 9999u);
  EXPECT_DOUBLE_EQ(loaded.config.run.time_scale, 0.001);
}

TEST(Overrides, TimeScaleMustNotBeNegativeAndListenPortZeroMeansAnyFreePort) {
  auto bad = load_inline(kMinimalConfig, {"run.time_scale=-1"});
  EXPECT_FALSE(bad.ok());
  EXPECT_THAT(errors_of(bad), HasSubstr("run.time_scale"));
  auto any_port = load_inline(kMinimalConfig, {"telemetry.metrics.listen=127.0.0.1:0"});
  ASSERT_TRUE(any_port.ok()) << errors_of(any_port);
  EXPECT_EQ(any_port.config.telemetry.metrics.port, 0u);
  EXPECT_DOUBLE_EQ(any_port.config.run.time_scale, 0.0);
}

TEST(Overrides, SetTheEcnMarkPointAndTheIngressReserve) {
  auto loaded = load_inline(kMinimalConfig,
                            {"fabric.ecn.mark_at=enqueue", "fabric.buffer.ingress_reserve=0"});
  ASSERT_TRUE(loaded.ok()) << errors_of(loaded);
  EXPECT_EQ(loaded.config.fabric.ecn.mark_at, EcnMarkPoint::kEnqueue);
  EXPECT_EQ(loaded.config.fabric.buffer.ingress_reserve_bytes, 0u);
  auto bad = load_inline(kMinimalConfig, {"fabric.ecn.mark_at=egress"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(errors_of(bad).find("fabric.ecn.mark_at"), std::string::npos) << errors_of(bad);
  EXPECT_NE(errors_of(bad).find("dequeue"), std::string::npos) << errors_of(bad);
}

TEST(Overrides, RedsAverageWeightNeedsMarkingOnEnqueue) {
  auto loaded = load_inline(kMinimalConfig,
                            {"fabric.ecn.mark_at=enqueue", "fabric.ecn.average_weight=0.002"});
  ASSERT_TRUE(loaded.ok()) << errors_of(loaded);
  EXPECT_DOUBLE_EQ(loaded.config.fabric.ecn.average_weight, 0.002);
  EXPECT_DOUBLE_EQ(load_inline(kMinimalConfig).config.fabric.ecn.average_weight, 1.0);
  EXPECT_EQ(load_inline(kMinimalConfig).config.fabric.ecn.spacing,
            config::EcnSpacing::kIndependent);
  EXPECT_EQ(load_inline(kMinimalConfig, {"fabric.ecn.spacing=wait"}).config.fabric.ecn.spacing,
            config::EcnSpacing::kWait);
  EXPECT_FALSE(load_inline(kMinimalConfig).config.fabric.ecn.gentle);
  EXPECT_TRUE(load_inline(kMinimalConfig, {"fabric.ecn.gentle=true"}).config.fabric.ecn.gentle);
  EXPECT_EQ(load_inline(kMinimalConfig).config.fabric.sender_jitter_ns, 0u);
  EXPECT_EQ(
      load_inline(kMinimalConfig, {"fabric.sender_jitter=500us"}).config.fabric.sender_jitter_ns,
      500'000u);
  EXPECT_EQ(load_inline(kMinimalConfig).config.fabric.buffer.queue_packets, 0u);
  EXPECT_EQ(load_inline(kMinimalConfig, {"fabric.buffer.queue_packets=100"})
                .config.fabric.buffer.queue_packets,
            100u);
  auto packets = load_inline(kMinimalConfig, {"fabric.buffer.queue_packets=-1"});
  ASSERT_FALSE(packets.ok());
  EXPECT_THAT(errors_of(packets), HasSubstr("fabric.buffer.queue_packets"));
  auto jitter = load_inline(kMinimalConfig, {"fabric.sender_jitter=2s"});
  ASSERT_FALSE(jitter.ok());
  EXPECT_THAT(errors_of(jitter), HasSubstr("fabric.sender_jitter"));
  auto spacing = load_inline(kMinimalConfig, {"fabric.ecn.spacing=even"});
  ASSERT_FALSE(spacing.ok());
  EXPECT_THAT(errors_of(spacing), HasSubstr("fabric.ecn.spacing"));
  EXPECT_THAT(errors_of(spacing), HasSubstr("independent, uniform, wait"));
  auto dequeue = load_inline(kMinimalConfig, {"fabric.ecn.average_weight=0.5"});
  ASSERT_FALSE(dequeue.ok());
  EXPECT_THAT(errors_of(dequeue), HasSubstr("fabric.ecn.average_weight"));
  EXPECT_THAT(errors_of(dequeue), HasSubstr("it needs mark_at: enqueue"));
  for (const char* weight : {"0", "1.5", "-1"}) {
    auto bad = load_inline(kMinimalConfig, {"fabric.ecn.mark_at=enqueue",
                                            std::string("fabric.ecn.average_weight=") + weight});
    EXPECT_FALSE(bad.ok()) << weight;
    EXPECT_THAT(errors_of(bad), HasSubstr("fabric.ecn.average_weight")) << weight;
  }
}

TEST(Overrides, LaterArgumentsWinAndAnEmptyValueRestoresTheDefault) {
  auto loaded = load_inline(std::string(kMinimalConfig) + "    mtu: 1500\n",
                            {"ports[0].mtu=9000", "ports[0].mtu="});
  ASSERT_TRUE(loaded.ok()) << errors_of(loaded);
  EXPECT_EQ(loaded.config.ports[0].mtu, 4200u);
  EXPECT_EQ(loaded.config.transport.pmtu, 4096u);
}

TEST(Overrides, ValuesAreYamlSoListsAndSectionsWork) {
  auto loaded = load_inline(kMinimalConfig, {"fabric.pfc={enabled: true, priorities: [3, 4]}",
                                             "workload.jobs[0].filter.node_types=[COMM_COLL]"});
  ASSERT_TRUE(loaded.ok()) << errors_of(loaded);
  EXPECT_TRUE(loaded.config.fabric.pfc.enabled);
  EXPECT_EQ(loaded.config.fabric.pfc.priorities, (std::vector<uint8_t>{3, 4}));
  ASSERT_EQ(loaded.config.workload.jobs[0].filter.node_types.size(), 1u);
  EXPECT_EQ(loaded.config.workload.jobs[0].filter.node_types[0], trace::NodeType::kCommColl);
}

TEST(Overrides, PathsFromTheCommandLineAreRelativeToTheWorkingDirectory) {
  auto loaded = load_inline(kMinimalConfig, {"workload.jobs[0].trace=some/where/trace"},
                            /*read_traces=*/false);
  EXPECT_EQ(loaded.config.workload.jobs[0].trace, "some/where/trace");
  auto from_file = load_inline(kMinimalConfig, {}, /*read_traces=*/false);
  EXPECT_THAT(from_file.config.workload.jobs[0].trace,
              HasSubstr("configs/traces/allreduce_8r/allreduce"));
}

TEST(Overrides, AnErrorInAnOverriddenValueNamesTheArgument) {
  auto loaded = load_inline(kMinimalConfig, {"ports[0].mtu=big"});
  ASSERT_EQ(loaded.diagnostics.error_count(), 1u);
  const Diagnostic& d = loaded.diagnostics.items()[0];
  EXPECT_EQ(format_diagnostic(d),
            "--set ports[0].mtu=big: ports[0].mtu: expected an integer from 576 to 9216, got "
            "\"big\"");
}

TEST(Diagnostics, FileErrorsReadFileLineColumnPathMessage) {
  auto loaded = load_inline(std::string(kMinimalConfig) + "    mtu: big\n");
  ASSERT_EQ(loaded.diagnostics.error_count(), 1u);
  EXPECT_EQ(format_diagnostic(loaded.diagnostics.items()[0]),
            "inline.yaml:7:10: ports[0].mtu: expected an integer from 576 to 9216, got \"big\"");
}

TEST(Diagnostics, EveryErrorIsReportedNotJustTheFirst) {
  auto loaded = load_inline(std::string(kMinimalConfig) +
                            "    mtu: big\n    speed: slow\n"
                            "transport:\n  retry_count: 99\nfabric:\n  topology: mesh\n");
  EXPECT_EQ(loaded.diagnostics.error_count(), 4u) << errors_of(loaded);
}

TEST(Warnings, DoNotFailTheConfig) {
  auto loaded = load_inline(std::string(kMinimalConfig) +
                            "    dpdk: {vdev: net_ring0}\n"
                            "telemetry:\n  metrics:\n    listen: 0.0.0.0:9464\n"
                            "fabric:\n  buffer: {size: 1MiB}\n");
  EXPECT_TRUE(loaded.ok()) << errors_of(loaded);
  std::string text = errors_of(loaded);
  EXPECT_EQ(loaded.diagnostics.warning_count(), 3u) << text;
  EXPECT_THAT(text, HasSubstr("inline.yaml:7:11: warning: ports[0].dpdk: ignored: ports \"p0\" "
                              "to \"p7\" does not use backend dpdk"));
  EXPECT_THAT(text, HasSubstr("reachable beyond this machine"));
  EXPECT_THAT(text, HasSubstr("warning: fabric.ecn.kmax: kmax (1500 KB) is above the switch "
                              "buffer (1 MiB)"));
}

TEST(Warnings, FabricWithoutLoopbackPortsIsIgnored) {
  auto loaded = load_inline(R"(workload:
  jobs:
    - trace: traces/allreduce_8r/allreduce
ports:
  - name: d
    count: 2
    backend: dpdk
    dpdk: {vdev: "net_ring{i}"}
mapping:
  jobs: [{placement: block, ranks_per_port: 8}]  # each ring device looped to itself
fabric:
  topology: single-switch
)");
  EXPECT_TRUE(loaded.ok()) << errors_of(loaded);
  EXPECT_THAT(errors_of(loaded),
              HasSubstr("inline.yaml:12:3: warning: fabric: ignored by this run: the "
                        "fabric twin serves loopback ports and the software RNIC"));
  EXPECT_THAT(errors_of(loaded), HasSubstr("`run --predict` uses it"));
}

TEST(Loading, WithoutTracesPlacesOnlyJobsThatStateTheirSize) {
  auto loaded = load_inline(R"(workload:
  jobs:
    - trace: does/not/exist
      world_size: 4
ports:
  - name: p
    count: 2
)",
                            {}, /*read_traces=*/false);
  EXPECT_TRUE(loaded.ok()) << errors_of(loaded);
  ASSERT_TRUE(loaded.placements[0]);
  EXPECT_EQ(loaded.placements[0]->port(3), 1u);
  EXPECT_FALSE(loaded.traces[0]);
}

TEST(Loading, ConvenienceLoaderThrowsEveryError) {
  try {
    LoadOptions options;
    options.overrides = {"ports[0].mtu=big", "ports[1].speed=slow"};
    load_run_config(shipped_config("dpdk-lab.yaml"), options);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.errors().size(), 2u);
    EXPECT_THAT(e.what(), HasSubstr("(and 1 more)"));
  }
  EXPECT_NO_THROW(load_run_config(shipped_config("loopback-demo.yaml")));
}

TEST(Loading, MissingFileIsAnErrorNotACrash) {
  auto loaded = load_config_file("/nonexistent/run.yaml");
  ASSERT_EQ(loaded.diagnostics.error_count(), 1u);
  EXPECT_EQ(format_diagnostic(loaded.diagnostics.items()[0]),
            "/nonexistent/run.yaml: no such file");
}

// Whatever the bytes, the loader reports and returns: it never throws or crashes.
TEST(Loading, SurvivesMutatedAndHostileInput) {
  std::string base = R"(run: {name: x, seed: 3}
workload:
  jobs:
    - name: a
      trace: traces/allreduce_8r/allreduce
      filter: {node_ids: {from: 1, to: 9}, node_types: [COMM_COLL], process_groups: ["1"]}
ports:
  - {name: p, count: 8, mtu: 4200, speed: 100Gbps, mac: "02:00:00:00:00:01", ipv4: 10.0.0.1}
mapping:
  jobs: [{job: a, placement: explicit, rank_ports: [p0, p1, p2, p3, p4, p5, p6, p7]}]
transport: {pmtu: 4096, dcqcn: {alpha_gain: 1/256, min_rate: 10Mbps}}
fabric: {topology: leaf-spine, leaf_spine: {ports_per_leaf: 2}, ecn: {kmin: 5KB, kmax: 200KB}}
)";
  std::mt19937 rng(12345);
  const std::string alphabet = " :-[]{},\n\t#&*!|>'\"%@`0x9aZ.";
  for (int round = 0; round < 400; ++round) {
    std::string text = base;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0:
          text.erase(at, 1 + rng() % 3);
          break;
        case 1:
          text.insert(at, 1, alphabet[rng() % alphabet.size()]);
          break;
        default:
          text[at] = alphabet[rng() % alphabet.size()];
      }
    }
    EXPECT_NO_THROW(load_inline(text, {}, /*read_traces=*/false)) << text;
  }
  for (const std::string& hostile :
       {std::string("\0\1\2", 3), std::string(5000, '['), std::string("a: &x [*x]"),
        std::string("? [a]\n: b\n"), std::string("--- |\n  text\n"),
        std::string("ports: !!binary AAAA"),
        std::string("workload: {jobs: [{trace: 1}]}\nports: [{name: [1]}]"), std::string("")}) {
    EXPECT_NO_THROW(load_inline(hostile, {"ports[0].mtu=1"}, false));
  }
}

}  // namespace
}  // namespace etwire::control
