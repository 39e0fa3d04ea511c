// One place of the fabric twin whose traffic is captured: a NIC port or a switch port. The twin
// shows it every frame the port sends and receives (a twin::FrameTap), and it writes the
// frame each packet would be on a wire into a capture ring. Frames are made by the frame writer
// the DPDK backend sends with, addressed from the connection's wire route (the plan's MACs, IPs
// and QP numbers), so a twin's capture reads like a lab's: a CE mark the twin's switches set shows
// in the IP header, a CNP is a CNP, and a packet the twin corrupted carries a wrong ICRC.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "nic/capture/capture_writer.h"
#include "nic/capture/frame_capture_ring.h"
#include "nic/frame/frame_writer.h"
#include "nic/frame/payload_pattern.h"
#include "nic/frame/wire_directory.h"
#include "twin/frame_tap.h"

namespace etwire::dataplane {

class TwinCapturePoint final : public twin::FrameTap {
 public:
  // Everything given must outlive the point; `writer` drains `ring`, and while it is not
  // capturing packets pass uncaptured. PFC frames are link-local: those the port sends carry
  // `own_mac` as their source, those it receives `peer_mac` (the other end of its cable).
  TwinCapturePoint(const nic::WireDirectory& directory, const frame::PayloadPattern& payload,
                   nic::capture::FrameCaptureRing& ring, const nic::capture::CaptureWriter& writer,
                   const std::array<uint8_t, 6>& own_mac, const std::array<uint8_t, 6>& peer_mac);

  void departs(const nic::Packet& packet, clock::Nanos now) override {
    if (writer_.capturing()) capture(packet, now, nic::capture::Direction::kTransmit);
  }
  void arrives(const nic::Packet& packet, clock::Nanos now) override {
    if (writer_.capturing()) capture(packet, now, nic::capture::Direction::kReceive);
  }

  // Packets not captured because no connection of the directory has their QP number.
  uint64_t unaddressed() const { return unaddressed_; }

 private:
  void capture(const nic::Packet& packet, clock::Nanos now, nic::capture::Direction direction);

  const nic::WireDirectory& directory_;
  frame::FrameWriter frame_writer_;
  nic::capture::FrameCaptureRing& ring_;
  frame::FrameAddresses pause_sent_;
  frame::FrameAddresses pause_received_;
  const nic::capture::CaptureWriter& writer_;
  std::vector<uint8_t> frame_;  // the frame being made: room for the largest
  uint64_t unaddressed_ = 0;
};

}  // namespace etwire::dataplane
