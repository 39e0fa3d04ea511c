#include "tests/twin/nic_driver.h"

#include <algorithm>
#include <string>

namespace etwire::twin::testing {

bool Delivery::operator==(const Delivery& other) const {
  // Packet has no operator==; every field the twin may change or carry is compared.
  const nic::Packet& a = packet;
  const nic::Packet& b = other.packet;
  return host == other.host && at == other.at && a.src_port == b.src_port &&
         a.dst_port == b.dst_port && a.psn == b.psn && a.ecn == b.ecn && a.kind == b.kind &&
         a.priority == b.priority && a.pfc_quanta == b.pfc_quanta && a.wire_bytes == b.wire_bytes &&
         a.udp_source_port == b.udp_source_port;
}

NicDriver::NicDriver(FabricTwin& twin, clock::Scheduler& scheduler)
    : scheduler_(scheduler), hosts_(twin.ports()) {
  for (size_t index = 0; index < hosts_.size(); ++index) {
    Host& host = hosts_[index];
    host.port = &twin.port(index);
    host.wire = clock::LineRateTimer(host.port->speed_bps());
    host.receiver.driver = this;
    host.receiver.host = index;
    host.port->set_receiver(&host.receiver);
  }
}

void NicDriver::send(const nic::Packet& packet, clock::Nanos not_before) {
  Host& host = hosts_.at(packet.src_port);
  host.classes.at(packet.priority).push_back(Queued{packet, not_before, next_sequence_++});
  wake(packet.src_port, std::max(not_before, scheduler_.now()));
}

std::vector<Delivery> NicDriver::data_received_by(size_t host) const {
  std::vector<Delivery> out;
  for (const Delivery& d : deliveries_) {
    if (d.host == host && d.packet.kind == nic::PacketKind::kRoce) out.push_back(d);
  }
  return out;
}

std::vector<Delivery> NicDriver::pfc_received_by(size_t host) const {
  std::vector<Delivery> out;
  for (const Delivery& d : deliveries_) {
    if (d.host == host && d.packet.kind == nic::PacketKind::kPfcPause) out.push_back(d);
  }
  return out;
}

void NicDriver::Receiver::receive(const nic::Packet& packet, clock::Nanos now) {
  driver->received(host, packet, now);
}

void NicDriver::received(size_t index, const nic::Packet& packet, clock::Nanos now) {
  deliveries_.push_back(Delivery{index, now, packet});
  if (packet.kind != nic::PacketKind::kPfcPause || !honour_pfc_) return;
  Host& host = hosts_[index];
  host.paused_until[packet.pfc_priority] =
      now + clock::LineRateTimer::duration(uint64_t{packet.pfc_quanta} * 64, host.wire.rate_bps());
  wake(index, now);  // a resume may release a waiting class at once
}

void NicDriver::on_event(uint64_t tag, clock::Nanos now) {
  Host& host = hosts_[tag];
  if (now >= host.wake_at) host.wake_at = clock::kNever;
  pump(tag, now);
}

void NicDriver::wake(size_t index, clock::Nanos at) {
  Host& host = hosts_[index];
  if (host.wake_at <= at) return;
  host.wake_at = at;
  scheduler_.run_at(at, this, index);
}

void NicDriver::pump(size_t index, clock::Nanos now) {
  Host& host = hosts_[index];
  while (true) {
    if (now < host.wire.free_at()) {
      wake(index, host.wire.free_at());
      return;
    }
    // The oldest packet that may go now: ready, and of a class that is not paused.
    std::deque<Queued>* chosen = nullptr;
    clock::Nanos next_chance = clock::kNever;
    for (size_t priority = 0; priority < host.classes.size(); ++priority) {
      std::deque<Queued>& queue = host.classes[priority];
      if (queue.empty()) continue;
      const clock::Nanos ready = std::max(queue.front().not_before, host.paused_until[priority]);
      if (ready > now) {
        next_chance = std::min(next_chance, ready);
      } else if (chosen == nullptr || queue.front().sequence < chosen->front().sequence) {
        chosen = &queue;
      }
    }
    if (chosen == nullptr) {
      if (next_chance != clock::kNever) wake(index, next_chance);
      return;
    }
    const nic::Packet packet = chosen->front().packet;
    chosen->pop_front();
    // Back-to-back packets continue from the previous packet's exact end, like the twin's links.
    host.wire.transmit(now == host.wire.free_at() ? now - 1 : now, packet.wire_bytes);
    host.starts.push_back(now);
    host.port->transmit(packet, now);
  }
}

nic::Packet data_packet(uint32_t src, uint32_t dst, uint32_t wire_bytes, uint32_t psn,
                        uint8_t priority, uint8_t ecn_codepoint, uint16_t udp_source_port) {
  nic::Packet packet;
  packet.src_port = src;
  packet.dst_port = dst;
  packet.wire_bytes = wire_bytes;
  packet.psn = psn;
  packet.priority = priority;
  packet.ecn = ecn_codepoint;
  packet.udp_source_port = udp_source_port;
  packet.opcode = nic::opcode::kWriteMiddle;
  return packet;
}

config::FabricConfig quiet_fabric() {
  config::FabricConfig config;
  config.topology = config::Topology::kSingleSwitch;
  config.propagation_delay_ns = 1000;
  config.switch_latency_ns = 500;
  config.buffer.size_bytes = 64ull << 20;
  config.buffer.mode = config::BufferMode::kShared;
  config.ecn.enabled = false;
  config.pfc.enabled = false;
  config.drop_probability = 0;
  return config;
}

std::vector<TwinPortSpec> uniform_ports(size_t count, uint64_t speed_bps) {
  std::vector<TwinPortSpec> ports;
  for (size_t i = 0; i < count; ++i) ports.push_back({"nic" + std::to_string(i), speed_bps});
  return ports;
}

}  // namespace etwire::twin::testing
