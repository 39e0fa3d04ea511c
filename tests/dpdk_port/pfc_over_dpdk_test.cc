// PFC over DPDK ports: two DpdkPorts on net_ring devices cabled back to back, one Transport on the
// wall clock sending from A to B. A honours the pauses B sends, and B pauses A by itself when its
// receive queue backs up. Assertions are on counters and on the order of events, not on how
// fast the machine is: the pauses last hundreds of milliseconds at the ports' 100 Mb/s, far
// longer than any hold the tests make, and every wait is bounded by a generous deadline.
#include <gtest/gtest.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "clock/wall_clock.h"
#include "nic/dpdk/dpdk_port.h"
#include "tests/dpdk_port/dpdk_test_support.h"
#include "transport/transport.h"

namespace etwire::nic::dpdk {
namespace {

constexpr uint64_t kSpeed = 100'000'000;  // slow on purpose: a full pause lasts 335 ms
constexpr uint32_t kPmtu = 1024;
constexpr uint8_t kDataPriority = 3;  // config::PortQos's default data priority
constexpr clock::Nanos kDeadline = 10 * clock::kNanosPerSecond;

using testing::eal_failure;

// Ring, device and mempool names are process-wide.
std::atomic<uint32_t> names{0};

struct Observer final : transport::FlowObserver {
  void on_flow_delivered(const transport::FlowRecord&) override {}
  void on_flow_finished(const transport::FlowRecord& record) override {
    finished.push_back(record);
  }
  std::vector<transport::FlowRecord> finished;
};

// Rings and ring devices, given back however the rig's construction ends: a port that fails
// to set up throws out of the rig's constructor, whose destructor then does not run.
class RingCables {
 public:
  RingCables() = default;
  RingCables(const RingCables&) = delete;
  RingCables& operator=(const RingCables&) = delete;
  ~RingCables() {
    for (uint16_t id : devices_) rte_eth_dev_close(id);
    for (rte_ring* ring : rings_) rte_ring_free(ring);
  }

  rte_ring* make_ring(const std::string& name, uint32_t size) {
    rte_ring* ring = rte_ring_create(name.c_str(), size, static_cast<int>(rte_socket_id()),
                                     RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (ring == nullptr) throw std::runtime_error("cannot create ring " + name);
    rings_.push_back(ring);
    return ring;
  }

  uint16_t make_device(const std::string& name, rte_ring* rx, rte_ring* tx) {
    const int id = rte_eth_from_rings(name.c_str(), &rx, 1, &tx, 1, rte_socket_id());
    if (id < 0) throw std::runtime_error("cannot make ring device " + name);
    devices_.push_back(static_cast<uint16_t>(id));
    return static_cast<uint16_t>(id);
  }

 private:
  std::vector<rte_ring*> rings_;
  std::vector<uint16_t> devices_;
};

// Ports A (transport index 0) and B (1) on two ring devices, each direction one ring.
class BackToBack {
 public:
  explicit BackToBack(const DpdkPfcSetup& b_pfc = {}, uint32_t ring_size = 4096)
      : payload_(kPmtu, kPmtu) {
    const uint32_t n = names.fetch_add(1);
    const std::string prefix = "pfct" + std::to_string(n);
    a_to_b_ = cables_.make_ring(prefix + "ab", ring_size);
    b_to_a_ = cables_.make_ring(prefix + "ba", ring_size);
    const uint16_t a = cables_.make_device(prefix + "a", b_to_a_, a_to_b_);
    const uint16_t b = cables_.make_device(prefix + "b", a_to_b_, b_to_a_);
    a_ = std::make_unique<DpdkPort>(setup("a", a, 0, n), payload_, directory_);
    DpdkPortSetup b_setup = setup("b", b, 1, n);
    b_setup.pfc = b_pfc;
    b_setup.rx_ring = a_to_b_;
    b_ = std::make_unique<DpdkPort>(b_setup, payload_, directory_);

    config_.pmtu = kPmtu;
    transport_ = std::make_unique<transport::Transport>(config_, clock_, observer_);
    nic::FrameFormat format;
    transport_->add_port(*a_, config::PortQos{}, format);
    transport_->add_port(*b_, config::PortQos{}, format);
    // Both halves in the one transport, numbered as the frames carry them.
    transport_->open_responder(1, 0x200, 0, 0x100, 49152);
    transport_->open_requester(0, 0x100, 1, 0x200, 49152);
    connection_ = {0x100, 0x200};
    directory_.add(0, testing::route_between({0, 0x100}, {1, 0x200}));
  }

  DpdkPort& a() { return *a_; }
  DpdkPort& b() { return *b_; }
  rte_ring* a_to_b() { return a_to_b_; }
  transport::Transport& transport() { return *transport_; }
  const transport::TransportPortCounters& a_transport() { return transport_->port_counters(0); }
  const std::vector<transport::FlowRecord>& finished() const { return observer_.finished; }
  clock::Nanos now() const { return clock_.now(); }

  void post(uint64_t bytes) { transport_->post(connection_, bytes, transport::FlowTags{}); }

  // One turn of the data plane's loop, on the ports asked for.
  void step(bool poll_a = true, bool poll_b = true) {
    clock_.poll();
    const clock::Nanos now = clock_.now();
    if (poll_a) a_->poll(now);
    if (poll_b) b_->poll(now);
  }

  // Steps until `done` holds; false when the deadline passes first.
  bool step_until(const std::function<bool()>& done, bool poll_a = true, bool poll_b = true) {
    const clock::Nanos until = clock_.now() + kDeadline;
    while (!done()) {
      if (clock_.now() > until) return false;
      step(poll_a, poll_b);
    }
    return true;
  }

  void step_for(clock::Nanos duration, bool poll_a = true, bool poll_b = true) {
    const clock::Nanos until = clock_.now() + duration;
    while (clock_.now() < until) step(poll_a, poll_b);
  }

 private:
  static DpdkPortSetup setup(const std::string& name, uint16_t device, uint32_t index, uint32_t n) {
    DpdkPortSetup s;
    s.name = name;
    s.device = device;
    s.index = index;
    s.speed_bps = kSpeed;
    s.mtu = 1500;
    s.pmtu = kPmtu;
    s.mac = {2, 0, 0, 0, 0, static_cast<uint8_t>(index + 1)};
    s.mbufs = 4095;
    s.pool_prefix = "pfct" + std::to_string(n) + name;
    return s;
  }

  // Destroyed in reverse: the transport before the ports it drives, the ports before their
  // devices.
  RingCables cables_;
  frame::PayloadPattern payload_;
  WireDirectory directory_;
  clock::WallClock clock_;
  Observer observer_;
  config::TransportConfig config_;
  rte_ring* a_to_b_ = nullptr;
  rte_ring* b_to_a_ = nullptr;
  std::unique_ptr<DpdkPort> a_;
  std::unique_ptr<DpdkPort> b_;
  std::unique_ptr<transport::Transport> transport_;
  transport::ConnectionId connection_;
};

class PfcOverDpdk : public ::testing::Test {
 protected:
  void SetUp() override {
    if (eal_failure()) {
      GTEST_SKIP() << "DPDK's EAL cannot start in this environment, so no DPDK port can be "
                      "tested: "
                   << *eal_failure();
    }
  }
};

TEST_F(PfcOverDpdk, AHoldsItsDataWhileBPausesItAndResumesWhenBSaysSo) {
  BackToBack rig;
  rig.post(1 << 20);  // about 90 ms at 100 Mb/s: still sending when the pause comes
  ASSERT_TRUE(rig.step_until([&] { return rig.b().counters().rx_frames >= 8; }));

  ASSERT_TRUE(rig.b().send_pause(kDataPriority, 0xFFFF));
  rig.b().poll(rig.now());  // hands the pause to the device
  EXPECT_EQ(rig.b().counters().pauses_sent, 1u);
  // A gets the pause on its own next poll: from then on the transport starts no data packet.
  ASSERT_TRUE(rig.step_until([&] { return rig.a().counters().pauses_received > 0; },
                             /*poll_a=*/true, /*poll_b=*/false));
  const uint64_t started = rig.a_transport().data_packets;
  EXPECT_EQ(rig.a().counters().pauses_received, 1u);
  EXPECT_EQ(rig.a_transport().pauses_received, 1u);

  // 20 ms is some 230 frames at 100 Mb/s; the pause would last 335 ms.
  rig.step_for(20 * clock::kNanosPerMilli);
  EXPECT_EQ(rig.a_transport().data_packets, started);
  // Everything A started before the pause reached B, and nothing after it.
  EXPECT_EQ(rig.a().counters().tx_frames, started);
  EXPECT_EQ(rig.b().counters().rx_frames, started);
  EXPECT_TRUE(rig.finished().empty());

  ASSERT_TRUE(rig.b().send_pause(kDataPriority, 0));
  EXPECT_EQ(rig.b().counters().resumes_sent, 1u);
  EXPECT_EQ(rig.b().counters().pauses_sent, 1u);
  ASSERT_TRUE(rig.step_until([&] { return !rig.finished().empty(); }));
  EXPECT_EQ(rig.a_transport().resumes_received, 1u);
  EXPECT_GT(rig.a_transport().data_packets, started);
  EXPECT_EQ(rig.finished()[0].status, transport::FlowStatus::kCompleted);
  EXPECT_EQ(rig.finished()[0].bytes, uint64_t{1} << 20);
}

TEST_F(PfcOverDpdk, BPausesAWhenItsReceiveQueueBacksUpAndResumesOnceDrained) {
  DpdkPfcSetup pfc;
  pfc.enabled = true;
  pfc.priority = kDataPriority;
  pfc.xoff = 64;
  pfc.xon = 16;
  pfc.quanta = 0xFFFF;
  BackToBack rig(pfc, 1024);
  const PauseGenerator* generator = rig.b().pause_generator();
  ASSERT_NE(generator, nullptr);
  // 65535 quanta of 512 bit times at 100 Mb/s.
  EXPECT_EQ(generator->thresholds().pause_duration, 335'539'200);

  rig.post(256 << 10);
  // B is not polled: A's frames pile up in B's receive queue.
  ASSERT_TRUE(rig.step_until([&] { return rte_ring_count(rig.a_to_b()) >= 100; },
                             /*poll_a=*/true, /*poll_b=*/false));
  EXPECT_EQ(rig.b().counters().pauses_sent, 0u);
  EXPECT_FALSE(generator->paused());

  // One poll takes one burst; what is left is still above XOFF, so B pauses A.
  EXPECT_EQ(rig.b().poll(rig.now()), 32u);
  EXPECT_GE(rig.b().rx_occupancy(), 64u);
  EXPECT_EQ(rig.b().counters().pauses_sent, 1u);
  EXPECT_EQ(rig.b().counters().resumes_sent, 0u);
  EXPECT_TRUE(generator->paused());

  ASSERT_TRUE(rig.step_until([&] { return rig.a().counters().pauses_received > 0; },
                             /*poll_a=*/true, /*poll_b=*/false));
  EXPECT_EQ(rig.a_transport().pauses_received, 1u);
  // Paused: A starts nothing more while B still does not poll.
  const uint64_t started = rig.a_transport().data_packets;
  rig.step_for(10 * clock::kNanosPerMilli, /*poll_a=*/true, /*poll_b=*/false);
  EXPECT_EQ(rig.a_transport().data_packets, started);

  // Drain B a burst at a time: it resumes A on the poll that takes it to XON or below, and
  // not before.
  while (rig.b().counters().resumes_sent == 0) {
    const uint32_t before = rig.b().rx_occupancy();
    ASSERT_GT(before, 16u) << "the backlog reached XON without a resume";
    ASSERT_GT(rig.b().poll(rig.now()), 0u);
  }
  EXPECT_LE(rig.b().rx_occupancy(), 16u);
  EXPECT_FALSE(generator->paused());
  EXPECT_EQ(rig.b().counters().resumes_sent, 1u);

  ASSERT_TRUE(rig.step_until([&] { return !rig.finished().empty(); }));
  EXPECT_EQ(rig.a_transport().resumes_received, 1u);
  EXPECT_GT(rig.a_transport().data_packets, started);
  EXPECT_EQ(rig.finished()[0].status, transport::FlowStatus::kCompleted);
}

TEST_F(PfcOverDpdk, GenerationOnADeviceThatCannotCountItsQueueFailsAtSetup) {
  uint16_t null_device = 0;
  ASSERT_EQ(rte_eth_dev_get_port_by_name("net_null0", &null_device), 0);
  frame::PayloadPattern payload(kPmtu, kPmtu);
  WireDirectory directory;
  DpdkPortSetup setup;
  setup.name = "lab7";
  setup.device = null_device;
  setup.speed_bps = kSpeed;
  setup.mtu = 1500;
  setup.pmtu = kPmtu;
  setup.mbufs = 4095;
  setup.pool_prefix = "pfcnull";
  setup.pfc.enabled = true;
  try {
    DpdkPort port(setup, payload, directory);
    FAIL() << "a net_null port accepted PFC generation";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("port \"lab7\""), std::string::npos) << message;
    EXPECT_NE(message.find("net_null"), std::string::npos) << message;
    EXPECT_NE(message.find("cannot report"), std::string::npos) << message;
  }
  // The failed port gave the device and its pool names back.
  setup.pfc.enabled = false;
  DpdkPort port(setup, payload, directory);
  EXPECT_EQ(port.pause_generator(), nullptr);
}

TEST_F(PfcOverDpdk, XoffBeyondWhatTheReceiveQueueHoldsFailsAtSetup) {
  DpdkPfcSetup pfc;
  pfc.enabled = true;
  pfc.xoff = 600;  // a ring of 512 holds 511
  pfc.xon = 100;
  try {
    BackToBack rig(pfc, 512);
    FAIL() << "xoff above the ring's capacity was accepted";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("port \"b\""), std::string::npos) << message;
    EXPECT_NE(message.find("511"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace etwire::nic::dpdk
