// A port whose traffic is captured: it wraps another port (a fabric twin's host port, which
// moves packets, not bytes) for what it sends, taps what arrives at it, and writes the frame each
// packet would be on a wire into a capture ring. Frames are made by the frame writer the DPDK
// backend sends with, addressed from the connection's wire route (the plan's MACs, IPs and QP
// numbers), so a twin's capture reads like a lab's: a CE mark the twin's switches set shows in the
// IP header, a CNP is a CNP, and a packet the twin corrupted carries a wrong ICRC.
#pragma once

#include <cstdint>
#include <vector>

#include "nic/capture/capture_writer.h"
#include "nic/capture/frame_capture_ring.h"
#include "nic/frame/frame_writer.h"
#include "nic/frame/payload_pattern.h"
#include "nic/port.h"
#include "nic/wire_directory.h"

namespace etwire::nic::capture {

class CapturingPort final : public Port {
 public:
  // A RoCE frame's bytes besides its payload and pad, at most: Ethernet, 802.1Q, IPv6, UDP, BTH,
  // RETH or AETH and ImmDt, then the ICRC; rounded up.
  static constexpr uint32_t kLargestOverhead = 128;

  // Everything given must outlive the port; `writer` drains `ring`, and while it is not
  // capturing packets pass uncaptured. `pause_addresses` address the PFC frames the port sends
  // or receives (the port's MAC as the source).
  CapturingPort(Port& inner, const WireDirectory& directory, const frame::PayloadPattern& payload,
                FrameCaptureRing& ring, const CaptureWriter& writer,
                const frame::FrameAddresses& pause_addresses);

  void transmit(const Packet& packet, clock::Nanos now) override {
    if (writer_.capturing()) capture(packet, now, Direction::kTransmit);
    inner_.transmit(packet, now);
  }
  uint64_t speed_bps() const override { return inner_.speed_bps(); }
  void set_receiver(PacketReceiver* receiver) override { inner_.set_receiver(receiver); }

  // What captures the packets arriving at the port: the wrapped port's owner hands it every one,
  // before the NIC's checks (nic::loopback::LoopbackPort::set_arrival_tap).
  PacketReceiver& arrivals() { return arrivals_; }

  // Packets not captured because no connection of the directory has their QP number.
  uint64_t unaddressed() const { return unaddressed_; }

 private:
  class Arrivals final : public PacketReceiver {
   public:
    explicit Arrivals(CapturingPort& port) : port_(port) {}
    void receive(const Packet& packet, clock::Nanos now) override {
      if (port_.writer_.capturing()) port_.capture(packet, now, Direction::kReceive);
    }

   private:
    CapturingPort& port_;
  };

  void capture(const Packet& packet, clock::Nanos now, Direction direction);

  Port& inner_;
  const WireDirectory& directory_;
  frame::FrameWriter frame_writer_;
  FrameCaptureRing& ring_;
  frame::FrameAddresses pause_addresses_;
  const CaptureWriter& writer_;
  Arrivals arrivals_{*this};
  std::vector<uint8_t> frame_;  // the frame being made: room for the largest
  uint64_t unaddressed_ = 0;
};

}  // namespace etwire::nic::capture
