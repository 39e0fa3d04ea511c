// The verbs data plane end to end on the software RNIC: the same flows and bytes as the loopback
// backend for every opcode and message split, ports the run cannot use refused with the device's
// words, failed work completions turned into failed flows with their status, rate limits held by
// the RNIC or by paced posting, and counters a device lacks reported as absent.
#include "dataplane/verbs/verbs_data_plane.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <tuple>

#include "control/load/config_loader.h"
#include "dataplane/verbs/software_rnic.h"
#include "dataplane/verbs/verbs_backend.h"
#include "engine/flow_sink.h"
#include "engine/run_engine.h"
#include "tests/testing/fake_mlx5_sysfs.h"
#include "tests/testing/test_paths.h"
#include "trace/synth/synth.h"

namespace etwire::dataplane {
namespace {

namespace fs = std::filesystem;

// Eight ports at 100 Gb/s on a single switch, all loopback or all verbs on the software RNIC;
// `verbs_port` adds keys to each port's verbs section, `verbs` to the verbs section.
std::string config_text(const std::string& trace, bool verbs, const std::string& verbs_port = "",
                        const std::string& extra = "", const std::string& verbs_section = "") {
  std::string text = fmt::format(
      "run: {{name: t, seed: 1}}\n"
      "workload:\n  jobs:\n    - {{name: j, trace: {}}}\n"
      "ports:\n  - {{name: p, count: 8, speed: 100Gbps, mtu: 4200, ipv4: 10.1.0.1, ",
      trace);
  text += verbs ? fmt::format("backend: verbs, verbs: {{device: \"d{{i}}\"{}}}}}\n", verbs_port)
                : "backend: loopback}\n";
  text += "collectives: {algorithms: {all_reduce: ring}}\n";
  if (verbs) text += fmt::format("verbs: {{rnic: software{}}}\n", verbs_section);
  return text + extra;
}

control::LoadedConfig load(const std::string& text) {
  const fs::path dir = testing::make_scratch_dir("verbs-plane");
  auto loaded = control::load_config_text(text, (dir / "t.yaml").string(), dir.string());
  EXPECT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  return loaded;
}

class Collect final : public engine::FlowSink {
 public:
  void append(const transport::FlowRecord& record) override { flows.push_back(record); }
  void flush() override {}
  std::vector<transport::FlowRecord> flows;
};

struct Outcome {
  engine::RunResults results;
  std::vector<transport::FlowRecord> flows;
};

Outcome run(const control::LoadedConfig& loaded, DataPlaneFactory factory = {}) {
  Collect sink;
  engine::RunOptions options;
  options.flows = &sink;
  options.data_plane = std::move(factory);
  engine::RunEngine engine(loaded, std::move(options));
  Outcome outcome{engine.run(), {}};
  outcome.flows = std::move(sink.flows);
  return outcome;
}

// What a flow is, apart from when it happened and which QP numbers carried it.
using FlowKey = std::tuple<int32_t, int32_t, uint64_t, uint32_t, uint16_t, uint64_t, uint8_t>;
std::map<FlowKey, int> flow_keys(const std::vector<transport::FlowRecord>& flows) {
  std::map<FlowKey, int> keys;
  for (const auto& f : flows) {
    ++keys[{f.tags.src_rank, f.tags.dst_rank, f.tags.collective, f.tags.chunk, f.tags.qp_index,
            f.bytes, static_cast<uint8_t>(f.status)}];
  }
  return keys;
}

// The software RNIC's data plane, with the RNIC kept at hand for faults.
DataPlaneFactory on_software_rnic(SoftwareRnic** rnic_out, SoftwareRnicOptions options = {}) {
  return [rnic_out, options](const config::RunConfig& config, transport::FlowObserver& observer) {
    auto rnic = std::make_unique<SoftwareRnic>(config, options);
    if (rnic_out != nullptr) *rnic_out = rnic.get();
    clock::VirtualClock* clock = &rnic->clock();
    return std::make_unique<VerbsDataPlane>(config, observer, std::move(rnic), clock);
  };
}

class UpstreamAllReduce : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(UpstreamAllReduce, GivesTheLoopbackBackendsFlowsAndBytes) {
  ETWIRE_REQUIRE_UPSTREAM_TRACES();
  const auto [op, max_message] = GetParam();
  const std::string trace =
      (testing::upstream_traces() / "astra-sim/microbench_all_reduce_8npus_1MB/all_reduce")
          .string();
  const std::string transport = fmt::format("transport: {{op: {}}}\n", op);
  const Outcome loopback = run(load(config_text(trace, false, "", transport)));
  const Outcome verbs = run(
      load(config_text(trace, true, "", transport, fmt::format(", max_message: {}", max_message))),
      make_verbs_data_plane);
  ASSERT_EQ(loopback.results.status, engine::RunStatus::kCompleted) << loopback.results.diagnosis;
  ASSERT_EQ(verbs.results.status, engine::RunStatus::kCompleted) << verbs.results.diagnosis;
  EXPECT_GT(loopback.flows.size(), 0u);
  EXPECT_EQ(verbs.results.flows, loopback.results.flows);
  EXPECT_EQ(flow_keys(verbs.flows), flow_keys(loopback.flows));
  uint64_t loopback_bytes = 0;
  uint64_t verbs_bytes = 0;
  for (const auto& f : loopback.flows) loopback_bytes += f.bytes;
  for (const auto& f : verbs.flows) verbs_bytes += f.bytes;
  EXPECT_EQ(verbs_bytes, loopback_bytes);
  // The wire carried them too: every port sent at least its payload.
  for (const PortRecord& port : verbs.results.ports) {
    EXPECT_GE(port.tx_bytes, verbs_bytes / 8) << port.name;
    EXPECT_EQ(port.absent, 0u);  // the software RNIC counts everything
  }
  for (const auto& f : verbs.flows) {
    EXPECT_GE(f.fct(), 0) << f.flow_id;
    EXPECT_GE(f.finished_at, f.first_byte_out);
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, UpstreamAllReduce,
                         ::testing::Combine(::testing::Values("write", "write-with-imm", "send"),
                                            ::testing::Values("1MiB", "48KiB")));

TEST(VerbsDataPlane, FlowRecordsCarryTheDevicesQpNumbers) {
  const auto loaded = load(config_text(
      (testing::source_dir() / "configs/traces/allreduce_8r/allreduce").string(), true));
  const Outcome verbs = run(loaded, make_verbs_data_plane);
  ASSERT_EQ(verbs.results.status, engine::RunStatus::kCompleted) << verbs.results.diagnosis;
  std::map<std::pair<int32_t, int32_t>, std::pair<uint32_t, uint32_t>> by_pair;
  for (const auto& f : verbs.flows) {
    // The software RNIC numbers its QPs from 0x800, above every number of this plan.
    EXPECT_GE(f.qpn, 0x800u);
    EXPECT_GE(f.dest_qpn, 0x800u);
    EXPECT_NE(f.qpn, f.dest_qpn);
    auto [it, fresh] = by_pair.try_emplace({f.tags.src_rank, f.tags.dst_rank}, f.qpn, f.dest_qpn);
    if (!fresh) {
      EXPECT_EQ(it->second, std::make_pair(f.qpn, f.dest_qpn));
    }
  }
  EXPECT_EQ(by_pair.size(), 8u);  // a ring: one connection per rank
}

// Port checks: the refusal names the port, its key and what the device said.
TEST(VerbsDataPlane, PortsTheRunCannotUseAreRefused) {
  const std::string trace =
      (testing::source_dir() / "configs/traces/allreduce_8r/allreduce").string();
  struct NoFlows final : transport::FlowObserver {
    void on_flow_delivered(const transport::FlowRecord&) override {}
    void on_flow_finished(const transport::FlowRecord&) override {}
  } observer;
  auto refusal = [&](const control::LoadedConfig& loaded,
                     const std::function<void(SoftwareRnic&)>& fault) -> std::string {
    auto rnic = std::make_unique<SoftwareRnic>(loaded.config);
    fault(*rnic);
    clock::VirtualClock* clock = &rnic->clock();
    try {
      VerbsDataPlane plane(loaded.config, observer, std::move(rnic), clock);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  };
  const auto loaded = load(config_text(trace, true));
  EXPECT_EQ(refusal(loaded, [](SoftwareRnic&) {}), "");
  EXPECT_EQ(refusal(loaded, [](SoftwareRnic& r) { r.set_port_state(2, IBV_PORT_DOWN); }),
            "port \"p2\" (ports[0]): d2 port 1 is not up: ibv_query_port reports state 1 "
            "(down); bring its link up before the run");
  EXPECT_NE(refusal(loaded, [](SoftwareRnic& r) { r.set_active_mtu(5, IBV_MTU_1024); })
                .find("port \"p5\" (ports[0]): d5 port 1: active MTU 1024 (ibv_query_port) is "
                      "below the run's path MTU 4096 (transport.pmtu)"),
            std::string::npos);
  const auto v1 = load(config_text(trace, true, ", gid_index: 2"));
  const std::string wrong = refusal(v1, [](SoftwareRnic&) {});
  EXPECT_NE(wrong.find("d0 port 1: GID 2 (verbs.gid_index) is RoCE v1 10.1.0.1, but the port is "
                       "configured as RoCE v2 10.1.0.1 (ipv4)"),
            std::string::npos)
      << wrong;
  EXPECT_NE(wrong.find("gid   3  RoCE v2  10.1.0.1"), std::string::npos) << wrong;
  const auto beyond = load(config_text(trace, true, ", gid_index: 9"));
  EXPECT_NE(refusal(beyond, [](SoftwareRnic&) {})
                .find("GID 9 (verbs.gid_index): ibv_query_gid_ex "
                      "failed: Invalid argument"),
            std::string::npos);
}

// A device that lacks some counters and has no RoCE v2 entry for one port's address: wraps a
// software RNIC device and hides them.
class LimitedDevice final : public nic::verbs::VerbsDevice {
 public:
  LimitedDevice(std::unique_ptr<nic::verbs::VerbsDevice> inner, bool hide_gids)
      : inner_(std::move(inner)), hide_gids_(hide_gids) {}
  const std::string& name() const override { return inner_->name(); }
  int query_port(uint8_t port, ibv_port_attr& attr) override {
    return inner_->query_port(port, attr);
  }
  int query_gid(uint8_t port, uint32_t index, ibv_gid_entry& entry) override {
    if (hide_gids_ && index == 3) return ENODATA;
    return inner_->query_gid(port, index, entry);
  }
  nic::verbs::MemoryRegion register_memory(void* address, size_t length, int access) override {
    return inner_->register_memory(address, length, access);
  }
  std::unique_ptr<nic::verbs::VerbsCq> create_cq(int entries) override {
    return inner_->create_cq(entries);
  }
  std::unique_ptr<nic::verbs::VerbsQp> create_qp(nic::verbs::VerbsCq& send,
                                                 nic::verbs::VerbsCq& recv,
                                                 ibv_qp_cap& caps) override {
    return inner_->create_qp(send, recv, caps);
  }
  std::vector<std::pair<std::string, uint64_t>> read_counters(uint8_t port) override {
    auto counters = inner_->read_counters(port);
    std::erase_if(counters, [](const auto& c) {
      return c.first == "pfc_pauses_sent" || c.first == "retransmitted_packets";
    });
    return counters;
  }

 private:
  std::unique_ptr<nic::verbs::VerbsDevice> inner_;
  bool hide_gids_;
};

class LimitedRnic final : public nic::verbs::VerbsProvider {
 public:
  LimitedRnic(const config::RunConfig& config, std::string hide_gids_of)
      : rnic_(config), hide_gids_of_(std::move(hide_gids_of)) {}
  std::unique_ptr<nic::verbs::VerbsDevice> open(const std::string& name) override {
    return std::make_unique<LimitedDevice>(rnic_.open(name), name == hide_gids_of_);
  }
  clock::VirtualClock& clock() { return rnic_.clock(); }

 private:
  SoftwareRnic rnic_;
  std::string hide_gids_of_;
};

TEST(VerbsDataPlane, CountersADeviceLacksAreAbsentNotZero) {
  const auto loaded = load(config_text(
      (testing::source_dir() / "configs/traces/allreduce_8r/allreduce").string(), true));
  const Outcome outcome =
      run(loaded, [](const config::RunConfig& config, transport::FlowObserver& observer) {
        auto rnic = std::make_unique<LimitedRnic>(config, "");
        clock::VirtualClock* clock = &rnic->clock();
        return std::make_unique<VerbsDataPlane>(config, observer, std::move(rnic), clock);
      });
  ASSERT_EQ(outcome.results.status, engine::RunStatus::kCompleted);
  for (const PortRecord& port : outcome.results.ports) {
    for (size_t f = 0; f < kPortCounterFields.size(); ++f) {
      const std::string_view name = kPortCounterFields[f].name;
      EXPECT_EQ(port.counted(f), name != "pfc_pauses_sent" && name != "retransmitted_packets")
          << port.name << " " << name;
    }
    EXPECT_GT(port.tx_packets, 0u);
  }

  struct NoFlows final : transport::FlowObserver {
    void on_flow_delivered(const transport::FlowRecord&) override {}
    void on_flow_finished(const transport::FlowRecord&) override {}
  } observer;
  auto rnic = std::make_unique<LimitedRnic>(loaded.config, "d4");
  clock::VirtualClock* clock = &rnic->clock();
  try {
    VerbsDataPlane plane(loaded.config, observer, std::move(rnic), clock);
    ADD_FAILURE() << "a port without a GID for its address was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("d4 port 1: no RoCE v2 GID has the port's address "
                                         "10.1.0.5 (ipv4)"),
              std::string::npos)
        << e.what();
  }
}

// On an RNIC (the wall-clock path, here over a software RNIC's devices) the DCQCN settings of each
// port's netdev are read back, and with verbs.dcqcn: apply written first; a port whose netdev has
// none says so. The sysfs trees are fake ones in a scratch directory.
TEST(VerbsDataPlane, DcqcnSettingsAreCheckedOrAppliedOnTheDevice) {
  const fs::path root = testing::make_scratch_dir("verbs-dcqcn");
  const RnicHostPaths paths{(root / "infiniband").string(), (root / "net").string()};
  // d0 port 1's GID 3 is on eth0, which holds NVIDIA's defaults but for dce_tcp_g.
  auto values = testing::nvidia_dcqcn_defaults();
  values["roce_rp/dce_tcp_g"] = 1000;
  testing::write_mlx5_ecn(root / "infiniband", root / "net", "d0", "eth0", 3, values);
  const fs::path ecn = root / "net/eth0/ecn";

  struct NoFlows final : transport::FlowObserver {
    void on_flow_delivered(const transport::FlowRecord&) override {}
    void on_flow_finished(const transport::FlowRecord&) override {}
  } observer;
  const std::string trace =
      (testing::source_dir() / "configs/traces/allreduce_8r/allreduce").string();
  auto notes_of = [&](const control::LoadedConfig& loaded) {
    VerbsDataPlane plane(loaded.config, observer, std::make_unique<SoftwareRnic>(loaded.config),
                         nullptr, paths);
    std::string all;
    for (const std::string& note : plane.notes()) all += note + "\n";
    return all;
  };
  const auto check = load(config_text(trace, true, ", dcqcn: check"));
  std::string notes = notes_of(check);
  EXPECT_NE(notes.find("p0: DCQCN on d0 (eth0) differs from transport.dcqcn: " +
                       (ecn / "roce_rp/dce_tcp_g").string() +
                       " 1000 (transport.dcqcn.alpha_gain wants 1019)\n"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("p1: the DCQCN settings of d1 port 1 can be neither read nor applied"),
            std::string::npos)
      << notes;
  const auto apply = load(config_text(trace, true, ", dcqcn: apply"));
  notes = notes_of(apply);
  EXPECT_NE(notes.find("p0: DCQCN on d0 (eth0) matches transport.dcqcn\n"), std::string::npos)
      << notes;
  std::ifstream written(ecn / "roce_rp/dce_tcp_g");
  uint64_t value = 0;
  written >> value;
  EXPECT_EQ(value, 1019u);
  fs::remove_all(root);
}

TEST(VerbsDataPlane, ALossyFabricFailsFlowsWithRetryExceeded) {
  const auto loaded = load(config_text(
      (testing::source_dir() / "configs/traces/allreduce_8r/allreduce").string(), true, "",
      "fabric: {drop_probability: 1}\ntransport: {retry_count: 1, retransmit_timeout: "
      "32.768us}\n"));
  const Outcome outcome = run(loaded, make_verbs_data_plane);
  EXPECT_EQ(outcome.results.status, engine::RunStatus::kFlowsFailed) << outcome.results.diagnosis;
  const auto& by_status = outcome.results.flows_by_status;
  EXPECT_EQ(by_status[static_cast<size_t>(transport::FlowStatus::kCompleted)], 0u);
  EXPECT_GT(by_status[static_cast<size_t>(transport::FlowStatus::kRetryExceeded)], 0u);
  EXPECT_EQ(outcome.results.failed_flows, outcome.results.flows);
  const bool quoted = std::any_of(outcome.results.notes.begin(), outcome.results.notes.end(),
                                  [](const std::string& n) {
                                    return n.find("work completion IBV_WC_RETRY_EXC_ERR") != n.npos;
                                  });
  EXPECT_TRUE(quoted);
  for (const auto& f : outcome.flows) {
    EXPECT_TRUE(f.status == transport::FlowStatus::kRetryExceeded ||
                f.status == transport::FlowStatus::kFlushed)
        << transport::flow_status_name(f.status);
  }
}

TEST(VerbsDataPlane, ARemoteAccessErrorFailsTheFlowsIntoThatDevice) {
  const auto loaded = load(config_text(
      (testing::source_dir() / "configs/traces/allreduce_8r/allreduce").string(), true));
  SoftwareRnic* rnic = nullptr;
  auto factory = on_software_rnic(&rnic);
  const Outcome outcome = run(loaded, [&](const config::RunConfig& c, transport::FlowObserver& o) {
    auto plane = factory(c, o);
    rnic->revoke_remote_write("d3");
    return plane;
  });
  EXPECT_EQ(outcome.results.status, engine::RunStatus::kFlowsFailed);
  size_t into_d3 = 0;
  for (const auto& f : outcome.flows) {
    if (f.dst_port == 3) {
      ++into_d3;
      EXPECT_TRUE(f.status == transport::FlowStatus::kRemoteAccessError ||
                  f.status == transport::FlowStatus::kFlushed)
          << transport::flow_status_name(f.status);
    } else {
      EXPECT_EQ(f.status, transport::FlowStatus::kCompleted) << f.dst_port;
    }
  }
  EXPECT_GT(into_d3, 0u);
  EXPECT_EQ(outcome.results
                .flows_by_status[static_cast<size_t>(transport::FlowStatus::kRemoteAccessError)],
            1u);  // the first; what followed on the QP was flushed
}

// 8 MiB all-reduce chunks are 1 MiB messages; each QP is limited to 10 Gb/s.
TEST(VerbsDataPlane, RateLimitsAreHeldByTheRnicOrByPacedPosting) {
  const fs::path dir = testing::make_scratch_dir("verbs-rate");
  synth::MicrobenchSpec spec;
  spec.collective = trace::CollectiveType::kAllReduce;
  spec.bytes = 8 << 20;
  spec.ranks = 8;
  const std::string prefix = (dir / "ar").string();
  synth::write_microbench(spec, prefix);
  const auto loaded =
      load(config_text(prefix, true, ", rate_limit: 10Gbps", "", ", max_message: 64KiB"));
  for (const bool limiter : {true, false}) {
    SoftwareRnicOptions options;
    options.rate_limiter = limiter;
    const Outcome outcome = run(loaded, on_software_rnic(nullptr, options));
    ASSERT_EQ(outcome.results.status, engine::RunStatus::kCompleted) << outcome.results.diagnosis;
    for (const PortRecord& port : outcome.results.ports) {
      EXPECT_EQ(port.rate_limit_bps, 10'000'000'000u);
      EXPECT_EQ(port.rate_limited_by, limiter ? "rnic" : "posting") << port.name;
    }
    for (const auto& f : outcome.flows) {
      // A message takes its payload's time at 10 Gb/s, and not much more. Paced posting lets a
      // message's first work request go at once: n requests take n - 1 spacings and one at line
      // rate.
      const double ideal_ns = static_cast<double>(f.bytes) * 8 / 10.0;
      const double requests = std::ceil(static_cast<double>(f.bytes) / (64 << 10));
      const double floor = limiter ? 0.99 : (requests - 1) / requests;
      EXPECT_GE(static_cast<double>(f.fct()), floor * ideal_ns) << limiter;
      EXPECT_LE(static_cast<double>(f.fct()), 1.15 * ideal_ns) << limiter;
    }
    const bool said = std::any_of(
        outcome.results.notes.begin(), outcome.results.notes.end(), [&](const std::string& n) {
          return n.find(limiter ? "held by the RNIC" : "etwire paces the posting") != n.npos;
        });
    EXPECT_TRUE(said);
  }
}

}  // namespace
}  // namespace etwire::dataplane
