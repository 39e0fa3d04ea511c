#include "dataplane/loopback/twin_capture_point.h"

#include <thread>

namespace etwire::dataplane {

TwinCapturePoint::TwinCapturePoint(const nic::WireDirectory& directory,
                                   const frame::PayloadPattern& payload,
                                   nic::capture::FrameCaptureRing& ring,
                                   const nic::capture::CaptureWriter& writer,
                                   const std::array<uint8_t, 6>& own_mac,
                                   const std::array<uint8_t, 6>& peer_mac)
    : directory_(directory),
      frame_writer_(payload),
      ring_(ring),
      writer_(writer),
      frame_(payload.size() + frame::kLargestRoceOverhead) {
  pause_sent_.src_mac = own_mac;
  pause_received_.src_mac = peer_mac;
}

void TwinCapturePoint::capture(const nic::Packet& packet, clock::Nanos now,
                               nic::capture::Direction direction) {
  const frame::FrameAddresses* addresses =
      direction == nic::capture::Direction::kTransmit ? &pause_sent_ : &pause_received_;
  uint32_t dest_qpn = 0;
  if (packet.kind == nic::PacketKind::kRoce) {
    const nic::WireRoute* route = directory_.route(directory_.connection_of(packet));
    if (route == nullptr) {
      ++unaddressed_;
      return;
    }
    addresses = packet.is_data() ? &route->forward : &route->backward;
    dest_qpn = route->wire_dest_qpn(packet);
  }
  const size_t length =
      frame_writer_.write(packet, *addresses, frame_.data(), frame_.size(), dest_qpn);
  if (length == 0) return;
  // A frame the twin damaged on the way: its receiver's ICRC check fails on it, and so does a
  // reader of the capture. The ICRC is a RoCE frame's last four bytes (none is under 60 bytes).
  if (packet.icrc_bad) frame_[length - 1] ^= 0xFF;
  // The twin's time is virtual: waiting for the writer delays nothing a run measures.
  const auto bytes = static_cast<uint32_t>(length);
  while (!ring_.try_push(now, direction, frame_.data(), bytes, bytes)) {
    std::this_thread::yield();
  }
}

}  // namespace etwire::dataplane
