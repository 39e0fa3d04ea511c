// The transport's side of one port: the NIC's transmit scheduler. It serializes at line rate
// (exactly, LineRateTimer), sends control packets (ACK, NAK, CNP) ahead of data by priority
// class, round-robins the QPs whose pacers allow a packet now, and stops a class while the link
// partner has it paused (PFC).
#pragma once

#include <array>
#include <cstdint>

#include "clock/line_rate.h"
#include "clock/time.h"
#include "common/ring_queue.h"
#include "config/qos_config.h"
#include "config/transport_config.h"
#include "nic/frame_size.h"
#include "nic/packet.h"
#include "nic/port.h"

namespace etwire::transport {

inline constexpr int kPriorities = 8;
// Packets one look at a port may send when it is behind the wall clock (see Transport::kick).
inline constexpr int kCatchUpBurst = 32;

struct TransportPortCounters {
  uint64_t data_packets = 0;  // including retransmissions
  uint64_t data_bytes = 0;    // wire bytes
  uint64_t retransmitted_packets = 0;
  uint64_t acks_sent = 0;
  uint64_t naks_sent = 0;
  uint64_t cnps_sent = 0;
  uint64_t acks_received = 0;
  uint64_t naks_received = 0;
  uint64_t cnps_received = 0;
  uint64_t ecn_marked_received = 0;  // CE-marked data packets that arrived
  // Data packets the port's responders found missing from their sequence, counted when the gap
  // is seen: lost (or overtaken) on the way, wherever that was, device or wire or fabric.
  uint64_t missing_packets = 0;
  uint64_t sprayed_packets = 0;    // the port's QPs' (QpCounters)
  uint64_t reordered_packets = 0;  // the port's QPs' (QpCounters)
  uint64_t trimmed_packets = 0;    // the port's QPs' (QpCounters)
  uint64_t pauses_received = 0;    // PFC frames with a non-zero time
  uint64_t resumes_received = 0;   // PFC frames with time 0
  uint64_t timeouts = 0;
  uint64_t stale_packets = 0;  // for a failed QP or an unknown QP number: dropped
};

struct TransportPort {
  nic::Port* nic = nullptr;
  uint32_t id = 0;  // how packets name the port (Packet::src_port / dst_port)
  config::PortQos qos;
  nic::FrameFormat format;
  // How its responders take data; in the byte the fields above leave before speed_bps.
  config::Receiver receiver = config::Receiver::kGoBackN;

 private:
  // Bit per class whose control queue holds packets: a look at the port reads this byte, not
  // the eight queues (five cache lines), to learn that no control packet waits. Private with
  // the queues, so that no push or pop can pass by it.
  uint8_t control_waiting_ = 0;

 public:
  uint64_t speed_bps = 0;
  clock::LineRateTimer wire;
  RingQueue<uint32_t> ready;                     // requester QPs that may send now, round-robin
  clock::Nanos kick_pending_at = clock::kNever;  // earliest scheduled look at this port
  clock::Nanos catch_up = 0;                     // see Transport::set_catch_up
  std::array<clock::Nanos, kPriorities> paused_until{};  // PFC: the class may send from here on
  TransportPortCounters counters;
  // The classes whose control queues hold packets, a bit each.
  unsigned control_waiting() const { return control_waiting_; }
  void queue_control(const nic::Packet& packet) {
    const unsigned priority = packet.priority & (kPriorities - 1);
    control_[priority].push_back(packet);
    control_waiting_ = static_cast<uint8_t>(control_waiting_ | (1u << priority));
  }
  // The class's first packet; the class must hold one (its bit in control_waiting()).
  nic::Packet take_control(int priority) {
    RingQueue<nic::Packet>& queue = control_[priority];
    const nic::Packet packet = queue.pop_front();
    if (queue.empty()) {
      control_waiting_ = static_cast<uint8_t>(control_waiting_ & ~(1u << priority));
    }
    return packet;
  }

 private:
  // Last: a data packet's look at the port reaches only control_waiting_, so the fields it does
  // read stay within the port's first 256 bytes.
  std::array<RingQueue<nic::Packet>, kPriorities> control_;  // ACK/NAK/CNP waiting, per class
};

}  // namespace etwire::transport
