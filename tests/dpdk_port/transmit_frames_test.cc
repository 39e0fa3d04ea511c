// What a DpdkPort hands its device: every data frame whole (headers, the payload pattern, a good
// ICRC), whether the steady-state path wrote it from the connection's template or the general
// path assembled it, and mbufs whose payload a short frame's ICRC overwrote are put right before
// they carry a frame again. The counters count what the device took, byte for byte, also when
// its queue stays full. The device is a ring device whose transmit ring the test reads.
#include <gtest/gtest.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "nic/dpdk/dpdk_port.h"
#include "nic/frame/frame_reader.h"
#include "nic/frame_size.h"
#include "tests/dpdk_port/dpdk_test_support.h"

namespace etwire::nic::dpdk {
namespace {

using testing::eal_failure;

constexpr uint32_t kPmtu = 1024;
constexpr uint32_t kResponderQpn = 0x300;
std::atomic<uint32_t> names{0};

class TransmitFramesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (eal_failure()) {
      GTEST_SKIP() << "DPDK's EAL cannot start in this environment: " << *eal_failure();
    }
    directory_.add(0, testing::route_between({0, 0x100, 0}, {1, kResponderQpn, 0}));
  }

  void TearDown() override {
    // Frames a failed test left on the ring go back to their pool before the port frees it.
    if (tx_ring_ != nullptr) take_all();
    port_.reset();
    if (device_made_) rte_eth_dev_close(device_);
    rte_ring_free(rx_ring_);
    rte_ring_free(tx_ring_);
  }

  // A port on a ring device whose transmit ring holds `tx_ring_size` - 1 frames.
  void make_port(unsigned tx_ring_size) {
    const std::string name = "txf" + std::to_string(names.fetch_add(1));
    rx_ring_ = rte_ring_create((name + "rx").c_str(), 64, static_cast<int>(rte_socket_id()),
                               RING_F_SP_ENQ | RING_F_SC_DEQ);
    tx_ring_ = rte_ring_create((name + "tx").c_str(), tx_ring_size,
                               static_cast<int>(rte_socket_id()), RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (rx_ring_ == nullptr || tx_ring_ == nullptr) throw std::runtime_error("no ring");
    const int id = rte_eth_from_rings(name.c_str(), &rx_ring_, 1, &tx_ring_, 1, rte_socket_id());
    if (id < 0) throw std::runtime_error("cannot make ring device " + name);
    device_ = static_cast<uint16_t>(id);
    device_made_ = true;
    DpdkPortSetup setup;
    setup.name = name;
    setup.device = device_;
    setup.speed_bps = 100'000'000'000;
    setup.mtu = 1500;
    setup.pmtu = kPmtu;
    setup.mac = {2, 0, 0, 0, 0, 1};
    setup.mbufs = 255;  // few: the frames the test frees carry frames again
    setup.mbuf_cache = 32;
    setup.pool_prefix = name;
    port_ = std::make_unique<DpdkPort>(setup, payload_, directory_);
  }

  Packet data(uint8_t opcode, uint32_t payload_bytes) {
    Packet packet;
    packet.opcode = opcode;
    packet.payload_bytes = payload_bytes;
    packet.dest_qpn = kResponderQpn;
    packet.udp_source_port = 49200;
    packet.psn = psn_++;
    return packet;
  }

  // Takes every frame off the device's transmit ring and frees it; returns their wire bytes.
  uint64_t take_all() {
    uint64_t bytes = 0;
    rte_mbuf* m = nullptr;
    while (rte_ring_sc_dequeue(tx_ring_, reinterpret_cast<void**>(&m)) == 0) {
      bytes += wire_bytes_of_frame(m->pkt_len);
      rte_pktmbuf_free(m);
    }
    return bytes;
  }

  // Takes every frame off the device's transmit ring: parses it, checks its payload is the
  // pattern, adds its wire bytes to taken_bytes_, and frees it.
  void drain() {
    rte_mbuf* m = nullptr;
    while (rte_ring_sc_dequeue(tx_ring_, reinterpret_cast<void**>(&m)) == 0) {
      const auto* bytes = rte_pktmbuf_mtod(m, const uint8_t*);
      frame::ParsedFrame parsed;
      const frame::FrameStatus status = reader_.parse(bytes, m->pkt_len, parsed);
      EXPECT_EQ(status, frame::FrameStatus::kRoce) << "frame " << taken_frames_;
      if (status == frame::FrameStatus::kRoce) {
        const Packet& p = parsed.packet;
        EXPECT_EQ(p.psn, taken_frames_) << "frames leave in the order sent";
        const uint8_t* payload = bytes + m->pkt_len - kIcrcBytes - ((p.payload_bytes + 3) & ~3u);
        EXPECT_EQ(std::memcmp(payload, payload_.bytes(), p.payload_bytes), 0)
            << "frame " << taken_frames_ << " (psn " << p.psn << ") carries a damaged payload";
      }
      ++taken_frames_;
      taken_bytes_ += wire_bytes_of_frame(m->pkt_len);
      rte_pktmbuf_free(m);
    }
  }

  frame::PayloadPattern payload_{kPmtu, kPmtu};
  frame::FrameReader reader_{payload_};
  WireDirectory directory_;
  rte_ring* rx_ring_ = nullptr;
  rte_ring* tx_ring_ = nullptr;
  uint16_t device_ = 0;
  bool device_made_ = false;
  std::unique_ptr<DpdkPort> port_;
  uint32_t psn_ = 0;
  uint64_t taken_frames_ = 0;
  uint64_t taken_bytes_ = 0;
};

TEST_F(TransmitFramesTest, EveryFrameArrivesWholeAndIsCountedOnce) {
  make_port(1024);
  // Messages of a FIRST, MIDDLEs across many bursts and a short LAST, whose ICRC lands inside
  // the payload its mbuf holds. Frames go back to the pool as the device's ring is read, and each
  // message sends more frames than the pool has mbufs, so the next message's MIDDLE frames reuse
  // every mbuf, the short frames' too.
  uint64_t sent = 0;
  for (int message = 0; message < 6; ++message) {
    port_->transmit(data(opcode::kWriteFirst, kPmtu), 0);
    for (int i = 0; i < 300; ++i) {
      port_->transmit(data(opcode::kWriteMiddle, kPmtu), 0);
      if (i % 16 == 0) {
        port_->poll(0);
        drain();
      }
    }
    port_->transmit(data(opcode::kWriteLast, 100 + 4 * message), 0);
    sent += 302;
    port_->poll(0);
    drain();
  }
  EXPECT_EQ(taken_frames_, sent);
  EXPECT_EQ(port_->counters().tx_frames, sent);
  EXPECT_EQ(port_->counters().tx_bytes, taken_bytes_);
  EXPECT_EQ(port_->counters().tx_dropped, 0u);
}

TEST_F(TransmitFramesTest, ADeviceThatStaysFullIsCreditedOnlyWhatItTook) {
  make_port(64);  // holds 63 frames
  constexpr uint64_t kSent = 200;
  port_->transmit(data(opcode::kWriteFirst, kPmtu), 0);
  for (uint64_t i = 1; i < kSent; ++i) port_->transmit(data(opcode::kWriteMiddle, kPmtu), 0);
  const DpdkPortCounters& counters = port_->counters();
  EXPECT_EQ(counters.tx_frames, 63u);
  EXPECT_EQ(counters.tx_frames + counters.tx_dropped + port_->frames_waiting(), kSent);
  EXPECT_GT(counters.tx_dropped, 0u);
  const uint64_t waiting = port_->frames_waiting();
  EXPECT_GT(waiting, 0u);

  // Emptied, the device takes the frames that waited.
  const uint64_t taken_while_full = rte_ring_count(tx_ring_);
  EXPECT_EQ(taken_while_full, 63u);
  const uint64_t bytes_while_full = take_all();
  EXPECT_EQ(counters.tx_bytes, bytes_while_full);
  port_->poll(0);
  EXPECT_EQ(port_->frames_waiting(), 0u);
  EXPECT_EQ(counters.tx_frames, 63u + waiting);
  EXPECT_EQ(counters.tx_bytes, bytes_while_full + take_all());
}

}  // namespace
}  // namespace etwire::nic::dpdk
