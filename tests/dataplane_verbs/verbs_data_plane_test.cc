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
#include <memory>
#include <tuple>

#include "control/resolve/config_loader.h"
#include "dataplane/loopback/loopback_data_plane.h"
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

control::RunPlan load(const std::string& text) {
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

// On the loopback data plane unless `factory` says otherwise.
Outcome run(const control::RunPlan& loaded,
            DataPlaneFactory factory = loopback_data_plane_factory()) {
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
  auto refusal = [&](const control::RunPlan& loaded,
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

// Between the data plane and a software RNIC: a device and a QP that pass every call on; the
// wrappers below change the calls they are about.
class ForwardingDevice : public nic::verbs::VerbsDevice {
 public:
  explicit ForwardingDevice(std::unique_ptr<nic::verbs::VerbsDevice> inner)
      : inner_(std::move(inner)) {}
  const std::string& name() const override { return inner_->name(); }
  int query_port(uint8_t port, ibv_port_attr& attr) override {
    return inner_->query_port(port, attr);
  }
  int query_gid(uint8_t port, uint32_t index, ibv_gid_entry& entry) override {
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
    return inner_->read_counters(port);
  }

 protected:
  std::unique_ptr<nic::verbs::VerbsDevice> inner_;
};

class ForwardingQp : public nic::verbs::VerbsQp {
 public:
  explicit ForwardingQp(std::unique_ptr<nic::verbs::VerbsQp> inner) : inner_(std::move(inner)) {}
  uint32_t qp_num() const override { return inner_->qp_num(); }
  ibv_qp_state state() const override { return inner_->state(); }
  int modify(ibv_qp_attr& attr, int mask) override { return inner_->modify(attr, mask); }
  int set_rate_limit(uint32_t kbps) override { return inner_->set_rate_limit(kbps); }
  int post_send(ibv_send_wr* wr, ibv_send_wr** bad) override { return inner_->post_send(wr, bad); }
  int post_recv(ibv_recv_wr* wr, ibv_recv_wr** bad) override { return inner_->post_recv(wr, bad); }

 protected:
  std::unique_ptr<nic::verbs::VerbsQp> inner_;
};

// A device that lacks some counters and has no RoCE v2 entry for one port's address: wraps a
// software RNIC device and hides them.
class LimitedDevice final : public ForwardingDevice {
 public:
  LimitedDevice(std::unique_ptr<nic::verbs::VerbsDevice> inner, bool hide_gids)
      : ForwardingDevice(std::move(inner)), hide_gids_(hide_gids) {}
  int query_gid(uint8_t port, uint32_t index, ibv_gid_entry& entry) override {
    if (hide_gids_ && index == 3) return ENODATA;
    return inner_->query_gid(port, index, entry);
  }
  std::vector<std::pair<std::string, uint64_t>> read_counters(uint8_t port) override {
    auto counters = inner_->read_counters(port);
    std::erase_if(counters, [](const auto& c) {
      return c.first == "pfc_pauses_sent" || c.first == "retransmitted_packets";
    });
    return counters;
  }

 private:
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

// Faults a device can have mid-run, put between the data plane and a software RNIC. QPs are
// counted in creation order: a connection creates its requester, then its responder.
struct Faults {
  // Before post_send number `post` (from 0) on QP `qp`, with the RNIC's QP at hand: an errno
  // refuses the post, 0 lets it through.
  std::function<int(size_t qp, uint64_t post, nic::verbs::VerbsQp& inner)> post_send;
  // Before each ibv_modify_qp of QP `qp`: an errno refuses it.
  std::function<int(size_t qp, const ibv_qp_attr& attr)> modify;
  // ibv_modify_qp_rate_limit on QP `qp` of `device`: an errno refuses it, 0 leaves the answer to
  // the RNIC.
  std::function<int(const std::string& device, size_t qp)> rate_limit;
  // The completion queues of `cq_device` (every device's if empty) really hold `cq_entries`
  // (0: as asked), and report that or, with report_asked_entries, what was asked.
  std::string cq_device;
  int cq_entries = 0;
  bool report_asked_entries = false;
  // Polls of that device's queues find nothing until one of its QPs is in error: a poller that
  // falls behind until its queue overruns.
  bool stall_polls = false;
};

class FaultyQp final : public ForwardingQp {
 public:
  FaultyQp(std::unique_ptr<nic::verbs::VerbsQp> inner, const Faults& faults,
           const std::string& device, size_t index)
      : ForwardingQp(std::move(inner)), faults_(faults), device_(device), index_(index) {}
  int modify(ibv_qp_attr& attr, int mask) override {
    if (faults_.modify) {
      if (int e = faults_.modify(index_, attr); e != 0) return e;
    }
    return inner_->modify(attr, mask);
  }
  int set_rate_limit(uint32_t kbps) override {
    if (faults_.rate_limit) {
      if (int e = faults_.rate_limit(device_, index_); e != 0) return e;
    }
    return inner_->set_rate_limit(kbps);
  }
  int post_send(ibv_send_wr* wr, ibv_send_wr** bad) override {
    if (faults_.post_send) {
      if (int e = faults_.post_send(index_, posts_++, *inner_); e != 0) {
        *bad = wr;
        return e;
      }
    }
    return inner_->post_send(wr, bad);
  }

 private:
  const Faults& faults_;
  std::string device_;
  size_t index_;
  uint64_t posts_ = 0;
};

class FaultyCq final : public nic::verbs::VerbsCq {
 public:
  // `stalled_until_error`: the device's QPs, when polls stall until one is in error.
  FaultyCq(std::unique_ptr<nic::verbs::VerbsCq> inner, int reported,
           const std::vector<nic::verbs::VerbsQp*>* stalled_until_error)
      : inner_(std::move(inner)), reported_(reported), stalled_(stalled_until_error) {}
  int poll(int entries, ibv_wc* wc) override {
    if (stalled_ != nullptr) {
      const bool error = std::any_of(stalled_->begin(), stalled_->end(),
                                     [](const auto* qp) { return qp->state() == IBV_QPS_ERR; });
      if (!error) return 0;
      stalled_ = nullptr;
    }
    return inner_->poll(entries, wc);
  }
  int capacity() const override { return reported_; }
  nic::verbs::VerbsCq& inner() { return *inner_; }

 private:
  std::unique_ptr<nic::verbs::VerbsCq> inner_;
  int reported_;
  const std::vector<nic::verbs::VerbsQp*>* stalled_;
};

class FaultyDevice final : public ForwardingDevice {
 public:
  FaultyDevice(std::unique_ptr<nic::verbs::VerbsDevice> inner, const Faults& faults, size_t& qps)
      : ForwardingDevice(std::move(inner)), faults_(faults), qps_(qps) {}
  std::unique_ptr<nic::verbs::VerbsCq> create_cq(int entries) override {
    const bool faulty = faults_.cq_device.empty() || faults_.cq_device == name();
    const int real = faulty && faults_.cq_entries != 0 ? faults_.cq_entries : entries;
    return std::make_unique<FaultyCq>(inner_->create_cq(real),
                                      faults_.report_asked_entries ? entries : real,
                                      faulty && faults_.stall_polls ? &qps_here_ : nullptr);
  }
  std::unique_ptr<nic::verbs::VerbsQp> create_qp(nic::verbs::VerbsCq& send,
                                                 nic::verbs::VerbsCq& recv,
                                                 ibv_qp_cap& caps) override {
    auto qp = inner_->create_qp(static_cast<FaultyCq&>(send).inner(),
                                static_cast<FaultyCq&>(recv).inner(), caps);
    qps_here_.push_back(qp.get());
    return std::make_unique<FaultyQp>(std::move(qp), faults_, name(), qps_++);
  }

 private:
  const Faults& faults_;
  size_t& qps_;                                 // QPs created on every device so far
  std::vector<nic::verbs::VerbsQp*> qps_here_;  // the RNIC's QPs on this device
};

class FaultyRnic final : public nic::verbs::VerbsProvider {
 public:
  FaultyRnic(const config::RunConfig& config, Faults faults, SoftwareRnicOptions options = {})
      : rnic_(config, options), faults_(std::move(faults)) {}
  std::unique_ptr<nic::verbs::VerbsDevice> open(const std::string& name) override {
    return std::make_unique<FaultyDevice>(rnic_.open(name), faults_, qps_);
  }
  clock::VirtualClock& clock() { return rnic_.clock(); }

 private:
  SoftwareRnic rnic_;
  Faults faults_;
  size_t qps_ = 0;
};

DataPlaneFactory on_faulty_rnic(const Faults& faults, SoftwareRnicOptions options = {}) {
  return [faults, options](const config::RunConfig& config, transport::FlowObserver& observer) {
    auto rnic = std::make_unique<FaultyRnic>(config, faults, options);
    clock::VirtualClock* clock = &rnic->clock();
    return std::make_unique<VerbsDataPlane>(config, observer, std::move(rnic), clock);
  };
}

// The flows of each connection (by its sending QP), in posting order.
std::map<uint32_t, std::vector<transport::FlowRecord>> by_connection(
    const std::vector<transport::FlowRecord>& flows) {
  std::map<uint32_t, std::vector<transport::FlowRecord>> out;
  for (const auto& f : flows) out[f.qpn].push_back(f);
  for (auto& [qpn, list] : out) {
    std::sort(list.begin(), list.end(),
              [](const auto& x, const auto& y) { return x.flow_id < y.flow_id; });
  }
  return out;
}

size_t count_of(const engine::RunResults& results, transport::FlowStatus status) {
  return results.flows_by_status[static_cast<size_t>(status)];
}

std::string notes_of(const engine::RunResults& results) {
  std::string all;
  for (const std::string& note : results.notes) all += note + "\n";
  return all;
}

std::string allreduce_8r() {
  return (testing::source_dir() / "configs/traces/allreduce_8r/allreduce").string();
}

// A synthetic 8-rank all-reduce of `bytes` in `dir`; returns its prefix.
std::string synthetic_allreduce(uint64_t bytes, const std::string& scratch) {
  const fs::path dir = testing::make_scratch_dir(scratch);
  synth::MicrobenchSpec spec;
  spec.collective = trace::CollectiveType::kAllReduce;
  spec.bytes = bytes;
  spec.ranks = 8;
  const std::string prefix = (dir / "ar").string();
  synth::write_microbench(spec, prefix);
  return prefix;
}

// Records what the data plane asks of each QP it creates (its capabilities and every transition's
// attributes) on the way to a software RNIC.
struct QpLog {
  uint32_t qpn = 0;
  ibv_qp_cap caps{};
  std::vector<std::pair<ibv_qp_attr, int>> modifications;
};

class RecordingQp final : public ForwardingQp {
 public:
  RecordingQp(std::unique_ptr<nic::verbs::VerbsQp> inner, QpLog& log)
      : ForwardingQp(std::move(inner)), log_(log) {}
  int modify(ibv_qp_attr& attr, int mask) override {
    log_.modifications.emplace_back(attr, mask);
    return inner_->modify(attr, mask);
  }

 private:
  QpLog& log_;
};

class RecordingDevice final : public ForwardingDevice {
 public:
  RecordingDevice(std::unique_ptr<nic::verbs::VerbsDevice> inner, std::vector<QpLog>& logs)
      : ForwardingDevice(std::move(inner)), logs_(logs) {}
  std::unique_ptr<nic::verbs::VerbsQp> create_qp(nic::verbs::VerbsCq& send,
                                                 nic::verbs::VerbsCq& recv,
                                                 ibv_qp_cap& caps) override {
    auto qp = inner_->create_qp(send, recv, caps);
    logs_.push_back({qp->qp_num(), caps, {}});
    return std::make_unique<RecordingQp>(std::move(qp), logs_.back());
  }

 private:
  std::vector<QpLog>& logs_;
};

class RecordingRnic final : public nic::verbs::VerbsProvider {
 public:
  explicit RecordingRnic(const config::RunConfig& config) : rnic_(config) {
    logs_.reserve(64);  // QpLogs stay in place: the QPs hold references to them
  }
  std::unique_ptr<nic::verbs::VerbsDevice> open(const std::string& name) override {
    return std::make_unique<RecordingDevice>(rnic_.open(name), logs_);
  }
  clock::VirtualClock& clock() { return rnic_.clock(); }
  const std::vector<QpLog>& logs() const { return logs_; }

 private:
  SoftwareRnic rnic_;
  std::vector<QpLog> logs_;
};

// The QPs take what the configuration says: queue depth, PSNs, path MTU, timeout, retry and RNR
// counts, traffic class and service level, and the plan's UDP source port in the flow label.
TEST(VerbsDataPlane, QueuePairsTakeTheirAttributesFromTheConfiguration) {
  const auto loaded = load(
      config_text((testing::source_dir() / "configs/traces/allreduce_8r/allreduce").string(), true,
                  "", "transport: {retry_count: 5, retransmit_timeout: 8.388608ms, pmtu: 2048}\n",
                  ", queue_depth: 32, start_psn: 4660, rnr_retry: 6"));
  struct NoFlows final : transport::FlowObserver {
    void on_flow_delivered(const transport::FlowRecord&) override {}
    void on_flow_finished(const transport::FlowRecord&) override {}
  } observer;
  auto rnic = std::make_unique<RecordingRnic>(loaded.config);
  RecordingRnic& recording = *rnic;
  clock::VirtualClock* clock = &rnic->clock();
  VerbsDataPlane plane(loaded.config, observer, std::move(rnic), clock);
  const auto& p0 = loaded.config.ports[0];
  const auto& p1 = loaded.config.ports[1];
  plane.connect({{0, p0.mac, p0.ipv4, std::nullopt, 300},
                 {1, p1.mac, p1.ipv4, std::nullopt, 301},
                 49152 + 77});
  ASSERT_EQ(recording.logs().size(), 2u);
  const QpLog& requester = recording.logs()[0];
  const QpLog& responder = recording.logs()[1];
  EXPECT_EQ(requester.caps.max_send_wr, 32u);
  EXPECT_EQ(responder.caps.max_recv_wr, 32u);  // write-with-imm: receives posted ahead
  // INIT, RTR, RTS each.
  ASSERT_EQ(requester.modifications.size(), 3u);
  const ibv_qp_attr& rtr = requester.modifications[1].first;
  const ibv_qp_attr& rts = requester.modifications[2].first;
  EXPECT_EQ(rtr.qp_state, IBV_QPS_RTR);
  EXPECT_EQ(rtr.path_mtu, IBV_MTU_2048);
  EXPECT_EQ(rtr.rq_psn, 4660u);
  EXPECT_EQ(rtr.ah_attr.grh.traffic_class, 26 << 2 | 2);  // DSCP 26, ECT(0)
  EXPECT_EQ(rtr.ah_attr.sl, 3);
  EXPECT_EQ(rtr.ah_attr.grh.flow_label, 77u);  // 0xC000 | 77 on the wire
  EXPECT_EQ(rtr.ah_attr.grh.sgid_index, 3);
  EXPECT_EQ(rts.qp_state, IBV_QPS_RTS);
  EXPECT_EQ(rts.sq_psn, 4660u);
  EXPECT_EQ(rts.timeout, 11);  // 4.096 us x 2^11 = 8.388608 ms
  EXPECT_EQ(rts.retry_cnt, 5);
  EXPECT_EQ(rts.rnr_retry, 6);
  // Each side's peer is the other.
  EXPECT_EQ(rtr.dest_qp_num, responder.qpn);
  EXPECT_EQ(responder.modifications[1].first.dest_qp_num, requester.qpn);
  EXPECT_EQ(responder.modifications[1].first.rq_psn, 4660u);
}

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
  auto notes_of = [&](const control::RunPlan& loaded) {
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
  // On each connection the first message runs out of retries and everything after it on the QP
  // is flushed.
  const auto connections = by_connection(outcome.flows);
  EXPECT_EQ(connections.size(), 8u);
  for (const auto& [qpn, flows] : connections) {
    ASSERT_FALSE(flows.empty());
    EXPECT_EQ(transport::flow_status_name(flows[0].status), "retry-exceeded") << qpn;
    for (size_t i = 1; i < flows.size(); ++i) {
      EXPECT_EQ(transport::flow_status_name(flows[i].status), "flushed") << qpn << " " << i;
    }
  }
  EXPECT_EQ(count_of(outcome.results, transport::FlowStatus::kRetryExceeded), 8u);
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
  for (const auto& [qpn, flows] : by_connection(outcome.flows)) {
    if (flows[0].dst_port != 3) {
      for (const auto& f : flows) EXPECT_EQ(f.status, transport::FlowStatus::kCompleted) << qpn;
      continue;
    }
    // The first write into d3 is refused; what follows on that QP is flushed.
    into_d3 += flows.size();
    EXPECT_EQ(transport::flow_status_name(flows[0].status), "remote-access-error");
    for (size_t i = 1; i < flows.size(); ++i) {
      EXPECT_EQ(transport::flow_status_name(flows[i].status), "flushed") << i;
    }
  }
  EXPECT_GT(into_d3, 1u);
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

// A device that refuses a post mid-run (here ENOMEM on the first connection's second work
// request) fails that connection's flows, names the device, QP and errno, and the run goes on.
TEST(VerbsDataPlane, ARefusedPostFailsItsConnectionAndTheRunGoesOn) {
  const auto loaded = load(config_text(allreduce_8r(), true));
  Faults faults;
  faults.post_send = [](size_t qp, uint64_t post, nic::verbs::VerbsQp&) {
    return qp == 0 && post == 1 ? ENOMEM : 0;
  };
  const Outcome outcome = run(loaded, on_faulty_rnic(faults));
  ASSERT_EQ(outcome.results.status, engine::RunStatus::kFlowsFailed) << outcome.results.diagnosis;
  EXPECT_EQ(outcome.flows.size(), outcome.results.flows);
  const std::string notes = notes_of(outcome.results);
  EXPECT_NE(notes.find("QP 0x800: ibv_post_send failed: ENOMEM (Cannot allocate memory); the "
                       "connection takes no more work"),
            std::string::npos)
      << notes;
  EXPECT_EQ(count_of(outcome.results, transport::FlowStatus::kDeviceError), 1u);
  for (const auto& [qpn, flows] : by_connection(outcome.flows)) {
    if (qpn != 0x800) {
      for (const auto& f : flows) EXPECT_EQ(f.status, transport::FlowStatus::kCompleted) << qpn;
      continue;
    }
    // One work request a message: the first went out and completes, the second was refused, the
    // rest are flushed with the connection.
    ASSERT_GE(flows.size(), 3u);
    EXPECT_EQ(transport::flow_status_name(flows[0].status), "completed");
    EXPECT_EQ(transport::flow_status_name(flows[1].status), "device-error");
    for (size_t i = 2; i < flows.size(); ++i) {
      EXPECT_EQ(transport::flow_status_name(flows[i].status), "flushed") << i;
    }
  }
  EXPECT_EQ(outcome.results.failed_flows,
            count_of(outcome.results, transport::FlowStatus::kDeviceError) +
                count_of(outcome.results, transport::FlowStatus::kFlushed));
}

// Something other than a failed work request puts a QP in error mid-run (the device, on a fatal
// event): what is posted on it from then on completes flushed, the failures are counted as
// flushed, and the run ends.
TEST(VerbsDataPlane, AQpInErrorMidRunFlushesItsFlows) {
  const auto loaded = load(config_text(allreduce_8r(), true));
  Faults faults;
  faults.post_send = [](size_t qp, uint64_t post, nic::verbs::VerbsQp& inner) {
    if (qp == 0 && post == 1) {
      ibv_qp_attr attr{};
      attr.qp_state = IBV_QPS_ERR;
      EXPECT_EQ(inner.modify(attr, IBV_QP_STATE), 0);
    }
    return 0;
  };
  const Outcome outcome = run(loaded, on_faulty_rnic(faults));
  ASSERT_EQ(outcome.results.status, engine::RunStatus::kFlowsFailed) << outcome.results.diagnosis;
  EXPECT_EQ(outcome.flows.size(), outcome.results.flows);
  EXPECT_GT(outcome.results.failed_flows, 0u);
  EXPECT_EQ(count_of(outcome.results, transport::FlowStatus::kFlushed),
            outcome.results.failed_flows);
  const std::string notes = notes_of(outcome.results);
  EXPECT_NE(notes.find("QP 0x800: work completion IBV_WC_WR_FLUSH_ERR (vendor error 0x0); the QP "
                       "was put in error with no failed work request before it"),
            std::string::npos)
      << notes;
  for (const auto& [qpn, flows] : by_connection(outcome.flows)) {
    // The first message on the QP was still out when the QP went to ERR: flushed too.
    for (size_t i = 0; i < flows.size(); ++i) {
      EXPECT_EQ(transport::flow_status_name(flows[i].status),
                qpn == 0x800 ? "flushed" : "completed")
          << qpn << " " << i;
    }
  }
}

// d0's poller falls behind until its completion queue (one real entry, reporting what was asked)
// overruns: the software RNIC puts every QP on that queue in error, the data plane fails the
// connections of d0 (device-error at the head, flushed behind), notes it, and the run ends.
TEST(VerbsDataPlane, AnOverrunCompletionQueueFailsItsConnectionsAndTheRunGoesOn) {
  const auto loaded = load(config_text(allreduce_8r(), true));
  Faults faults;
  faults.cq_device = "d0";
  faults.cq_entries = 1;
  faults.report_asked_entries = true;
  faults.stall_polls = true;
  const Outcome outcome = run(loaded, on_faulty_rnic(faults));
  ASSERT_EQ(outcome.results.status, engine::RunStatus::kFlowsFailed) << outcome.results.diagnosis;
  EXPECT_EQ(outcome.flows.size(), outcome.results.flows);
  const std::string notes = notes_of(outcome.results);
  EXPECT_NE(notes.find("d0: ibv_poll_cq failed: its completion queue (262144 entries) overran; "
                       "as on IBV_EVENT_CQ_ERR its queue pairs are in error"),
            std::string::npos)
      << notes;
  size_t touching_d0 = 0;
  for (const auto& [qpn, flows] : by_connection(outcome.flows)) {
    const bool on_d0 = flows[0].src_port == 0 || flows[0].dst_port == 0;
    for (size_t i = 0; i < flows.size(); ++i) {
      const auto& f = flows[i];
      if (!on_d0) {
        EXPECT_EQ(f.status, transport::FlowStatus::kCompleted) << qpn;
        continue;
      }
      ++touching_d0;
      EXPECT_TRUE(f.status == transport::FlowStatus::kCompleted ||
                  f.status == transport::FlowStatus::kDeviceError ||
                  f.status == transport::FlowStatus::kFlushed)
          << qpn << " " << i << " " << transport::flow_status_name(f.status);
      // Once a flow of the connection failed, all after it did.
      if (i > 0 && flows[i - 1].status != transport::FlowStatus::kCompleted) {
        EXPECT_EQ(transport::flow_status_name(f.status), "flushed") << qpn << " " << i;
      }
    }
  }
  EXPECT_GT(touching_d0, 0u);
  // Both of d0's connections (p0 -> p1 and p7 -> p0) had a message at their head.
  EXPECT_EQ(count_of(outcome.results, transport::FlowStatus::kDeviceError), 2u);
  EXPECT_EQ(outcome.results.failed_flows,
            count_of(outcome.results, transport::FlowStatus::kDeviceError) +
                count_of(outcome.results, transport::FlowStatus::kFlushed));
}

// Connections open before the traffic: a device refusing one stops the run with the device,
// port, QP, connection and call named.
TEST(VerbsDataPlane, ConnectFailuresNameTheDevicePortQpAndCall) {
  struct NoFlows final : transport::FlowObserver {
    void on_flow_delivered(const transport::FlowRecord&) override {}
    void on_flow_finished(const transport::FlowRecord&) override {}
  } observer;
  const auto loaded = load(config_text(allreduce_8r(), true, "", "", ", queue_depth: 128"));
  const auto& p0 = loaded.config.ports[0];
  const auto& p1 = loaded.config.ports[1];
  const WireConnection p0_to_p1{
      {0, p0.mac, p0.ipv4, std::nullopt, 300}, {1, p1.mac, p1.ipv4, std::nullopt, 301}, 49152};
  auto refusal = [&](std::unique_ptr<FaultyRnic> rnic) -> std::string {
    clock::VirtualClock* clock = &rnic->clock();
    VerbsDataPlane plane(loaded.config, observer, std::move(rnic), clock);
    try {
      plane.connect(p0_to_p1);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  };
  // More work requests than the device's max_qp_wr.
  SoftwareRnicOptions small;
  small.max_qp_wr = 64;
  std::string refused = refusal(std::make_unique<FaultyRnic>(loaded.config, Faults{}, small));
  EXPECT_EQ(refused.rfind("d0 port 1: the requester QP of the connection of ports \"p0\" -> "
                          "\"p1\": d0: ibv_create_qp (RC, 128 send and 0 receive work requests",
                          0),
            0u)
      << refused;
  EXPECT_NE(refused.find("Invalid argument (at most 64 work requests"), std::string::npos)
      << refused;
  // The device refuses the move to RTS.
  Faults no_rts;
  no_rts.modify = [](size_t qp, const ibv_qp_attr& attr) {
    return qp == 0 && attr.qp_state == IBV_QPS_RTS ? EINVAL : 0;
  };
  refused = refusal(std::make_unique<FaultyRnic>(loaded.config, no_rts));
  EXPECT_EQ(refused,
            "d0 port 1: ibv_modify_qp of QP 0x800 to RTS failed: EINVAL (Invalid argument) "
            "(connection of ports \"p0\" -> \"p1\")");
  // A completion queue too small for the receives a responder posts ahead.
  Faults small_cq;
  small_cq.cq_entries = 100;
  refused = refusal(std::make_unique<FaultyRnic>(loaded.config, small_cq));
  EXPECT_EQ(refused,
            "d1 port 1: its completion queue (100 entries) cannot take the receives of one more "
            "connection (ports \"p0\" -> \"p1\"); lower verbs.queue_depth (128)");
}

// verbs.queue_depth 4 with messages of 32 work requests: posting stops at 4 out and resumes as
// completions return (the software RNIC would refuse a fifth with ENOMEM, failing the flow), and
// every flow completes with the loopback backend's bytes, for each opcode.
TEST(VerbsDataPlane, AShallowQueueThrottlesPostingAndEveryFlowCompletes) {
  const std::string trace = synthetic_allreduce(1 << 20, "verbs-depth");
  for (const char* op : {"write", "write-with-imm", "send"}) {
    const std::string transport = fmt::format("transport: {{op: {}}}\n", op);
    const Outcome loopback = run(load(config_text(trace, false, "", transport)));
    const Outcome verbs =
        run(load(config_text(trace, true, "", transport, ", queue_depth: 4, max_message: 4KiB")),
            make_verbs_data_plane);
    ASSERT_EQ(verbs.results.status, engine::RunStatus::kCompleted)
        << op << " " << verbs.results.diagnosis;
    EXPECT_EQ(verbs.results.failed_flows, 0u) << op;
    EXPECT_EQ(flow_keys(verbs.flows), flow_keys(loopback.flows)) << op;
    const bool deep = std::any_of(verbs.flows.begin(), verbs.flows.end(),
                                  [](const auto& f) { return f.bytes > 4 * 4096; });
    EXPECT_TRUE(deep) << "no message needs more work requests than the queue depth";
  }
}

// Completion queues of 3 entries under a queue depth of 8: posting stops when the queue could
// not take another completion (the software RNIC would overrun it otherwise) and every flow still
// completes.
TEST(VerbsDataPlane, ASmallCompletionQueueThrottlesPostingAndEveryFlowCompletes) {
  const std::string trace = synthetic_allreduce(1 << 20, "verbs-cq");
  const std::string transport = "transport: {op: write}\n";
  const Outcome loopback = run(load(config_text(trace, false, "", transport)));
  Faults faults;
  faults.cq_entries = 3;
  const Outcome verbs =
      run(load(config_text(trace, true, "", transport, ", queue_depth: 8, max_message: 4KiB")),
          on_faulty_rnic(faults));
  ASSERT_EQ(verbs.results.status, engine::RunStatus::kCompleted) << verbs.results.diagnosis;
  EXPECT_EQ(flow_keys(verbs.flows), flow_keys(loopback.flows));
  EXPECT_EQ(notes_of(verbs.results).find("overran"), std::string::npos);
}

// Three sending QPs a port, the RNIC refusing the limit on the second of each device: the port is
// limited by "rnic+posting" and says so in one note, not one more per connection.
TEST(VerbsDataPlane, ARateLimitIsNotedOncePerPort) {
  std::string text = config_text(allreduce_8r(), true, ", rate_limit: 10Gbps");
  const std::string ring = "{all_reduce: ring}}";
  text.replace(text.find(ring), ring.size(), "{all_reduce: ring}, qps_per_peer: 3}");
  const auto loaded = load(text);
  ASSERT_EQ(loaded.config.collectives.qps_per_peer, 3u);
  auto requests = std::make_shared<std::map<std::string, int>>();
  Faults faults;
  faults.rate_limit = [requests](const std::string& device, size_t) {
    return ++(*requests)[device] == 2 ? EOPNOTSUPP : 0;
  };
  const Outcome outcome = run(loaded, on_faulty_rnic(faults));
  ASSERT_EQ(outcome.results.status, engine::RunStatus::kCompleted) << outcome.results.diagnosis;
  for (size_t p = 0; p < 8; ++p) {
    const std::string prefix = fmt::format("p{}: ", p);
    std::vector<std::string> notes;
    for (const std::string& note : outcome.results.notes) {
      if (note.rfind(prefix, 0) == 0 && note.find("rate limit") != std::string::npos) {
        notes.push_back(note);
      }
    }
    ASSERT_EQ(notes.size(), 1u) << notes_of(outcome.results);
    EXPECT_EQ(notes[0], prefix +
                            "per-QP rate limit 10 Gb/s held by the RNIC on some of its QPs "
                            "(ibv_modify_qp_rate_limit); the RNIC refused it on others (Operation "
                            "not supported), whose posting etwire paces to 10 Gb/s per QP (bursts "
                            "of verbs.max_message at line rate)");
    EXPECT_EQ(outcome.results.ports[p].rate_limited_by, "rnic+posting");
  }
}

}  // namespace
}  // namespace etwire::dataplane
