// The transport's catch-up (Transport::set_catch_up) on a clock whose events run late, as a
// busy-polled wall clock's do: packets that were due keep their exact schedule when the loop
// lags by less than the catch-up, a longer stall loses exactly what exceeds it, and time in
// which nothing waited earns nothing.
#include <gtest/gtest.h>

#include <vector>

#include "clock/event_queue.h"
#include "clock/line_rate.h"
#include "clock/scheduler.h"
#include "nic/frame_size.h"
#include "nic/port.h"
#include "tests/transport/recording_observer.h"
#include "transport/transport.h"

namespace etwire::transport {
namespace {

using clock::Nanos;

constexpr uint64_t k10G = 10'000'000'000;
constexpr uint32_t kPmtu = 4096;

// A discrete-event clock that runs every event `lateness` after its time, and stops dead for
// `stall` when it first reaches `stall_at`: a run-to-completion loop that is always a little
// behind and once gets descheduled.
class LateClock final : public clock::Scheduler {
 public:
  LateClock(Nanos lateness, Nanos stall_at = clock::kNever, Nanos stall = 0)
      : lateness_(lateness), stall_at_(stall_at), stall_(stall) {}

  Nanos now() const override { return now_; }
  void run_at(Nanos when, clock::EventHandler* handler, uint64_t tag) override {
    queue_.push(when, handler, tag);
  }
  uint64_t poll() override {
    if (queue_.empty()) return 0;
    const clock::ScheduledEvent event = queue_.pop();
    now_ = std::max(now_, event.when + lateness_);
    if (now_ >= stall_at_) {
      now_ += stall_;
      stall_at_ = clock::kNever;
    }
    event.handler->on_event(event.tag, now_);
    return 1;
  }
  bool idle() const override { return queue_.empty(); }

 private:
  clock::EventQueue queue_;
  Nanos now_ = 0;
  Nanos lateness_;
  Nanos stall_at_;
  Nanos stall_;
};

// A port whose packets go nowhere: it records when each data packet was handed to it.
struct RecordingPort final : nic::Port {
  void transmit(const nic::Packet& packet, Nanos now) override {
    if (packet.is_data()) handed_at.push_back(now);
  }
  uint64_t speed_bps() const override { return k10G; }
  void set_receiver(nic::PacketReceiver*) override {}
  std::vector<Nanos> handed_at;
};

// Posts a message when its time comes, as the engine would from an event of its own.
struct DelayedPost final : clock::EventHandler {
  void on_event(uint64_t, Nanos) override { transport->post(connection, bytes, {}); }
  Transport* transport = nullptr;
  ConnectionId connection;
  uint64_t bytes = 0;
};

struct Rig {
  explicit Rig(LateClock& clock, Nanos catch_up)
      : clock(clock), transport(config(), clock, observer) {
    transport.set_catch_up(transport.add_port(port, {}, {}), catch_up);
    connection = transport.connect(0, 0, 49152);
  }
  static const config::TransportConfig& config() {
    static const config::TransportConfig c = [] {
      config::TransportConfig t;
      t.pmtu = kPmtu;
      t.dcqcn.enabled = false;
      // No ACK ever comes: no timeout within the test.
      t.retransmission = config::Retransmission::kFixed;
      t.retransmit_timeout_ns = 60'000'000'000;
      return t;
    }();
    return c;
  }
  // Runs until the port has been handed `packets` data packets.
  void run_until(size_t packets) {
    while (port.handed_at.size() < packets && !clock.idle()) clock.poll();
  }

  LateClock& clock;
  RecordingPort port;
  testing::RecordingObserver observer;
  Transport transport;
  ConnectionId connection;
};

// The wire time of one full middle packet at 10 Gb/s (4178 bytes: 3342.4 ns).
double packet_ns() {
  nic::Packet full;
  full.opcode = nic::opcode::kWriteMiddle;
  full.payload_bytes = kPmtu;
  return static_cast<double>(nic::wire_bytes(full, {})) * 8.0 / 10.0;
}

TEST(CatchUp, ALateLoopKeepsTheExactRate) {
  // Every event 700 ns late, a fifth of a packet time.
  constexpr Nanos kLate = 700;
  for (const Nanos catch_up : {Nanos{0}, Nanos{100'000}}) {
    SCOPED_TRACE(catch_up);
    LateClock clock(kLate);
    Rig rig(clock, catch_up);
    rig.transport.post(rig.connection, 2000ull * kPmtu, {});
    rig.run_until(2000);
    ASSERT_EQ(rig.port.handed_at.size(), 2000u);
    const double last = static_cast<double>(rig.port.handed_at.back());
    if (catch_up == 0) {
      // Without catch-up each packet loses the lateness: the rate drops by a fifth.
      EXPECT_GT(last, 1999 * (packet_ns() + kLate) - 2000);
    } else {
      // With it, the 2000th packet leaves on the exact schedule, handed over one lateness
      // after its time (the first packet, posted at 0, is FIRST: 16 bytes more than MIDDLE).
      EXPECT_NEAR(last, 1999 * packet_ns() + kLate, 20);
    }
  }
}

TEST(CatchUp, AStallLongerThanTheCatchUpLosesOnlyTheExcess) {
  constexpr Nanos kCatchUp = 50'000;
  constexpr Nanos kStall = 200'000;
  LateClock clock(300, 1'000'000, kStall);
  Rig rig(clock, kCatchUp);
  rig.transport.post(rig.connection, 2000ull * kPmtu, {});
  rig.run_until(2000);
  ASSERT_EQ(rig.port.handed_at.size(), 2000u);
  // Packets after the stall run kStall - kCatchUp behind the exact schedule, no more.
  const double last = static_cast<double>(rig.port.handed_at.back());
  EXPECT_NEAR(last, 1999 * packet_ns() + 300 + (kStall - kCatchUp), packet_ns());
  // And the catch-up after the stall came as a burst: some packets handed over together.
  size_t burst = 0;
  for (size_t i = 1; i < rig.port.handed_at.size(); ++i) {
    if (rig.port.handed_at[i] == rig.port.handed_at[i - 1]) ++burst;
  }
  EXPECT_GE(burst, static_cast<size_t>(kCatchUp / packet_ns()) - 1);
}

TEST(CatchUp, IdleTimeEarnsNoBurst) {
  constexpr Nanos kLate = 700;
  constexpr Nanos kPostAt = 5'000'000;
  LateClock clock(kLate);
  Rig rig(clock, 1'000'000);
  rig.transport.post(rig.connection, 10ull * kPmtu, {});
  DelayedPost later;
  later.transport = &rig.transport;
  later.connection = rig.connection;
  later.bytes = 100ull * kPmtu;
  clock.run_at(kPostAt, &later, 0);
  rig.run_until(110);
  ASSERT_EQ(rig.port.handed_at.size(), 110u);
  // The second message, posted after 5 ms of an idle port, is paced from its post (one
  // lateness after kPostAt), not from the end of the first: the catch-up does not cover idle
  // time, so its packets never come faster than the line rate.
  const Nanos posted = kPostAt + kLate;
  for (size_t k = 0; k < 100; ++k) {
    EXPECT_GE(static_cast<double>(rig.port.handed_at[10 + k]), posted + k * packet_ns() - 1)
        << "packet " << k;
  }
}

}  // namespace
}  // namespace etwire::transport
