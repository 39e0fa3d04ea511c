// A capture's rings are sized by bytes: the frames each holds follow the bytes a frame keeps
// (telemetry.capture.snap_length, or whole frames), within the data plane's budget.
#include "dataplane/frame_capture.h"

#include <gtest/gtest.h>

#include <string>

namespace etwire::dataplane {
namespace {

using nic::capture::FrameCaptureRing;

config::RunConfig two_ports(uint64_t snap_length) {
  config::RunConfig config;
  for (int p = 0; p < 2; ++p) {
    config::PortConfig port;
    port.name = "p";
    port.name += std::to_string(p);
    config.ports.push_back(port);
  }
  config.telemetry.capture.snap_length = snap_length;
  return config;
}

TEST(FrameCapture, RingsHoldMoreFramesTheFewerBytesEachKeeps) {
  const config::RunConfig headers = two_ports(128);
  FrameCapture small(headers, FrameCaptureRing::kWallClockBytes);
  EXPECT_EQ(small.snap_length(), 128u);
  EXPECT_EQ(small.ring_slots(), FrameCaptureRing::kMaxSlots);
  EXPECT_EQ(small.add_ring(0).slots(), FrameCaptureRing::kMaxSlots);

  // Whole frames of the default PMTU (4096) and MTU (4200): a data frame of 4,227 bytes.
  const config::RunConfig whole = two_ports(0);
  FrameCapture large(whole, FrameCaptureRing::kWallClockBytes);
  EXPECT_EQ(large.snap_length(), 4227u);
  EXPECT_EQ(large.ring_slots(), 8192u);
  EXPECT_LE(large.ring_slots() * FrameCaptureRing::slot_bytes(large.snap_length()),
            FrameCaptureRing::kWallClockBytes);

  // The twin's small rings: capped in frames, and within their bytes for jumbo frames.
  config::RunConfig jumbo = two_ports(0);
  jumbo.ports[0].mtu = 9000;
  FrameCapture twin(jumbo, uint64_t{4} << 20, 512);
  EXPECT_EQ(twin.snap_length(), 9018u);
  EXPECT_EQ(twin.ring_slots(), 256u);
  EXPECT_EQ(twin.add_switch_port("leaf0/spine0").slots(), 256u);
}

}  // namespace
}  // namespace etwire::dataplane
