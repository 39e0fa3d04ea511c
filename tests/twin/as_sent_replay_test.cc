// The as-sent replay (twin/replay/as_sent_replay.h): frames enter the twin at their stamps, a
// host's wire still keeps its line rate, and what the twin does to them (queueing, marks, drops)
// is its own model's: the same frames paced or in a burst meet different fates.
#include <gtest/gtest.h>

#include <vector>

#include "clock/line_rate.h"
#include "clock/virtual_clock.h"
#include "tests/twin/nic_driver.h"
#include "twin/fabric/fabric_twin.h"
#include "twin/replay/as_sent_replay.h"

namespace etwire::twin::testing {
namespace {

using clock::Nanos;

class FramesInMemory final : public SentFrames {
 public:
  void add(Nanos at, const nic::Packet& packet) { frames_.push_back({at, packet}); }
  bool next(SentFrame& out) override {
    if (next_ == frames_.size()) return false;
    out = frames_[next_++];
    return true;
  }

 private:
  std::vector<SentFrame> frames_;
  size_t next_ = 0;
};

config::FabricConfig marking_fabric() {
  config::FabricConfig config = quiet_fabric();
  config.ecn.enabled = true;
  config.ecn.kmin_bytes = 5'000;
  config.ecn.kmax_bytes = 5'001;
  config.ecn.pmax = 1.0;
  return config;
}

const std::vector<TwinPortSpec> kFastIntoSlow{{"fast", k100G}, {"slow", k25G}};

AsSentResult replay(const config::FabricConfig& config, FramesInMemory& frames,
                    WireCounters* slow_port = nullptr) {
  clock::VirtualClock clock;
  FabricTwin twin(config, kFastIntoSlow, clock, 1);
  std::vector<SentFrames*> sources{&frames, nullptr};
  AsSentResult result = replay_as_sent(twin, clock, sources);
  if (slow_port != nullptr) *slow_port = twin.switch_port_counters(1);
  return result;
}

TEST(AsSentReplay, FramesSentAsAPacedRunSentThemArriveAsTheyDidThere) {
  // The run: 300 frames at the fast port's line rate into the slow one, marked above 5 KB.
  clock::VirtualClock clock;
  FabricTwin twin(marking_fabric(), kFastIntoSlow, clock, 1);
  NicDriver driver(twin, clock);
  for (uint32_t i = 0; i < 300; ++i) {
    driver.send(data_packet(0, 1, 1000, i, 0, nic::ecn::kEct0));
  }
  clock.run_until(clock::kNever);
  const std::vector<Delivery> run = driver.data_received_by(1);
  ASSERT_EQ(run.size(), 300u);

  FramesInMemory frames;
  for (uint32_t i = 0; i < 300; ++i) {
    frames.add(driver.start_times(0)[i], data_packet(0, 1, 1000, i, 0, nic::ecn::kEct0));
  }
  const AsSentResult replayed = replay(marking_fabric(), frames);
  const ArrivalTally& arrived = replayed.hosts[1].arrived;
  EXPECT_EQ(replayed.hosts[0].sent, 300u);
  EXPECT_EQ(replayed.hosts[0].held, 0u);
  EXPECT_EQ(arrived.data_frames, 300u);
  size_t marked = 0;
  for (const Delivery& d : run) marked += d.packet.ecn == nic::ecn::kCe;
  ASSERT_GT(marked, 0u);
  EXPECT_EQ(arrived.ce_marked, marked);
  EXPECT_EQ(arrived.first_data, run.front().at);
  EXPECT_EQ(arrived.last_data, run.back().at);
}

TEST(AsSentReplay, AFrameStampedBeforeItsWireFreesWaitsForIt) {
  // 50 frames handed over at one instant leave one after the other at 100 Gb/s.
  FramesInMemory frames;
  for (uint32_t i = 0; i < 50; ++i) frames.add(1000, data_packet(0, 1, 1000, i));
  const AsSentResult replayed = replay(quiet_fabric(), frames);
  const Nanos frame_time = clock::LineRateTimer::duration(1000, k100G);
  EXPECT_EQ(replayed.hosts[0].sent, 50u);
  EXPECT_EQ(replayed.hosts[0].held, 49u);
  EXPECT_EQ(replayed.hosts[0].longest_hold, 49 * frame_time);
  EXPECT_EQ(replayed.hosts[1].arrived.data_frames, 50u);
  // The slow port drains them at its own rate.
  const Nanos slow_frame = clock::LineRateTimer::duration(1000, k25G);
  EXPECT_EQ(replayed.hosts[1].arrived.last_data - replayed.hosts[1].arrived.first_data,
            49 * slow_frame);
}

TEST(AsSentReplay, TheSameFramesPacedOrInABurstMeetTheModelDifferently) {
  // Paced at the slow port's rate nothing queues; as a burst they fill its queue past the
  // marking threshold and past a 10-frame buffer.
  config::FabricConfig config = marking_fabric();
  config.buffer.size_bytes = 10'000;
  config.buffer.ingress_reserve_bytes = 0;
  const Nanos slow_frame = clock::LineRateTimer::duration(1000, k25G);
  FramesInMemory paced;
  FramesInMemory burst;
  for (uint32_t i = 0; i < 40; ++i) {
    paced.add(i * slow_frame, data_packet(0, 1, 1000, i, 0, nic::ecn::kEct0));
    burst.add(0, data_packet(0, 1, 1000, i, 0, nic::ecn::kEct0));
  }
  WireCounters paced_port;
  WireCounters burst_port;
  const AsSentResult from_paced = replay(config, paced, &paced_port);
  const AsSentResult from_burst = replay(config, burst, &burst_port);
  EXPECT_EQ(from_paced.hosts[1].arrived.data_frames, 40u);
  EXPECT_EQ(from_paced.hosts[1].arrived.ce_marked, 0u);
  EXPECT_EQ(paced_port.drops_buffer, 0u);
  EXPECT_GT(from_burst.hosts[1].arrived.ce_marked, 0u);
  EXPECT_GT(burst_port.drops_buffer, 0u);
  EXPECT_EQ(from_burst.hosts[1].arrived.data_frames + burst_port.drops_buffer, 40u);
}

TEST(AsSentReplay, ControlPacketsAreCountedByKind) {
  FramesInMemory frames;
  nic::Packet cnp = data_packet(0, 1, 100, 0);
  cnp.opcode = nic::opcode::kCnp;
  cnp.ecn = nic::ecn::kCe;
  frames.add(0, cnp);
  nic::Packet ack = data_packet(0, 1, 100, 0);
  ack.opcode = nic::opcode::kAcknowledge;
  frames.add(10, ack);
  const AsSentResult replayed = replay(quiet_fabric(), frames);
  const ArrivalTally& arrived = replayed.hosts[1].arrived;
  EXPECT_EQ(arrived.frames, 2u);
  EXPECT_EQ(arrived.cnps, 1u);
  EXPECT_EQ(arrived.ce_marked, 1u);
  EXPECT_EQ(arrived.data_frames, 0u);
  EXPECT_EQ(arrived.last_data, -1);
}

}  // namespace
}  // namespace etwire::twin::testing
