// A device of the software RNIC: what it reports of its ports, its memory registrations, the
// completion queues and queue pairs it creates within its limits, and its ports' counters (the
// twin's, or a datagram cable's); and opening one by name.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "dataplane/loopback/twin_port_counters.h"
#include "dataplane/verbs/datagram_cables.h"
#include "dataplane/verbs/software_rnic.h"
#include "dataplane/verbs/software_rnic_internal.h"
#include "transport/transport.h"

namespace etwire::dataplane {

using nic::verbs::MemoryRegion;
using nic::verbs::VerbsCq;
using nic::verbs::VerbsDevice;
using nic::verbs::VerbsError;
using nic::verbs::VerbsQp;

namespace {

// The verbs speed and width codes of a port speed, where one pair gives it exactly.
void speed_codes(uint64_t speed_bps, uint8_t& speed, uint8_t& width) {
  struct Lane {
    uint8_t code;
    uint64_t bps;
  };
  static constexpr Lane kLanes[] = {
      {128, 100'000'000'000}, {64, 50'000'000'000}, {32, 25'000'000'000}, {16, 14'000'000'000},
      {4, 10'000'000'000},    {2, 5'000'000'000},   {1, 2'500'000'000}};
  struct Width {
    uint8_t code;
    uint64_t lanes;
  };
  static constexpr Width kWidths[] = {{2, 4}, {4, 8}, {16, 2}, {1, 1}, {8, 12}};
  // Four lanes first, as a QSFP port has them.
  for (const Width& w : kWidths) {
    for (const Lane& lane : kLanes) {
      if (lane.bps * w.lanes != speed_bps) continue;
      speed = lane.code;
      width = w.code;
      return;
    }
  }
  speed = 0;
  width = 0;
}

}  // namespace

class SoftwareRnic::Device final : public VerbsDevice {
 public:
  Device(SoftwareRnic& rnic, std::string name) : rnic_(rnic), name_(std::move(name)) {}
  ~Device() override {
    std::erase_if(rnic_.regions_,
                  [this](const auto& item) { return item.second->device == name_; });
  }
  const std::string& name() const override { return name_; }
  int query_port(uint8_t number, ibv_port_attr& attr) override {
    const Port* port = find(number);
    if (port == nullptr) return EINVAL;
    attr = ibv_port_attr{};
    attr.state = port->state;
    attr.max_mtu = IBV_MTU_4096;
    attr.active_mtu = port->active_mtu;
    attr.gid_tbl_len = static_cast<int>(port->gids.size());
    attr.max_msg_sz = 1u << 31;
    attr.link_layer = IBV_LINK_LAYER_ETHERNET;
    attr.phys_state = port->state == IBV_PORT_ACTIVE ? 5 : 3;  // LinkUp, Disabled
    speed_codes(port->config->speed_bps, attr.active_speed, attr.active_width);
    return 0;
  }
  int query_gid(uint8_t number, uint32_t index, ibv_gid_entry& entry) override {
    const Port* port = find(number);
    if (port == nullptr || index >= port->gids.size()) return EINVAL;
    entry = port->gids[index];
    return 0;
  }
  MemoryRegion register_memory(void* address, size_t length, int access) override {
    if (address == nullptr || length == 0) {
      throw VerbsError(fmt::format("{}: ibv_reg_mr of {} bytes at {} failed: {}", name_, length,
                                   address, std::strerror(EINVAL)),
                       EINVAL);
    }
    const uint32_t key = rnic_.next_key_++;
    auto region = std::make_unique<Region>();
    region->address = reinterpret_cast<uint64_t>(address);
    region->length = length;
    region->access = access;
    region->device = name_;
    rnic_.regions_[key] = std::move(region);
    return {reinterpret_cast<uint64_t>(address), length, key, key};
  }
  std::unique_ptr<VerbsCq> create_cq(int entries) override {
    if (entries < 1 || entries > rnic_.options_.max_cqe) {
      throw VerbsError(fmt::format("{}: ibv_create_cq of {} entries failed: {} (at most {})", name_,
                                   entries, std::strerror(EINVAL), rnic_.options_.max_cqe),
                       EINVAL);
    }
    return std::make_unique<Cq>(rnic_, name_, entries);
  }
  std::unique_ptr<VerbsQp> create_qp(VerbsCq& send_cq, VerbsCq& recv_cq,
                                     ibv_qp_cap& caps) override {
    auto& send = static_cast<Cq&>(send_cq);
    auto& recv = static_cast<Cq&>(recv_cq);
    const SoftwareRnicOptions& o = rnic_.options_;
    if (send.device() != name_ || recv.device() != name_ || caps.max_send_wr == 0 ||
        caps.max_send_wr > o.max_qp_wr || caps.max_recv_wr > o.max_qp_wr ||
        caps.max_send_sge > o.max_sge || caps.max_recv_sge > o.max_sge) {
      throw VerbsError(
          fmt::format("{}: ibv_create_qp (RC, {} send and {} receive work requests, {}/{} "
                      "scatter-gather entries) failed: {} (at most {} work requests and {} "
                      "entries, on this device's completion queues)",
                      name_, caps.max_send_wr, caps.max_recv_wr, caps.max_send_sge,
                      caps.max_recv_sge, std::strerror(EINVAL), o.max_qp_wr, o.max_sge),
          EINVAL);
    }
    const uint32_t qpn = rnic_.next_qpn_++;
    auto queue = std::make_unique<Queue>();
    queue->qpn = qpn;
    queue->device = name_;
    queue->send_cq = &send;
    queue->recv_cq = &recv;
    queue->caps = caps;
    rnic_.queues_[qpn] = std::move(queue);
    return std::make_unique<Qp>(rnic_, qpn);
  }
  std::vector<std::pair<std::string, uint64_t>> read_counters(uint8_t number) override {
    std::vector<std::pair<std::string, uint64_t>> out;
    const Port* port = find(number);
    if (port == nullptr) return out;
    const PortCounters counters =
        rnic_.cables_
            ? cable_counters(*port)
            : twin_port_counters(rnic_.rig_->twin(), port->index, port->transport_counters());
    for (const PortCounterField& field : kPortCounterFields) {
      out.emplace_back(std::string(field.name), counters.*field.member);
    }
    return out;
  }

 private:
  const Port* find(uint8_t number) const {
    for (const auto& port : rnic_.ports_) {
      if (port->here && port->device == name_ && port->number == number) return port.get();
    }
    return nullptr;
  }
  // A port cabled to other processes: what its cable carried, and its transport's counts.
  PortCounters cable_counters(const Port& port) const {
    const CableCounters& cable = rnic_.cables_->counters(port.index);
    PortCounters counters;
    counters.tx_bytes = cable.tx_bytes;
    counters.rx_bytes = cable.rx_bytes;
    counters.tx_packets = cable.tx_packets;
    counters.rx_packets = cable.rx_packets;
    set_transport_counters(counters, port.transport_counters());
    counters.drops = cable.drops;
    counters.drops_other = cable.drops;  // a datagram its socket would not take, or for no peer
    return counters;
  }

  SoftwareRnic& rnic_;
  std::string name_;
};

std::unique_ptr<VerbsDevice> SoftwareRnic::open(const std::string& name) {
  std::string names;
  for (const auto& port : ports_) {
    if (!port->here) continue;  // another process's
    if (port->device == name) return std::make_unique<Device>(*this, name);
    if (names.find(port->device) == std::string::npos) {
      names += (names.empty() ? "" : ", ") + port->device;
    }
  }
  throw VerbsError(
      fmt::format("no RDMA device is named \"{}\"; the software RNIC has {}", name, names), ENODEV);
}

}  // namespace etwire::dataplane
