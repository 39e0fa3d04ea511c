// One DPDK port as the transport sees it (nic::Port): packets in, RoCEv2 frames out, frames in,
// packets out. On a port of several queue pairs, one object per queue, each driven by its own
// core. The transport paces and serializes at line rate itself; this class turns each
// packet it starts into a frame and hands frames to the device in bursts, and polls the device
// for arrived frames, which it parses, checks (ICRC) and hands to the transport.
//
// Hot path: no heap allocation, lock or log per frame. Data frames come from a mempool whose
// every mbuf holds the synthetic payload already (written once when the pool is made): a data
// frame only gets its headers written in front of the payload and its ICRC behind it. The few
// payload bytes an ICRC overwrites in a short frame are put back the next time the mbuf is used.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "clock/scheduler.h"
#include "nic/capture/capture_writer.h"
#include "nic/capture/frame_capture_ring.h"
#include "nic/dpdk/pause_generator.h"
#include "nic/frame/frame_reader.h"
#include "nic/frame/frame_writer.h"
#include "nic/frame/middle_frame_template.h"
#include "nic/frame/payload_pattern.h"
#include "nic/frame/wire_directory.h"
#include "nic/packet.h"
#include "nic/port.h"

struct rte_mbuf;
struct rte_mempool;
struct rte_ring;

namespace etwire::nic::dpdk {

// PFC generation: the port pauses class `priority` of its link partner while its receive queue
// holds `xoff` descriptors or more, until it drains to `xon` (see PauseGenerator).
struct DpdkPfcSetup {
  bool enabled = false;
  uint8_t priority = 3;  // the port's lossless data priority
  uint16_t xoff = 768;
  uint16_t xon = 512;
  uint16_t quanta = 0xFFFF;  // of each pause; 512 bit times each at the port's speed
};

struct DpdkPortSetup {
  std::string name;     // the configuration's port name, for messages
  uint16_t device = 0;  // DPDK port id
  uint32_t index = 0;   // the port's index in the run (Packet::src_port / dst_port)
  // The queue pair this object drives, of `queues` on the device. With one, the port configures,
  // starts and stops the device itself; with several, the caller configures the device
  // (configure_device) before making one DpdkPort per queue, and starts and stops it
  // (start_device, stop_device) around them.
  uint16_t queue = 0;
  uint16_t queues = 1;
  uint64_t speed_bps = 0;
  uint32_t mtu = 0;   // IP MTU: sizes receive buffers
  uint32_t pmtu = 0;  // largest payload of a data frame
  uint8_t ip_version = 4;
  uint16_t vlan = 0;  // 802.1Q VLAN id of every RoCE frame; 0 = untagged
  std::array<uint8_t, 6> mac{};
  uint16_t rx_descriptors = 1024;
  uint16_t tx_descriptors = 1024;
  uint32_t mbufs = 16383;
  uint32_t mbuf_cache = 256;
  uint16_t burst = 32;
  std::string pool_prefix;  // makes mempool names unique in the process
  DpdkPfcSetup pfc;
  // The ring a net_ring device receives from, when the caller made the device from rings: the
  // ring PMD cannot report its queue's occupancy, the ring's count is that occupancy. Needed for
  // PFC generation on such a device; nullptr otherwise.
  rte_ring* rx_ring = nullptr;
  // telemetry.record.pcap: the ring this queue's frames go into, both ways, while the writer is
  // capturing; a full ring loses the frame (counted), never holds the port up. nullptr: none.
  capture::FrameCaptureRing* capture_ring = nullptr;
  const capture::CaptureWriter* capture_writer = nullptr;
};

struct DpdkPortCounters {
  uint64_t tx_frames = 0;  // handed to the device
  uint64_t tx_bytes = 0;   // wire bytes: frame, FCS, preamble and gap
  uint64_t rx_frames = 0;  // every frame the device delivered, good or not
  uint64_t rx_bytes = 0;
  uint64_t tx_dropped = 0;     // no mbuf free, or the device's queue stayed full
  uint64_t tx_unrouted = 0;    // a packet for a connection the directory does not know
  uint64_t rx_unknown_qp = 0;  // a RoCE frame for a QP number no connection of the run has
  uint64_t pauses_sent = 0;    // PFC frames with a non-zero time, per class
  uint64_t resumes_sent = 0;   // PFC frames with time 0
  uint64_t pauses_received = 0;
  uint64_t rx_handed_over = 0;    // arrived on this queue for another queue of the device
  uint64_t rx_handover_lost = 0;  // of those, found the other queue's ring full
};

// Where a port of several queues sends what arrived on its queue for another one: a RoCE packet
// whose connection end another queue drives (the device steered it there), or a pause frame,
// which every queue's sender must honour. The receiving side hands it to that queue's port
// (DpdkPort::receive_handed_over).
class QueueHandover {
 public:
  // False when the packet could not be handed over (it is then lost, as a frame the device
  // dropped would be).
  virtual bool hand_over(uint16_t queue, const Packet& packet) = 0;

 protected:
  ~QueueHandover() = default;
};

// A device of several queue pairs: configured before its DpdkPorts are made, started after.
// Throw std::runtime_error naming the port and DPDK's reason.
void configure_device(uint16_t device, uint16_t queues, const std::string& port);
void start_device(uint16_t device, const std::string& port);
// Stops the device and empties its receive queues (after its ports' loops stopped, before the
// ports are destroyed: the queues hold mbufs of the ports' pools).
void stop_device(uint16_t device, uint16_t queues);

class DpdkPort final : public nic::Port {
 public:
  // Sets up the device's queue pair `setup.queue`; with one queue pair, configures and starts
  // the device first (see DpdkPortSetup::queues). Throws std::runtime_error
  // naming the port and DPDK's reason when the device cannot be set up, or when PFC generation
  // is enabled and the device cannot say how full its receive queue is (or holds fewer than
  // xoff descriptors). `payload` and `directory` must outlive the port.
  DpdkPort(const DpdkPortSetup& setup, const frame::PayloadPattern& payload,
           const WireDirectory& directory);
  ~DpdkPort() override;
  DpdkPort(const DpdkPort&) = delete;
  DpdkPort& operator=(const DpdkPort&) = delete;

  void transmit(const Packet& packet, clock::Nanos now) override;
  uint64_t speed_bps() const override { return setup_.speed_bps; }
  void set_receiver(PacketReceiver* receiver) override { receiver_ = receiver; }
  // Where packets for the device's other queues go; needed when setup.queues > 1.
  void set_queue_handover(QueueHandover* handover) { handover_ = handover; }
  // A packet another queue of the device received for this one, at `now`.
  void receive_handed_over(const Packet& packet, clock::Nanos now) {
    if (receiver_ != nullptr) receiver_->receive(packet, now);
  }

  // Hands queued frames to the device, then receives one burst and delivers its packets at
  // `now`, or, given `clock`, at its reading once a burst brought any: `now` is the loop round's
  // time, which whatever ran since (events, another thread on a shared CPU) can leave behind the
  // arrival, so that a delivery stamped on one core could read later than the acknowledgement of
  // it stamped on another. With PFC generation, then looks at the receive backlog when the burst
  // came back full or the partner is paused, and sends the pause or resume the backlog calls
  // for. Returns the number of frames received.
  uint32_t poll(clock::Nanos now, const clock::Scheduler* clock = nullptr);
  // Frames queued for the device and not yet taken by it (the next poll hands them over).
  uint32_t frames_waiting() const { return pending_; }
  // Queues a PFC frame that pauses class `priority` of the link partner for `quanta` (0
  // resumes it). False when it could not be queued (no mbuf, or the device's queue stayed full).
  bool send_pause(uint8_t priority, uint16_t quanta);
  // Frees every frame still queued for transmission and stops the device.
  void stop();

  // How far behind the wall clock the transport may count this port's packets as starting
  // (Transport::set_catch_up): the time half the TX ring of full-PMTU frames takes at the port's
  // speed, so that a catch-up burst always fits in the ring.
  clock::Nanos catch_up() const;

  const std::string& name() const { return setup_.name; }
  uint16_t device() const { return setup_.device; }
  uint16_t queue() const { return setup_.queue; }
  const DpdkPortCounters& counters() const { return counters_; }
  // Descriptors (frames) waiting in the receive queue; only when PFC generation is enabled.
  uint32_t rx_occupancy() const;
  // PFC generation's state; nullptr when it is not enabled.
  const PauseGenerator* pause_generator() const { return generator_ ? &*generator_ : nullptr; }
  const frame::FrameErrorCounters& frame_errors() const { return reader_.counters(); }
  // Frames the device itself lost: missed for want of descriptors or mbufs, failed to send.
  uint64_t device_drops() const;

 private:
  // Every packet transmit() does not write itself: all of them while capturing.
  [[gnu::noinline]] void transmit_other(const Packet& packet, clock::Nanos now);
  rte_mbuf* data_frame(const Packet& packet, const WireRoute& route, uint32_t connection);
  // The connection's template when `packet` is a full-PMTU MIDDLE packet (made or remade when
  // its headers changed), else nullptr. The steady state is inline: one compare of the headers.
  frame::MiddleFrameTemplate* middle_template(const Packet& packet, const WireRoute& route,
                                              uint32_t connection) {
    if (connection < middle_count_ && middle_templates_[connection].fits(packet)) {
      return &middle_templates_[connection];
    }
    return remake_middle_template(packet, route, connection);
  }
  frame::MiddleFrameTemplate* remake_middle_template(const Packet& packet, const WireRoute& route,
                                                     uint32_t connection);
  // The next data mbuf: from spare_, refilled a burst at a time (one pool access per burst).
  rte_mbuf* take_data_mbuf() {
    if (spare_next_ < setup_.burst) return spare_[spare_next_++];
    return refill_spare();
  }
  rte_mbuf* refill_spare();
  // An ACK, NAK, CNP (to the QP of wire number `dest_qpn`) or PFC frame.
  rte_mbuf* other_frame(const Packet& packet, const frame::FrameAddresses& addresses,
                        uint32_t dest_qpn);
  // Inlined into transmit_other: out of line, with the capture hook in it, it cost some 30
  // instructions a frame (docs/performance.md, "The DPDK transmit path against 91642af").
  [[gnu::always_inline]] inline bool enqueue(rte_mbuf* frame);
  bool queue_pause(const Packet& packet);
  void flush();
  void deliver(rte_mbuf* frame, clock::Nanos now);
  void hand_over(uint16_t queue, const Packet& packet);
  void start_generation(uint16_t rx_descriptors);
  void regulate(clock::Nanos now);
  void free_pools();
  // Hands a frame to the capture ring, when capturing; out of the way of the transmit path.
  [[gnu::cold, gnu::noinline]] void capture(const rte_mbuf* frame, capture::Direction direction);

  DpdkPortSetup setup_;
  const frame::PayloadPattern& payload_;
  const WireDirectory& directory_;
  frame::FrameWriter writer_;
  frame::FrameReader reader_;
  frame::ParsedFrame parsed_;
  frame::FrameAddresses pause_addresses_;
  PacketReceiver* receiver_ = nullptr;
  QueueHandover* handover_ = nullptr;
  rte_mempool* data_pool_ = nullptr;     // payload pre-written in every mbuf
  rte_mempool* control_pool_ = nullptr;  // ACK, NAK, CNP, PFC: written whole
  rte_mempool* rx_pool_ = nullptr;
  std::vector<rte_mbuf*> tx_;   // frames waiting for the device, `burst` at most
  uint64_t pending_bytes_ = 0;  // their wire bytes
  std::vector<rte_mbuf*> rx_;
  // Per connection: the headers and ICRC register of its full-PMTU MIDDLE frames, the bulk of
  // its traffic (see MiddleFrameTemplate), and room to write one frame when making one.
  std::vector<frame::MiddleFrameTemplate> middle_templates_;
  // middle_templates_.size(), kept apart: a template is 192 bytes, and the vector's size a
  // multiply by an inverse on every data frame.
  uint32_t middle_count_ = 0;
  frame::PsnWordShift psn_shift_;  // for the PMTU: every template's
  std::vector<uint8_t> template_scratch_;
  // Data mbufs taken from the pool a burst at a time (one pool access per burst, not per frame);
  // the next frame uses spare_[spare_next_], and the rest go back when the port stops.
  std::vector<rte_mbuf*> spare_;
  uint32_t spare_next_ = 0;
  std::vector<uint8_t> linear_;  // a frame that arrived in several segments, in one piece
  int note_offset_ = -1;         // of the mbuf field noting overwritten payload bytes
  uint32_t pending_ = 0;
  // Of the last poll, or transmit while capturing: the time frames queued since carry.
  clock::Nanos now_ = 0;
  bool started_ = false;
  std::optional<PauseGenerator> generator_;  // set when PFC generation is enabled
  DpdkPortCounters counters_;
};

}  // namespace etwire::nic::dpdk
