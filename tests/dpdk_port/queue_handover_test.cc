// A device of two queue pairs, one DpdkPort per queue: what arrives on a queue for a connection
// the other queue drives is handed over (resolved, ready for that queue's transport) instead of
// being delivered, a pause frame is delivered and handed to every other queue as well, and a
// handover that finds no room is counted as lost. Frames come from a third, single-queue port
// whose transmit ring is the receive ring of queue 1.
#include <gtest/gtest.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "nic/dpdk/dpdk_port.h"
#include "nic/pfc_frame.h"
#include "tests/dpdk_port/dpdk_test_support.h"

namespace etwire::nic::dpdk {
namespace {

using testing::eal_failure;

constexpr uint32_t kPmtu = 1024;
std::atomic<uint32_t> names{0};

struct Arrivals final : PacketReceiver {
  void receive(const Packet& packet, clock::Nanos) override { packets.push_back(packet); }
  std::vector<Packet> packets;
};

struct Handovers final : QueueHandover {
  bool hand_over(uint16_t queue, const Packet& packet) override {
    if (full) return false;
    handed.emplace_back(queue, packet);
    return true;
  }
  std::vector<std::pair<uint16_t, Packet>> handed;
  bool full = false;
};

class QueueHandoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (eal_failure()) {
      GTEST_SKIP() << "DPDK's EAL cannot start in this environment: " << *eal_failure();
    }
    const std::string prefix = "qho" + std::to_string(names.fetch_add(1));
    // The two-queue device X (transport port 0) receives from rx_[0] and rx_[1]; the sender S
    // (port 1) transmits into rx_[1], so all it sends arrives on X's queue 1.
    for (int i = 0; i < 4; ++i) rings_.push_back(make_ring(prefix + "r" + std::to_string(i)));
    rte_ring* x_rx[2] = {rings_[0], rings_[1]};
    rte_ring* x_tx[2] = {rings_[2], rings_[2]};
    x_ = make_device(prefix + "x", x_rx, 2, x_tx, 2);
    rte_ring* s_rx = rings_[3];
    rte_ring* s_tx = rings_[1];
    s_ = make_device(prefix + "s", &s_rx, 1, &s_tx, 1);

    // Connection 0 is driven by X's queue 0, connection 1 by its queue 1.
    for (uint32_t c = 0; c < 2; ++c) {
      directory_.add(
          c, testing::route_between({1, 0x100 + c, 0}, {0, 0x200 + c, static_cast<uint16_t>(c)}));
    }
    configure_device(x_, 2, "x");
    for (uint16_t q = 0; q < 2; ++q) {
      DpdkPortSetup s = setup(prefix + "x" + std::to_string(q), x_, 0);
      s.queue = q;
      s.queues = 2;
      queues_[q] = std::make_unique<DpdkPort>(s, payload_, directory_);
      queues_[q]->set_receiver(&arrivals_[q]);
      queues_[q]->set_queue_handover(&handovers_[q]);
    }
    start_device(x_, "x");
    x_started_ = true;
    sender_ = std::make_unique<DpdkPort>(setup(prefix + "s", s_, 1), payload_, directory_);
  }

  void TearDown() override {
    sender_.reset();
    if (x_started_) stop_device(x_, 2);
    for (auto& queue : queues_) queue.reset();
    for (uint16_t id : devices_) rte_eth_dev_close(id);
    for (rte_ring* ring : rings_) rte_ring_free(ring);
  }

  // Sends a WRITE ONLY of 64 bytes on `connection` from S, and lets X's queue 1 receive it.
  void send_data(uint32_t connection) {
    Packet packet;
    packet.opcode = opcode::kWriteOnly;
    packet.payload_bytes = 64;
    packet.dest_qpn = 0x200 + connection;  // the responder's QP number, as frames carry it
    packet.udp_source_port = 49152;
    sender_->transmit(packet, 0);
    sender_->poll(0);
    queues_[1]->poll(0);
  }

  DpdkPort& queue(int q) { return *queues_[q]; }

  Arrivals arrivals_[2];
  Handovers handovers_[2];
  std::unique_ptr<DpdkPort> sender_;

 private:
  rte_ring* make_ring(const std::string& name) {
    rte_ring* ring = rte_ring_create(name.c_str(), 1024, static_cast<int>(rte_socket_id()),
                                     RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (ring == nullptr) throw std::runtime_error("cannot create ring " + name);
    return ring;
  }

  uint16_t make_device(const std::string& name, rte_ring* const rx[], unsigned rx_count,
                       rte_ring* const tx[], unsigned tx_count) {
    const int id = rte_eth_from_rings(name.c_str(), rx, rx_count, tx, tx_count, rte_socket_id());
    if (id < 0) throw std::runtime_error("cannot make ring device " + name);
    devices_.push_back(static_cast<uint16_t>(id));
    return static_cast<uint16_t>(id);
  }

  static DpdkPortSetup setup(const std::string& name, uint16_t device, uint32_t index) {
    DpdkPortSetup s;
    s.name = name;
    s.device = device;
    s.index = index;
    s.speed_bps = 10'000'000'000;
    s.mtu = 1500;
    s.pmtu = kPmtu;
    s.mac = {2, 0, 0, 0, 0, static_cast<uint8_t>(index + 1)};
    s.mbufs = 1023;
    s.pool_prefix = name;
    return s;
  }

  frame::PayloadPattern payload_{kPmtu, kPmtu};
  WireDirectory directory_;
  std::vector<rte_ring*> rings_;
  std::vector<uint16_t> devices_;
  uint16_t x_ = 0;
  uint16_t s_ = 0;
  bool x_started_ = false;
  std::unique_ptr<DpdkPort> queues_[2];
};

TEST_F(QueueHandoverTest, AFrameForTheOtherQueueIsHandedOverResolved) {
  send_data(0);  // driven by queue 0, arrives on queue 1
  EXPECT_TRUE(arrivals_[1].packets.empty());
  ASSERT_EQ(handovers_[1].handed.size(), 1u);
  const auto& [to, packet] = handovers_[1].handed[0];
  EXPECT_EQ(to, 0);
  EXPECT_EQ(packet.dest_qpn, 0x200u);  // the responder's QP number, as the frame carried it
  EXPECT_EQ(packet.dst_port, 0u);
  EXPECT_EQ(packet.src_port, 1u);
  EXPECT_EQ(packet.opcode, opcode::kWriteOnly);
  EXPECT_EQ(queue(1).counters().rx_handed_over, 1u);
  EXPECT_EQ(queue(1).counters().rx_handover_lost, 0u);

  // The driving queue takes it as if it had arrived there.
  queue(0).receive_handed_over(packet, 5);
  ASSERT_EQ(arrivals_[0].packets.size(), 1u);
  EXPECT_EQ(arrivals_[0].packets[0].dest_qpn, 0x200u);
}

TEST_F(QueueHandoverTest, AFrameForItsOwnQueueIsDelivered) {
  send_data(1);
  ASSERT_EQ(arrivals_[1].packets.size(), 1u);
  EXPECT_EQ(arrivals_[1].packets[0].dest_qpn, 0x201u);
  EXPECT_TRUE(handovers_[1].handed.empty());
  EXPECT_EQ(queue(1).counters().rx_handed_over, 0u);
}

TEST_F(QueueHandoverTest, APauseReachesEveryQueue) {
  ASSERT_TRUE(sender_->send_pause(3, 500));
  sender_->poll(0);
  queue(1).poll(0);
  ASSERT_EQ(arrivals_[1].packets.size(), 1u);
  EXPECT_EQ(arrivals_[1].packets[0].kind, PacketKind::kPfcPause);
  ASSERT_EQ(handovers_[1].handed.size(), 1u);
  EXPECT_EQ(handovers_[1].handed[0].first, 0);
  EXPECT_EQ(handovers_[1].handed[0].second.kind, PacketKind::kPfcPause);
  EXPECT_EQ(handovers_[1].handed[0].second.pfc_priority, 3);
  EXPECT_EQ(handovers_[1].handed[0].second.pfc_quanta, 500);
}

TEST_F(QueueHandoverTest, AHandoverWithoutRoomIsCountedLost) {
  handovers_[1].full = true;
  send_data(0);
  EXPECT_TRUE(arrivals_[1].packets.empty());
  EXPECT_EQ(queue(1).counters().rx_handed_over, 1u);
  EXPECT_EQ(queue(1).counters().rx_handover_lost, 1u);
}

}  // namespace
}  // namespace etwire::nic::dpdk
