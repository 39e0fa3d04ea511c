#include "nic/dpdk/dpdk_port.h"

#include <fmt/format.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "clock/line_rate.h"
#include "nic/dpdk/interrupt_thread.h"
#include "nic/frame_size.h"
#include "nic/pfc_frame.h"

namespace etwire::nic::dpdk {

namespace {

// The name of the driver behind `device` ("net_memif", ...), "?" when DPDK does not say.
const char* driver_name(uint16_t device) {
  rte_eth_dev_info info{};
  if (rte_eth_dev_info_get(device, &info) != 0 || info.driver_name == nullptr) return "?";
  return info.driver_name;
}

// Where a data frame's payload sits in its mbuf: headers are written in front of it, ending
// here, so the payload never moves whatever the headers are (IPv4 or IPv6, VLAN, RETH).
constexpr uint16_t kPayloadOffset = RTE_PKTMBUF_HEADROOM;
// Room in front of the payload for the longest header stack: Ethernet, VLAN, IPv6, UDP, BTH,
// RETH, ImmDt is 98 bytes.
static_assert(kPayloadOffset >= 112, "mbuf headroom too small for RoCE headers");
static_assert(kPayloadOffset >= frame::MiddleFrameTemplate::kMaxHeaderBytes,
              "mbuf headroom too small for a template's header block");

// Per-mbuf note: where a short frame's ICRC overwrote payload bytes (offset from the payload
// start + 1; 0 = the payload is intact). A dynamic mbuf field: it sits in the mbuf's second cache
// line, which freeing the frame reads anyway (its segment link), where a private area would be
// one more line per frame; and allocation does not clear it.
int payload_note_offset() {
  static const int offset = [] {
    rte_mbuf_dynfield field{};
    std::snprintf(field.name, sizeof field.name, "%s", "etwire_payload_dirty_at");
    field.size = sizeof(uint32_t);
    field.align = alignof(uint32_t);
    return rte_mbuf_dynfield_register(&field);
  }();
  return offset;
}

uint32_t& note_of(rte_mbuf* m, int offset) {
  return *RTE_MBUF_DYNFIELD(m, offset, uint32_t*);
}

// Writes a packet's headers from its connection's template around the payload already in the
// mbuf, and sets the frame's start and lengths. Forced inline: the fast path of transmit() relies
// on the template's fixed-size header copy staying a few vector moves.
[[gnu::always_inline]] inline void write_from_template(rte_mbuf* m,
                                                       const frame::MiddleFrameTemplate& middle,
                                                       const Packet& packet) {
  m->data_off = static_cast<uint16_t>(kPayloadOffset - middle.header_bytes());
  const size_t length = middle.write(packet, static_cast<uint8_t*>(m->buf_addr) + kPayloadOffset);
  m->data_len = static_cast<uint16_t>(length);
  m->pkt_len = static_cast<uint32_t>(length);
}

struct Prefill {
  const frame::PayloadPattern* payload;
  uint32_t bytes;
};

void prefill_payload(rte_mempool*, void* opaque, void* object, unsigned) {
  const auto* prefill = static_cast<const Prefill*>(opaque);
  auto* m = static_cast<rte_mbuf*>(object);
  std::memcpy(static_cast<uint8_t*>(m->buf_addr) + kPayloadOffset, prefill->payload->bytes(),
              prefill->bytes);
  note_of(m, payload_note_offset()) = 0;
}

rte_mempool* make_pool(const std::string& name, uint32_t count, uint32_t cache, uint16_t priv,
                       uint32_t data_room, const std::string& port) {
  if (data_room > UINT16_MAX) {
    throw std::runtime_error(
        fmt::format("port \"{}\": mbufs of {} bytes are more than DPDK allows", port, data_room));
  }
  rte_mempool* pool =
      rte_pktmbuf_pool_create(name.c_str(), count, std::min<uint32_t>(cache, 512), priv,
                              static_cast<uint16_t>(data_room), static_cast<int>(rte_socket_id()));
  if (pool == nullptr) {
    throw std::runtime_error(fmt::format(
        "port \"{}\": cannot create mempool {} ({} mbufs of {} bytes): {}; lower dpdk.mbufs or "
        "give the EAL more memory (-m)",
        port, name, count, data_room, rte_strerror(rte_errno)));
  }
  return pool;
}

void check(int rc, const std::string& port, const char* what) {
  if (rc < 0) {
    throw std::runtime_error(
        fmt::format("port \"{}\": {} failed: {}", port, what, rte_strerror(-rc)));
  }
}

}  // namespace

DpdkPort::DpdkPort(const DpdkPortSetup& setup, const frame::PayloadPattern& payload,
                   const WireDirectory& directory)
    : setup_(setup),
      payload_(payload),
      directory_(directory),
      writer_(payload),
      reader_(payload),
      tx_(setup.burst),
      rx_(setup.burst),
      // Clamped so that a pattern too short (refused below) is never read past its end.
      psn_shift_(payload,
                 std::min<uint32_t>((setup.pmtu + 3) & ~3u, static_cast<uint32_t>(payload.size()))),
      template_scratch_(setup.pmtu + 256),
      spare_(setup.burst),
      spare_next_(setup.burst) {
  const std::string& name = setup_.name;
  if (!rte_eth_dev_is_valid_port(setup_.device)) {
    throw std::runtime_error(fmt::format("port \"{}\": DPDK has no port {}", name, setup_.device));
  }
  if (payload_.size() < setup_.pmtu) {
    throw std::invalid_argument(
        fmt::format("port \"{}\": the payload pattern ({} B) is shorter than the PMTU ({} B)", name,
                    payload_.size(), setup_.pmtu));
  }
  const uint32_t data_room = kPayloadOffset + setup_.pmtu + kIcrcBytes;
  note_offset_ = payload_note_offset();
  if (note_offset_ < 0) {
    throw std::runtime_error(fmt::format("port \"{}\": cannot register an mbuf field: {}", name,
                                         rte_strerror(rte_errno)));
  }
  data_pool_ =
      make_pool(setup_.pool_prefix + "d", setup_.mbufs, setup_.mbuf_cache, 0, data_room, name);
  Prefill prefill{&payload_, setup_.pmtu};
  rte_mempool_obj_iter(data_pool_, prefill_payload, &prefill);
  const uint32_t small = std::min<uint32_t>(setup_.mbufs, 4095);
  control_pool_ =
      make_pool(setup_.pool_prefix + "c", small, setup_.mbuf_cache, 0, kPayloadOffset + 128, name);
  // Ethernet, VLAN and FCS around an IP packet of the MTU.
  const uint32_t rx_frame = setup_.mtu + kEthernetHeaderBytes + kVlanTagBytes + kFcsBytes;
  // Never below DPDK's default buffer: some drivers (af_packet) size their frames by it.
  rx_pool_ = make_pool(
      setup_.pool_prefix + "r", setup_.mbufs, setup_.mbuf_cache, 0,
      std::max<uint32_t>(RTE_PKTMBUF_HEADROOM + rx_frame, RTE_MBUF_DEFAULT_BUF_SIZE), name);
  linear_.resize(rx_frame);

  if (setup_.queues == 1) configure_device(setup_.device, 1, name);
  uint16_t rx_descriptors = setup_.rx_descriptors;
  uint16_t tx_descriptors = setup_.tx_descriptors;
  check(rte_eth_dev_adjust_nb_rx_tx_desc(setup_.device, &rx_descriptors, &tx_descriptors), name,
        "rte_eth_dev_adjust_nb_rx_tx_desc");
  setup_.tx_descriptors = tx_descriptors;  // the ring the device has: catch_up() follows it
  const int socket = rte_eth_dev_socket_id(setup_.device);
  const auto socket_id = static_cast<unsigned>(socket < 0 ? SOCKET_ID_ANY : socket);
  check(rte_eth_rx_queue_setup(setup_.device, setup_.queue, rx_descriptors, socket_id, nullptr,
                               rx_pool_),
        name, "rte_eth_rx_queue_setup");
  check(rte_eth_tx_queue_setup(setup_.device, setup_.queue, tx_descriptors, socket_id, nullptr),
        name, "rte_eth_tx_queue_setup");
  if (setup_.queues == 1) {
    start_device(setup_.device, name);
    started_ = true;
  }

  pause_addresses_.src_mac = setup_.mac;
  pause_addresses_.ip_version = setup_.ip_version;
  if (setup_.pfc.enabled) {
    try {
      start_generation(rx_descriptors);
    } catch (...) {
      // The destructor does not run for a constructor that throws: the device and the pools
      // would stay taken, and the pool names with them.
      stop();
      free_pools();
      throw;
    }
  }
}

DpdkPort::~DpdkPort() {
  stop();
  free_pools();
}

void DpdkPort::free_pools() {
  rte_mempool_free(rx_pool_);
  rte_mempool_free(control_pool_);
  rte_mempool_free(data_pool_);
  rx_pool_ = control_pool_ = data_pool_ = nullptr;
}

void DpdkPort::start_generation(uint16_t rx_descriptors) {
  const std::string& name = setup_.name;
  const DpdkPfcSetup& pfc = setup_.pfc;
  if (pfc.xon >= pfc.xoff) {
    throw std::invalid_argument(
        fmt::format("port \"{}\": PFC xon ({}) must be below xoff ({})", name, pfc.xon, pfc.xoff));
  }
  if (pfc.quanta == 0 || setup_.speed_bps == 0) {
    throw std::invalid_argument(
        fmt::format("port \"{}\": PFC generation needs non-zero quanta and a port speed", name));
  }
  uint32_t capacity = rx_descriptors;
  if (setup_.rx_ring != nullptr) {
    capacity = rte_ring_get_capacity(setup_.rx_ring);
  } else {
    // DPDK 22.11's net_ring, net_pcap, net_af_packet and net_null drivers all answer ENOTSUP.
    const int count = rte_eth_rx_queue_count(setup_.device, setup_.queue);
    if (count < 0) {
      char device[RTE_ETH_NAME_MAX_LEN] = "?";
      rte_eth_dev_get_name_by_port(setup_.device, device);
      const char* driver = driver_name(setup_.device);
      throw std::runtime_error(fmt::format(
          "port \"{}\": PFC generation (dpdk.pfc.enabled) measures the receive queue's "
          "occupancy, but device {} (driver {}) cannot report it (rte_eth_rx_queue_count: {}); "
          "turn dpdk.pfc.enabled off for this port",
          name, device, driver, rte_strerror(-count)));
    }
  }
  if (pfc.xoff > capacity) {
    throw std::runtime_error(fmt::format(
        "port \"{}\": PFC xoff ({}) is more than the receive queue holds ({} descriptors): the "
        "port could never pause its partner",
        name, pfc.xoff, capacity));
  }
  PauseThresholds thresholds;
  thresholds.xoff = pfc.xoff;
  thresholds.xon = pfc.xon;
  // A quantum is 512 bit times: 64 bytes of wire time at the port's speed.
  thresholds.pause_duration =
      clock::LineRateTimer::duration(uint64_t{pfc.quanta} * 64, setup_.speed_bps);
  generator_.emplace(thresholds);
}

void configure_device(uint16_t device, uint16_t queues, const std::string& port) {
  rte_eth_conf conf{};
  check(rte_eth_dev_configure(device, queues, queues, &conf), port, "rte_eth_dev_configure");
}

void start_device(uint16_t device, const std::string& port) {
  // Frames for per-rank MAC addresses must get in; devices that cannot filter say so, harmless.
  rte_eth_promiscuous_enable(device);
  check(rte_eth_dev_start(device), port, "rte_eth_dev_start");
  rte_eth_stats_reset(device);
}

void stop_device(uint16_t device, uint16_t queues) {
  const auto stop = [device, queues] {
    std::array<rte_mbuf*, 64> frames{};
    for (uint16_t queue = 0; queue < queues; ++queue) {
      for (int round = 0; round < 64; ++round) {
        const uint16_t n = rte_eth_rx_burst(device, queue, frames.data(), frames.size());
        if (n == 0) break;
        rte_pktmbuf_free_bulk(frames.data(), n);
      }
    }
    rte_eth_dev_stop(device);
  };
  // DPDK 22.11's memif tears its connection down on the interrupt thread when its peer leaves
  // (unmapping the rings, freeing the control channel). Stopped on another thread meanwhile, it
  // freed the channel twice ("EAL: Error: Invalid memory" in every two-process run, and the
  // likely cause of a SIGABRT seen once) or may read an unmapped ring. On the interrupt thread
  // the two cannot overlap.
  if (std::strcmp(driver_name(device), "net_memif") == 0) {
    run_on_interrupt_thread(stop);
  } else {
    stop();
  }
}

void DpdkPort::stop() {
  if (spare_next_ < spare_.size()) {
    rte_pktmbuf_free_bulk(spare_.data() + spare_next_,
                          static_cast<unsigned>(spare_.size() - spare_next_));
    spare_next_ = static_cast<uint32_t>(spare_.size());
  }
  if (pending_ > 0) {
    rte_pktmbuf_free_bulk(tx_.data(), pending_);
    pending_ = 0;
    pending_bytes_ = 0;
  }
  if (started_) {
    // Frames still in the device's receive queue go back to their pools.
    stop_device(setup_.device, 1);
    started_ = false;
  }
}

// Inlined into transmit_other(): the call and its register saves were a tenth of a frame's cost.
[[gnu::always_inline]] inline rte_mbuf* DpdkPort::data_frame(const Packet& packet,
                                                             const WireRoute& route,
                                                             uint32_t connection) {
  // The transport never cuts a packet longer than the PMTU it was configured with.
  if (packet.payload_bytes > setup_.pmtu) return nullptr;
  rte_mbuf* m = take_data_mbuf();
  if (m == nullptr) return nullptr;
  uint8_t* payload = static_cast<uint8_t*>(m->buf_addr) + kPayloadOffset;
  uint32_t& dirty_at = note_of(m, note_offset_);
  if (dirty_at != 0) {
    const uint32_t at = dirty_at - 1;
    std::memcpy(payload + at, payload_.bytes() + at, std::min(kIcrcBytes, setup_.pmtu - at));
    dirty_at = 0;
  }
  if (const frame::MiddleFrameTemplate* middle = middle_template(packet, route, connection)) {
    write_from_template(m, *middle, packet);
  } else {
    const uint32_t header =
        frame::FrameWriter::header_bytes(packet, setup_.ip_version, setup_.vlan != 0);
    m->data_off = static_cast<uint16_t>(kPayloadOffset - header);
    const size_t length = writer_.write_around_payload(
        packet, route.forward, rte_pktmbuf_mtod(m, uint8_t*), route.responder.on_wire());
    m->data_len = static_cast<uint16_t>(length);
    m->pkt_len = static_cast<uint32_t>(length);
  }
  const uint32_t padded = (packet.payload_bytes + 3) & ~3u;
  if (padded < setup_.pmtu) dirty_at = padded + 1;
  return m;
}

bool DpdkPort::enqueue(rte_mbuf* frame) {
  if (pending_ == setup_.burst) flush();
  if (pending_ == setup_.burst) {
    // The device kept its queue full through a whole burst: the frame is lost, as on a NIC
    // whose ring overflows; the transport's retransmission recovers it.
    rte_pktmbuf_free(frame);
    ++counters_.tx_dropped;
    return false;
  }
  pending_bytes_ += wire_bytes_of_frame(frame->pkt_len);
  tx_[pending_++] = frame;
  if (setup_.capture_ring != nullptr) [[unlikely]] {
    capture(frame, capture::Direction::kTransmit);
  }
  if (pending_ == setup_.burst) flush();
  return true;
}

void DpdkPort::transmit(const Packet& packet, clock::Nanos now) {
  // The steady state, written here with nothing else in the way: a full-PMTU MIDDLE packet whose
  // connection's template fits, an mbuf at hand with its payload intact, room in the burst, no
  // capture. A packet that is not data finds no template that fits (a template is made for
  // MIDDLE packets only), whatever connection its QP number looks up among the responders.
  // Marked likely: laid out as a cold block, the header copy was compiled as a string move,
  // whose start-up cost more than the rest of the frame.
  const uint32_t connection = directory_.by_responder_qpn(packet.dest_qpn);
  if (connection < middle_count_ && spare_next_ < setup_.burst && pending_ < setup_.burst &&
      setup_.capture_ring == nullptr) [[likely]] {
    const frame::MiddleFrameTemplate& middle = middle_templates_[connection];
    rte_mbuf* m = spare_[spare_next_];
    if (middle.fits(packet) && note_of(m, note_offset_) == 0) [[likely]] {
      ++spare_next_;
      write_from_template(m, middle, packet);
      pending_bytes_ += middle.wire_bytes();
      tx_[pending_] = m;
      if (++pending_ == setup_.burst) flush();
      return;
    }
  }
  transmit_other(packet, now);
}

void DpdkPort::transmit_other(const Packet& packet, clock::Nanos now) {
  now_ = now;
  if (packet.kind == PacketKind::kPfcPause) {
    queue_pause(packet);
    return;
  }
  // The packet's connection gives the addresses.
  const uint32_t connection = directory_.connection_of(packet);
  const WireRoute* route = directory_.route(connection);
  if (route == nullptr) {
    ++counters_.tx_unrouted;
    return;
  }
  rte_mbuf* frame = nullptr;
  if (packet.is_data()) {
    frame = data_frame(packet, *route, connection);
  } else {
    frame = other_frame(packet, route->backward, route->requester.on_wire());
  }
  if (frame == nullptr) {
    ++counters_.tx_dropped;
    return;
  }
  enqueue(frame);
}

frame::MiddleFrameTemplate* DpdkPort::remake_middle_template(const Packet& packet,
                                                             const WireRoute& route,
                                                             uint32_t connection) {
  if (packet.payload_bytes != setup_.pmtu || !frame::MiddleFrameTemplate::applies_to(packet)) {
    return nullptr;
  }
  if (connection >= middle_templates_.size()) {
    // Once per connection that sends, not per frame.
    middle_templates_.resize(std::max<size_t>(connection + 1, 2 * middle_templates_.size()));
    middle_count_ = static_cast<uint32_t>(middle_templates_.size());
  }
  frame::MiddleFrameTemplate& middle = middle_templates_[connection];
  if (!middle.fits(packet)) {
    middle.build(writer_, psn_shift_, packet, route.responder.on_wire(), route.forward,
                 template_scratch_.data());
    if (!middle.fits(packet)) return nullptr;
  }
  return &middle;
}

rte_mbuf* DpdkPort::refill_spare() {
  // Taken raw, without the reset rte_pktmbuf_alloc_bulk gives each mbuf (nearly a tenth of the
  // port's own cost per frame): a data mbuf only ever has its data offset and lengths changed,
  // which every frame writes, and freeing it leaves its segment fields as the pool made them.
  if (rte_mempool_get_bulk(data_pool_, reinterpret_cast<void**>(spare_.data()), setup_.burst) !=
      0) {
    // Fewer than a burst left in the pool: one at a time until frames come back.
    return rte_mbuf_raw_alloc(data_pool_);
  }
  spare_next_ = 1;
  return spare_[0];
}

rte_mbuf* DpdkPort::other_frame(const Packet& packet, const frame::FrameAddresses& addresses,
                                uint32_t dest_qpn) {
  rte_mbuf* m = rte_pktmbuf_alloc(control_pool_);
  if (m == nullptr) return nullptr;
  const size_t length = writer_.write(packet, addresses, rte_pktmbuf_mtod(m, uint8_t*),
                                      rte_pktmbuf_tailroom(m), dest_qpn);
  if (length == 0) {
    rte_pktmbuf_free(m);
    return nullptr;
  }
  m->data_len = static_cast<uint16_t>(length);
  m->pkt_len = static_cast<uint32_t>(length);
  return m;
}

bool DpdkPort::queue_pause(const Packet& packet) {
  rte_mbuf* frame = other_frame(packet, pause_addresses_, 0);
  if (frame == nullptr) {
    ++counters_.tx_dropped;
    return false;
  }
  if (!enqueue(frame)) return false;
  if (packet.pfc_quanta != 0) {
    ++counters_.pauses_sent;
  } else {
    ++counters_.resumes_sent;
  }
  return true;
}

void DpdkPort::flush() {
  if (pending_ == 0) return;
  const uint16_t sent =
      rte_eth_tx_burst(setup_.device, setup_.queue, tx_.data(), static_cast<uint16_t>(pending_));
  counters_.tx_frames += sent;
  // The frames the device took are its own now; the bytes of those it left are still readable.
  uint64_t left_bytes = 0;
  for (uint32_t i = sent; i < pending_; ++i) left_bytes += wire_bytes_of_frame(tx_[i]->pkt_len);
  counters_.tx_bytes += pending_bytes_ - left_bytes;
  pending_bytes_ = left_bytes;
  if (sent < pending_) std::copy(tx_.begin() + sent, tx_.begin() + pending_, tx_.begin());
  pending_ -= sent;
}

uint32_t DpdkPort::poll(clock::Nanos now, const clock::Scheduler* clock) {
  now_ = now;
  flush();
  const uint16_t n = rte_eth_rx_burst(setup_.device, setup_.queue, rx_.data(), setup_.burst);
  if (n > 0 && clock != nullptr) now = clock->now();  // one reading per burst that brought any
  now_ = now;
  for (uint16_t i = 0; i < n; ++i) deliver(rx_[i], now);
  if (n > 0) rte_pktmbuf_free_bulk(rx_.data(), n);
  // A burst that came back short emptied the queue: no backlog to look at unless the partner
  // is paused and waits for XON or a refresh.
  if (generator_ && (n == setup_.burst || generator_->paused())) regulate(now);
  return n;
}

uint32_t DpdkPort::rx_occupancy() const {
  if (!generator_) return 0;
  if (setup_.rx_ring != nullptr) return rte_ring_count(setup_.rx_ring);
  const int count = rte_eth_rx_queue_count(setup_.device, setup_.queue);
  return count < 0 ? 0 : static_cast<uint32_t>(count);
}

void DpdkPort::regulate(clock::Nanos now) {
  const PauseAction action = generator_->sample(rx_occupancy(), now);
  if (action == PauseAction::kNone) return;
  const uint16_t quanta = action == PauseAction::kPause ? setup_.pfc.quanta : 0;
  if (!send_pause(setup_.pfc.priority, quanta)) {
    generator_->not_sent(action);
    return;
  }
  // The partner must hear it now, not after whatever the next poll brings.
  flush();
}

void DpdkPort::capture(const rte_mbuf* frame, capture::Direction direction) {
  if (setup_.capture_ring == nullptr || !setup_.capture_writer->capturing()) return;
  const uint32_t kept = std::min<uint32_t>(
      {frame->pkt_len, setup_.capture_ring->snap_length(), static_cast<uint32_t>(linear_.size())});
  const auto* bytes = static_cast<const uint8_t*>(rte_pktmbuf_read(frame, 0, kept, linear_.data()));
  if (bytes == nullptr ||
      !setup_.capture_ring->try_push(now_, direction, bytes, kept, frame->pkt_len)) {
    // Counted on the ring, which the writer reads at the end to say in the file what it lacks.
    setup_.capture_ring->count_lost();
  }
}

void DpdkPort::deliver(rte_mbuf* m, clock::Nanos now) {
  capture(m, capture::Direction::kReceive);
  ++counters_.rx_frames;
  const uint32_t length = std::min<uint32_t>(m->pkt_len, static_cast<uint32_t>(linear_.size()));
  counters_.rx_bytes += wire_bytes_of_frame(m->pkt_len);
  const auto* bytes = static_cast<const uint8_t*>(rte_pktmbuf_read(m, 0, length, linear_.data()));
  if (bytes == nullptr) return;
  const frame::FrameStatus status = reader_.parse(bytes, length, parsed_);
  if (receiver_ == nullptr) return;
  Packet& packet = parsed_.packet;
  if (status == frame::FrameStatus::kPfc) {
    for (uint8_t c = 0; c < 8; ++c) {
      if ((parsed_.pfc_class_enable & (1u << c)) == 0) continue;
      const Packet pause = pfc_frame(setup_.index, setup_.index, c, parsed_.pfc_quanta[c]);
      if (pause.pfc_quanta != 0) ++counters_.pauses_received;
      receiver_->receive(pause, now);
      // A pause holds the whole link: every queue's sender must honour it.
      for (uint16_t queue = 0; queue < setup_.queues; ++queue) {
        if (queue != setup_.queue) hand_over(queue, pause);
      }
    }
    return;
  }
  if (status != frame::FrameStatus::kRoce) return;  // counted by the reader
  const uint32_t connection = directory_.connection_received(setup_.index, packet);
  const WireRoute* route = directory_.route(connection);
  if (route == nullptr) {
    ++counters_.rx_unknown_qp;
    return;
  }
  packet.dest_qpn = route->run_dest_qpn(packet);
  packet.src_port = packet.is_data() ? route->requester.port : route->responder.port;
  packet.dst_port = setup_.index;
  const uint16_t owner = packet.is_data() ? route->responder.queue : route->requester.queue;
  if (owner != setup_.queue) {
    hand_over(owner, packet);  // the device steered it to a queue that does not drive it
    return;
  }
  receiver_->receive(packet, now);
}

void DpdkPort::hand_over(uint16_t queue, const Packet& packet) {
  ++counters_.rx_handed_over;
  if (handover_ == nullptr || !handover_->hand_over(queue, packet)) ++counters_.rx_handover_lost;
}

bool DpdkPort::send_pause(uint8_t priority, uint16_t quanta) {
  return queue_pause(pfc_frame(setup_.index, setup_.index, priority, quanta));
}

clock::Nanos DpdkPort::catch_up() const {
  Packet full;
  full.opcode = opcode::kWriteMiddle;
  full.payload_bytes = setup_.pmtu;
  const uint32_t frame = wire_bytes(full, {setup_.ip_version, setup_.vlan != 0});
  return clock::LineRateTimer::duration(uint64_t{frame} * (setup_.tx_descriptors / 2u),
                                        setup_.speed_bps);
}

uint64_t DpdkPort::device_drops() const {
  rte_eth_stats stats{};
  if (rte_eth_stats_get(setup_.device, &stats) != 0) return 0;
  return stats.imissed + stats.rx_nombuf + stats.oerrors;
}

}  // namespace etwire::nic::dpdk
