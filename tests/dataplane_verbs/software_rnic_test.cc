// The software RNIC through the verbs seam, the way a verbs program uses a device: the RC state
// machine and its errors, queue and completion-queue limits, bytes moved between registered
// buffers, and the completion statuses of the failure cases.
#include "dataplane/verbs/software_rnic.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "control/resolve/config_loader.h"
#include "tests/testing/test_paths.h"
#include "twin/layout/configured_layout.h"

namespace etwire::dataplane {
namespace {

namespace fs = std::filesystem;
using nic::verbs::MemoryRegion;
using nic::verbs::VerbsCq;
using nic::verbs::VerbsDevice;
using nic::verbs::VerbsQp;

// Two verbs ports, dev_a and dev_b, on a single switch; `extra` is appended to the file.
control::RunPlan two_ports(const std::string& extra = "") {
  const fs::path dir = testing::make_scratch_dir("soft-rnic");
  const std::string text =
      "run: {name: rnic, seed: 1}\n"
      "workload:\n  jobs:\n    - name: j\n      trace: " +
      (testing::source_dir() / "configs/traces/allreduce_8r/allreduce").string() +
      "\n      world_size: 8\n"
      "ports:\n"
      "  - {name: a, backend: verbs, verbs: {device: dev_a}, ipv4: 10.0.0.1, speed: 100Gbps}\n"
      "  - {name: b, backend: verbs, verbs: {device: dev_b}, ipv4: 10.0.0.2, speed: 100Gbps}\n"
      "mapping:\n  jobs:\n    - {job: j, ranks_per_port: 4}\n"
      "verbs: {rnic: software}\n" +
      extra;
  auto loaded = control::load_config_text(text, (dir / "rnic.yaml").string(), dir.string());
  EXPECT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  return loaded;
}

// One side of a connection: a device, its CQ, a registered buffer and a QP.
struct Side {
  std::unique_ptr<VerbsDevice> device;
  std::unique_ptr<VerbsCq> cq;
  std::vector<uint8_t> buffer = std::vector<uint8_t>(1 << 16);
  MemoryRegion region;
  std::unique_ptr<VerbsQp> qp;

  Side(SoftwareRnic& rnic, const std::string& name, int cq_entries = 256, uint32_t depth = 16) {
    device = rnic.open(name);
    cq = device->create_cq(cq_entries);
    region = device->register_memory(buffer.data(), buffer.size(),
                                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    ibv_qp_cap caps{};
    caps.max_send_wr = depth;
    caps.max_recv_wr = depth;
    caps.max_send_sge = 1;
    caps.max_recv_sge = 1;
    qp = device->create_qp(*cq, *cq, caps);
  }
  ibv_gid gid() {
    ibv_gid_entry entry{};
    EXPECT_EQ(device->query_gid(1, 3, entry), 0);
    return entry.gid;
  }
};

int to_init(VerbsQp& qp) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.port_num = 1;
  attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  return qp.modify(attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

int to_rtr(VerbsQp& qp, uint32_t dest_qpn, const ibv_gid& dgid, ibv_mtu mtu = IBV_MTU_4096) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = mtu;
  attr.dest_qp_num = dest_qpn;
  attr.min_rnr_timer = 12;
  attr.max_dest_rd_atomic = 1;
  attr.ah_attr.is_global = 1;
  attr.ah_attr.port_num = 1;
  attr.ah_attr.grh.dgid = dgid;
  attr.ah_attr.grh.sgid_index = 3;
  return qp.modify(attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                             IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

int to_rts(VerbsQp& qp, uint8_t rnr_retry = 7, uint8_t retry_cnt = 7, uint8_t timeout = 14) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = timeout;
  attr.retry_cnt = retry_cnt;
  attr.rnr_retry = rnr_retry;
  attr.max_rd_atomic = 1;
  return qp.modify(attr, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                             IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

void connect(Side& a, Side& b, uint8_t rnr_retry = 7, uint8_t retry_cnt = 7, uint8_t timeout = 14) {
  ASSERT_EQ(to_init(*a.qp), 0);
  ASSERT_EQ(to_init(*b.qp), 0);
  ASSERT_EQ(to_rtr(*b.qp, a.qp->qp_num(), a.gid()), 0);
  ASSERT_EQ(to_rtr(*a.qp, b.qp->qp_num(), b.gid()), 0);
  ASSERT_EQ(to_rts(*a.qp, rnr_retry, retry_cnt, timeout), 0);
  ASSERT_EQ(to_rts(*b.qp, rnr_retry, retry_cnt, timeout), 0);
}

uint64_t counter(VerbsDevice& device, const std::string& name) {
  for (const auto& [key, value] : device.read_counters(1)) {
    if (key == name) return value;
  }
  ADD_FAILURE() << "no counter " << name;
  return 0;
}

int post_write(Side& from, Side& to, uint32_t bytes, ibv_wr_opcode opcode = IBV_WR_RDMA_WRITE,
               uint64_t wr_id = 1, uint32_t rkey = 0) {
  ibv_sge sge{from.region.address, bytes, from.region.lkey};
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = opcode;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data = 0xabcd;
  wr.wr.rdma.remote_addr = to.region.address;
  wr.wr.rdma.rkey = rkey == 0 ? to.region.rkey : rkey;
  ibv_send_wr* bad = nullptr;
  return from.qp->post_send(&wr, &bad);
}

int post_receive(Side& side, uint32_t bytes, uint64_t wr_id = 7) {
  ibv_sge sge{side.region.address, bytes, side.region.lkey};
  ibv_recv_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  return side.qp->post_recv(&wr, &bad);
}

std::vector<ibv_wc> drain(VerbsCq& cq) {
  std::vector<ibv_wc> out;
  ibv_wc wc[16];
  for (int n; (n = cq.poll(16, wc)) > 0;) out.insert(out.end(), wc, wc + n);
  return out;
}

void run(SoftwareRnic& rnic) {
  while (!rnic.clock().idle()) rnic.clock().poll();
}

TEST(SoftwareRnic, PortsAndGidTablesLookLikeAnMlx5Netdev) {
  auto loaded = two_ports();
  SoftwareRnic rnic(loaded.config);
  auto device = rnic.open("dev_b");
  ibv_port_attr attr{};
  ASSERT_EQ(device->query_port(1, attr), 0);
  EXPECT_EQ(attr.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(attr.link_layer, IBV_LINK_LAYER_ETHERNET);
  EXPECT_EQ(attr.active_mtu, IBV_MTU_4096);
  EXPECT_EQ(attr.active_speed, 32);  // 4 x 25 Gb/s lanes
  EXPECT_EQ(attr.active_width, 2);
  ASSERT_EQ(attr.gid_tbl_len, 4);
  ibv_gid_entry entry{};
  ASSERT_EQ(device->query_gid(1, 3, entry), 0);
  EXPECT_EQ(entry.gid_type, IBV_GID_TYPE_ROCE_V2);
  const uint8_t v4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2};
  EXPECT_EQ(std::memcmp(entry.gid.raw, v4, 16), 0);
  ASSERT_EQ(device->query_gid(1, 2, entry), 0);
  EXPECT_EQ(entry.gid_type, IBV_GID_TYPE_ROCE_V1);
  EXPECT_EQ(device->query_gid(1, 4, entry), EINVAL);
  EXPECT_EQ(device->query_port(2, attr), EINVAL);
  EXPECT_THROW(rnic.open("mlx5_9"), nic::verbs::VerbsError);
}

// The twin is the loopback data plane's rig over the run's port list: host p is run port p.
TEST(SoftwareRnic, ItsTwinHasTheRunsPortsInOrder) {
  auto loaded = two_ports();
  SoftwareRnic rnic(loaded.config);
  ASSERT_FALSE(rnic.across_processes());
  const twin::FabricLayout& layout = rnic.twin().layout();
  const std::vector<twin::TwinPortSpec> specs = twin::run_port_specs(loaded.config);
  ASSERT_EQ(layout.hosts(), loaded.config.ports.size());
  ASSERT_EQ(specs.size(), loaded.config.ports.size());
  for (size_t p = 0; p < specs.size(); ++p) {
    EXPECT_EQ(layout.host_name(p), specs[p].name);
    EXPECT_EQ(layout.cable(p).speed_bps, specs[p].speed_bps);  // cable h is host h's
    EXPECT_EQ(specs[p].name, loaded.config.ports[p].name);
  }
}

TEST(SoftwareRnic, TransitionsFollowTheRcStateMachine) {
  auto loaded = two_ports();
  SoftwareRnic rnic(loaded.config);
  Side a(rnic, "dev_a");
  Side b(rnic, "dev_b");
  EXPECT_EQ(a.qp->state(), IBV_QPS_RESET);
  // RESET cannot go straight to RTR, and INIT needs its attributes.
  EXPECT_EQ(to_rtr(*a.qp, b.qp->qp_num(), b.gid()), EINVAL);
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  EXPECT_EQ(a.qp->modify(attr, IBV_QP_STATE | IBV_QP_PORT), EINVAL);
  ASSERT_EQ(to_init(*a.qp), 0);
  EXPECT_EQ(a.qp->state(), IBV_QPS_INIT);
  // RTR to a GID no port has, or with a path MTU above the port's active MTU.
  ibv_gid nowhere{};
  nowhere.raw[15] = 9;
  EXPECT_EQ(to_rtr(*a.qp, b.qp->qp_num(), nowhere), EHOSTUNREACH);
  rnic.set_active_mtu(0, IBV_MTU_1024);
  EXPECT_EQ(to_rtr(*a.qp, b.qp->qp_num(), b.gid(), IBV_MTU_2048), EINVAL);
  rnic.set_active_mtu(0, IBV_MTU_4096);
  ASSERT_EQ(to_rtr(*a.qp, b.qp->qp_num(), b.gid()), 0);
  EXPECT_EQ(to_init(*a.qp), EINVAL);  // no way back but RESET or ERR
  ASSERT_EQ(to_rts(*a.qp), 0);
  EXPECT_EQ(a.qp->state(), IBV_QPS_RTS);
  attr = {};
  attr.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(a.qp->modify(attr, IBV_QP_STATE), 0);
  EXPECT_EQ(to_rts(*a.qp), EINVAL);
  attr.qp_state = IBV_QPS_RESET;
  ASSERT_EQ(a.qp->modify(attr, IBV_QP_STATE), 0);
  EXPECT_EQ(a.qp->state(), IBV_QPS_RESET);
}

TEST(SoftwareRnic, PostingInTheWrongStateOrBeyondTheQueueFails) {
  auto loaded = two_ports();
  SoftwareRnic rnic(loaded.config);
  Side a(rnic, "dev_a", 256, 2);
  Side b(rnic, "dev_b", 256, 2);
  EXPECT_EQ(post_receive(b, 64), EINVAL);  // RESET
  ASSERT_EQ(to_init(*a.qp), 0);
  EXPECT_EQ(post_write(a, b, 64), EINVAL);  // INIT: sends need RTS
  ASSERT_EQ(to_init(*b.qp), 0);
  ASSERT_EQ(to_rtr(*b.qp, a.qp->qp_num(), a.gid()), 0);
  ASSERT_EQ(to_rtr(*a.qp, b.qp->qp_num(), b.gid()), 0);
  EXPECT_EQ(post_write(a, b, 64), EINVAL);  // RTR
  ASSERT_EQ(to_rts(*a.qp), 0);
  EXPECT_EQ(post_write(a, b, 64, IBV_WR_RDMA_WRITE, 1), 0);
  EXPECT_EQ(post_write(a, b, 64, IBV_WR_RDMA_WRITE, 2), 0);
  EXPECT_EQ(post_write(a, b, 64, IBV_WR_RDMA_WRITE, 3), ENOMEM);  // two outstanding at most
  EXPECT_EQ(post_write(a, b, 64, IBV_WR_RDMA_READ, 4), EINVAL);
  run(rnic);
  const auto done = drain(*a.cq);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].wr_id, 1u);
  EXPECT_EQ(done[1].wr_id, 2u);
  EXPECT_EQ(done[1].status, IBV_WC_SUCCESS);
  EXPECT_EQ(post_write(a, b, 64, IBV_WR_RDMA_WRITE, 5), 0);  // room again
}

TEST(SoftwareRnic, WritesMoveTheBytesAndImmediatesConsumeReceives) {
  auto loaded = two_ports();
  SoftwareRnic rnic(loaded.config);
  Side a(rnic, "dev_a");
  Side b(rnic, "dev_b");
  connect(a, b);
  for (size_t i = 0; i < a.buffer.size(); ++i) a.buffer[i] = static_cast<uint8_t>(i * 7);
  ASSERT_EQ(post_receive(b, 0, 42), 0);
  ASSERT_EQ(post_write(a, b, 20000, IBV_WR_RDMA_WRITE, 1), 0);
  ASSERT_EQ(post_write(a, b, 30000, IBV_WR_RDMA_WRITE_WITH_IMM, 2), 0);
  EXPECT_NE(std::memcmp(a.buffer.data(), b.buffer.data(), 30000), 0);
  run(rnic);
  EXPECT_EQ(std::memcmp(a.buffer.data(), b.buffer.data(), 30000), 0);
  EXPECT_GT(rnic.clock().now(), 0);  // the transport took its time
  const auto sent = drain(*a.cq);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].opcode, IBV_WC_RDMA_WRITE);
  EXPECT_EQ(sent[1].status, IBV_WC_SUCCESS);
  const auto received = drain(*b.cq);
  ASSERT_EQ(received.size(), 1u);  // only the one with an immediate
  EXPECT_EQ(received[0].wr_id, 42u);
  EXPECT_EQ(received[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(received[0].byte_len, 30000u);
  EXPECT_EQ(received[0].imm_data, 0xabcdu);
  EXPECT_EQ(received[0].src_qp, a.qp->qp_num());
  EXPECT_TRUE(received[0].wc_flags & IBV_WC_WITH_IMM);
}

TEST(SoftwareRnic, ABadRkeyIsARemoteAccessErrorAndFlushesWhatFollows) {
  auto loaded = two_ports();
  SoftwareRnic rnic(loaded.config);
  Side a(rnic, "dev_a");
  Side b(rnic, "dev_b");
  connect(a, b);
  ASSERT_EQ(post_write(a, b, 100, IBV_WR_RDMA_WRITE, 1, b.region.rkey + 99), 0);
  ASSERT_EQ(post_write(a, b, 100, IBV_WR_RDMA_WRITE, 2), 0);
  run(rnic);
  auto done = drain(*a.cq);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].status, IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(done[1].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(a.qp->state(), IBV_QPS_ERR);
  // In the error state a post succeeds and completes at once, flushed.
  ASSERT_EQ(post_write(a, b, 100, IBV_WR_RDMA_WRITE, 3), 0);
  done = drain(*a.cq);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].wr_id, 3u);
  EXPECT_EQ(done[0].status, IBV_WC_WR_FLUSH_ERR);
}

TEST(SoftwareRnic, ASendLongerThanTheReceiveFailsBothSides) {
  auto loaded = two_ports();
  SoftwareRnic rnic(loaded.config);
  Side a(rnic, "dev_a");
  Side b(rnic, "dev_b");
  connect(a, b);
  ASSERT_EQ(post_receive(b, 100), 0);
  ASSERT_EQ(post_write(a, b, 1000, IBV_WR_SEND), 0);
  run(rnic);
  const auto sent = drain(*a.cq);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].status, IBV_WC_REM_INV_REQ_ERR);
  const auto received = drain(*b.cq);
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0].status, IBV_WC_LOC_LEN_ERR);
  EXPECT_EQ(b.qp->state(), IBV_QPS_ERR);
}

TEST(SoftwareRnic, WithoutAReceiveTheSenderRetriesThenGivesUpOrWaits) {
  auto loaded = two_ports();
  {
    SoftwareRnic rnic(loaded.config);
    Side a(rnic, "dev_a");
    Side b(rnic, "dev_b");
    connect(a, b, 3);  // rnr_retry 3: gives up
    ASSERT_EQ(post_write(a, b, 100, IBV_WR_RDMA_WRITE_WITH_IMM), 0);
    run(rnic);
    const auto sent = drain(*a.cq);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0].status, IBV_WC_RNR_RETRY_EXC_ERR);
  }
  SoftwareRnic rnic(loaded.config);
  Side a(rnic, "dev_a");
  Side b(rnic, "dev_b");
  connect(a, b, 7);  // 7: retries for ever
  ASSERT_EQ(post_write(a, b, 100, IBV_WR_SEND), 0);
  run(rnic);
  EXPECT_TRUE(drain(*a.cq).empty());  // still waiting for a receive
  ASSERT_EQ(post_receive(b, 4096), 0);
  const auto sent = drain(*a.cq);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(drain(*b.cq).size(), 1u);
}

TEST(SoftwareRnic, QueuesBeyondTheDevicesLimitsAreRefused) {
  auto loaded = two_ports();
  SoftwareRnicOptions options;
  options.max_qp_wr = 64;
  options.max_cqe = 1024;
  SoftwareRnic rnic(loaded.config, options);
  auto device = rnic.open("dev_a");
  auto error_of = [](const std::function<void()>& call) {
    try {
      call();
    } catch (const nic::verbs::VerbsError& e) {
      return e.error();
    }
    return 0;
  };
  EXPECT_EQ(error_of([&] { device->create_cq(1025); }), EINVAL);
  EXPECT_EQ(error_of([&] { device->create_cq(0); }), EINVAL);
  auto cq = device->create_cq(1024);
  ibv_qp_cap caps{};
  caps.max_send_wr = 65;
  caps.max_send_sge = 1;
  EXPECT_EQ(error_of([&] { device->create_qp(*cq, *cq, caps); }), EINVAL);
  caps.max_send_wr = 64;
  caps.max_recv_wr = 65;
  EXPECT_EQ(error_of([&] { device->create_qp(*cq, *cq, caps); }), EINVAL);
  caps.max_recv_wr = 64;
  EXPECT_NE(device->create_qp(*cq, *cq, caps), nullptr);
  // A completion queue of another device cannot serve this one's QPs.
  auto other = rnic.open("dev_b");
  auto other_cq = other->create_cq(16);
  EXPECT_EQ(error_of([&] { device->create_qp(*other_cq, *other_cq, caps); }), EINVAL);
}

TEST(SoftwareRnic, OverrunningACompletionQueuePutsItInError) {
  auto loaded = two_ports();
  SoftwareRnic rnic(loaded.config);
  Side a(rnic, "dev_a", 2);
  Side b(rnic, "dev_b");
  connect(a, b);
  for (uint64_t id = 1; id <= 3; ++id) ASSERT_EQ(post_write(a, b, 64, IBV_WR_RDMA_WRITE, id), 0);
  run(rnic);
  ibv_wc wc[4];
  EXPECT_LT(a.cq->poll(4, wc), 0);
  EXPECT_EQ(a.qp->state(), IBV_QPS_ERR);
}

// As on IBV_EVENT_CQ_ERR: every QP sending or receiving through the overrun queue goes to ERR,
// not only the one whose completion was lost; its work is flushed where a queue has room.
TEST(SoftwareRnic, AnOverrunPutsEveryQpOfTheQueueInError) {
  auto loaded = two_ports();
  SoftwareRnic rnic(loaded.config);
  Side a(rnic, "dev_a", 2);
  Side b(rnic, "dev_b");
  connect(a, b);
  // A second connection whose QP on dev_a sends through a's small queue and receives through a
  // roomy one of its own, with a receive posted there.
  auto roomy = a.device->create_cq(16);
  ibv_qp_cap caps{};
  caps.max_send_wr = 4;
  caps.max_recv_wr = 4;
  caps.max_send_sge = 1;
  caps.max_recv_sge = 1;
  auto sharing = a.device->create_qp(*a.cq, *roomy, caps);
  Side b2(rnic, "dev_b");
  ASSERT_EQ(to_init(*sharing), 0);
  ASSERT_EQ(to_init(*b2.qp), 0);
  ASSERT_EQ(to_rtr(*b2.qp, sharing->qp_num(), a.gid()), 0);
  ASSERT_EQ(to_rtr(*sharing, b2.qp->qp_num(), b2.gid()), 0);
  ASSERT_EQ(to_rts(*sharing), 0);
  ASSERT_EQ(to_rts(*b2.qp), 0);
  ibv_sge sge{a.region.address, 64, a.region.lkey};
  ibv_recv_wr receive{};
  receive.wr_id = 77;
  receive.sg_list = &sge;
  receive.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  ASSERT_EQ(sharing->post_recv(&receive, &bad), 0);

  for (uint64_t id = 1; id <= 3; ++id) ASSERT_EQ(post_write(a, b, 64, IBV_WR_RDMA_WRITE, id), 0);
  run(rnic);
  ibv_wc wc[4];
  EXPECT_LT(a.cq->poll(4, wc), 0);
  EXPECT_EQ(a.qp->state(), IBV_QPS_ERR);
  EXPECT_EQ(sharing->state(), IBV_QPS_ERR);
  const auto flushed = drain(*roomy);
  ASSERT_EQ(flushed.size(), 1u);
  EXPECT_EQ(flushed[0].wr_id, 77u);
  EXPECT_EQ(flushed[0].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(flushed[0].qp_num, sharing->qp_num());
  // The peers on the other device are not on that queue.
  EXPECT_EQ(b.qp->state(), IBV_QPS_RTS);
  EXPECT_EQ(b2.qp->state(), IBV_QPS_RTS);
}

// The QP's retry_cnt and timeout decide, not the run's transport section (retry_count 7 by
// default). Fixed retransmission: with retry_cnt 2 the first packet is sent and resent twice, each
// time out after 4.096 us x 2^8, and then the QP gives up. Adaptive (the default) starts at a
// quarter of the QP's timeout, doubles to it, and gives up once nothing was acknowledged for
// timeout x retry_cnt (within 1 %), not after a count.
TEST(SoftwareRnic, ALossyFabricEndsInRetryExceededAfterTheQpsRetryCount) {
  for (const char* mode : {"fixed", "adaptive"}) {
    const bool fixed = std::string(mode) == "fixed";
    auto loaded = two_ports(
        "fabric: {drop_probability: 1}\ntransport: {retransmission: " + std::string(mode) + "}\n");
    ASSERT_EQ(loaded.config.transport.retry_count, 7u);
    for (const uint8_t retry_cnt : {2, 5}) {
      SCOPED_TRACE(std::string(mode) + ", retry_cnt " + std::to_string(retry_cnt));
      SoftwareRnic rnic(loaded.config);
      Side a(rnic, "dev_a");
      Side b(rnic, "dev_b");
      connect(a, b, 7, retry_cnt, 8);
      ASSERT_EQ(post_write(a, b, 5000, IBV_WR_RDMA_WRITE, 1), 0);
      ASSERT_EQ(post_write(a, b, 5000, IBV_WR_RDMA_WRITE, 2), 0);
      run(rnic);
      const auto sent = drain(*a.cq);
      ASSERT_EQ(sent.size(), 2u);
      EXPECT_EQ(sent[0].status, IBV_WC_RETRY_EXC_ERR);
      EXPECT_EQ(sent[1].status, IBV_WC_WR_FLUSH_ERR);
      const clock::Nanos timeout = 4096 << 8;
      if (fixed) {
        EXPECT_EQ(counter(*a.device, "timeouts"), retry_cnt + 1u);
        EXPECT_GE(rnic.clock().now(), (retry_cnt + 1) * timeout);
        EXPECT_LT(rnic.clock().now(), (retry_cnt + 2) * timeout);
      } else {
        const clock::Nanos limit = retry_cnt * timeout;
        EXPECT_GE(rnic.clock().now(), limit - limit / 100);
        EXPECT_LT(rnic.clock().now(), limit + timeout + timeout / 100);
      }
    }
  }
}

// One transport times every QP of a port: the first QP in RTS sets the port's retry count and
// timeout, and one asking others there is refused rather than served with the wrong ones.
TEST(SoftwareRnic, QpsOfAPortMustShareTheirRetryCountAndTimeout) {
  auto loaded = two_ports();
  SoftwareRnic rnic(loaded.config);
  Side a(rnic, "dev_a");
  Side b(rnic, "dev_b");
  connect(a, b, 7, 3, 10);
  Side a2(rnic, "dev_a");
  Side b2(rnic, "dev_b");
  ASSERT_EQ(to_init(*a2.qp), 0);
  ASSERT_EQ(to_rtr(*a2.qp, b2.qp->qp_num(), b2.gid()), 0);
  EXPECT_EQ(to_rts(*a2.qp, 7, 4, 10), EINVAL);
  EXPECT_EQ(to_rts(*a2.qp, 7, 3, 11), EINVAL);
  EXPECT_EQ(a2.qp->state(), IBV_QPS_RTR);
  EXPECT_EQ(to_rts(*a2.qp, 7, 3, 10), 0);
  // dev_b's port took its values from b's QP, the same.
  ASSERT_EQ(to_init(*b2.qp), 0);
  ASSERT_EQ(to_rtr(*b2.qp, a2.qp->qp_num(), a2.gid()), 0);
  EXPECT_EQ(to_rts(*b2.qp, 7, 3, 10), 0);
}

TEST(SoftwareRnic, ARateLimitSlowsTheQpOrIsRefusedWithoutALimiter) {
  auto loaded = two_ports();
  auto time_of_write = [&](bool limiter, uint32_t kbps, int& error) {
    SoftwareRnicOptions options;
    options.rate_limiter = limiter;
    SoftwareRnic rnic(loaded.config, options);
    Side a(rnic, "dev_a");
    Side b(rnic, "dev_b");
    connect(a, b);
    error = a.qp->set_rate_limit(kbps);
    EXPECT_EQ(post_write(a, b, 60000), 0);
    // Until the completion: the transport's retransmission timer stays armed past it.
    ibv_wc wc;
    while (a.cq->poll(1, &wc) == 0 && !rnic.clock().idle()) rnic.clock().poll();
    EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
    return rnic.clock().now();
  };
  int error = 0;
  const clock::Nanos line = time_of_write(true, 0, error);
  EXPECT_EQ(error, 0);
  const clock::Nanos limited = time_of_write(true, 10'000'000, error);  // 10 Gb/s
  EXPECT_EQ(error, 0);
  // 60 KB at 10 Gb/s is 48 us of payload alone; at 100 Gb/s under 10.
  EXPECT_GT(limited, 48'000);
  EXPECT_LT(line, 15'000);
  time_of_write(false, 10'000'000, error);
  EXPECT_EQ(error, EOPNOTSUPP);
}

}  // namespace
}  // namespace etwire::dataplane
