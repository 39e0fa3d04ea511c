#include "dataplane/verbs/software_rnic.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "common/ring_queue.h"
#include "dataplane/loopback/twin_port_counters.h"
#include "dataplane/verbs/datagram_cables.h"
#include "nic/port_frame_format.h"
#include "transport/transport.h"

namespace etwire::dataplane {

using nic::verbs::MemoryRegion;
using nic::verbs::VerbsCq;
using nic::verbs::VerbsDevice;
using nic::verbs::VerbsError;
using nic::verbs::VerbsQp;

namespace {

constexpr size_t kMaxSge = 16;

// The RoCE v2 UDP source port a flow label gives, as Linux derives it: the 20-bit label folded
// into 14 bits, in the range 0xC000..0xFFFF. A QP without a label gets one from its QP numbers.
uint16_t udp_source_port(uint32_t flow_label, uint32_t local_qpn, uint32_t remote_qpn) {
  if (flow_label == 0) {
    uint64_t v = uint64_t{local_qpn} * remote_qpn;
    v ^= v >> 20;
    v ^= v >> 40;
    flow_label = static_cast<uint32_t>(v & 0xFFFFF);
  }
  uint32_t low = flow_label & 0x3FFF;
  low ^= (flow_label & 0xFC000) >> 14;
  return static_cast<uint16_t>(low | 0xC000);
}

ibv_gid_entry gid_entry(uint32_t index, uint32_t port, uint32_t type,
                        const std::array<uint8_t, 16>& gid) {
  ibv_gid_entry entry{};
  std::memcpy(entry.gid.raw, gid.data(), gid.size());
  entry.gid_index = index;
  entry.port_num = port;
  entry.gid_type = type;
  return entry;
}

// What mlx5 lists for a netdev with these addresses: the link-local address (from the MAC, as
// EUI-64), the IPv4 address mapped into IPv6, the IPv6 address; each as RoCE v1 then v2.
std::vector<ibv_gid_entry> gid_table(const config::PortConfig& port, uint32_t number) {
  std::array<uint8_t, 16> link_local{};
  link_local[0] = 0xfe;
  link_local[1] = 0x80;
  const auto& mac = port.mac.bytes;
  link_local[8] = static_cast<uint8_t>(mac[0] ^ 0x02);
  link_local[9] = mac[1];
  link_local[10] = mac[2];
  link_local[11] = 0xff;
  link_local[12] = 0xfe;
  link_local[13] = mac[3];
  link_local[14] = mac[4];
  link_local[15] = mac[5];
  std::array<uint8_t, 16> v4{};
  v4[10] = 0xff;
  v4[11] = 0xff;
  for (int i = 0; i < 4; ++i) v4[12 + i] = static_cast<uint8_t>(port.ipv4.value >> (24 - 8 * i));
  std::vector<ibv_gid_entry> table;
  for (const auto* gid : {&link_local, &v4}) {
    for (uint32_t type : {IBV_GID_TYPE_ROCE_V1, IBV_GID_TYPE_ROCE_V2}) {
      table.push_back(gid_entry(static_cast<uint32_t>(table.size()), number, type, *gid));
    }
  }
  if (port.ipv6) {
    for (uint32_t type : {IBV_GID_TYPE_ROCE_V1, IBV_GID_TYPE_ROCE_V2}) {
      table.push_back(
          gid_entry(static_cast<uint32_t>(table.size()), number, type, port.ipv6->bytes));
    }
  }
  return table;
}

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

ibv_wc_status completion_status(transport::FlowStatus status) {
  switch (status) {
    case transport::FlowStatus::kCompleted:
      return IBV_WC_SUCCESS;
    case transport::FlowStatus::kRetryExceeded:
      return IBV_WC_RETRY_EXC_ERR;
    default:
      return IBV_WC_WR_FLUSH_ERR;
  }
}

bool needs_receive(ibv_wr_opcode opcode) {
  return opcode == IBV_WR_RDMA_WRITE_WITH_IMM || opcode == IBV_WR_SEND ||
         opcode == IBV_WR_SEND_WITH_IMM;
}

bool carries_immediate(ibv_wr_opcode opcode) {
  return opcode == IBV_WR_RDMA_WRITE_WITH_IMM || opcode == IBV_WR_SEND_WITH_IMM;
}

// The retransmission timeout of an IB timeout exponent: 4.096 us x 2^n; 0 waits for ever, which
// the transport's timer takes as a wait no run reaches.
uint64_t retransmit_timeout_ns(uint8_t exponent) {
  return exponent == 0 ? uint64_t{1} << 62 : uint64_t{4096} << exponent;
}

}  // namespace

struct SoftwareRnic::Port {
  size_t index = 0;  // run port = twin port
  bool here = true;  // driven by this process (across processes, only some are)
  const config::PortConfig* config = nullptr;
  std::string device;
  uint8_t number = 1;
  ibv_port_state state = IBV_PORT_ACTIVE;
  ibv_mtu active_mtu = IBV_MTU_4096;
  std::vector<ibv_gid_entry> gids;
  std::unique_ptr<PortObserver> observer;
  // The run's transport section, with the retry count and timeout of the port's QPs once the
  // first of them is in RTS (the transport reads them when it retransmits, not before).
  config::TransportConfig transport_config;
  bool qp_timing_set = false;
  // Drives this port only: its index there is 0. None for a port another process drives.
  std::unique_ptr<transport::Transport> transport;
};

struct SoftwareRnic::Region {
  uint64_t address = 0;
  uint64_t length = 0;
  int access = 0;
  std::string device;
  bool covers(uint64_t at, uint64_t bytes) const {
    return at >= address && bytes <= length && at - address <= length - bytes;
  }
};

namespace {

struct SendWork {
  uint64_t wr_id = 0;
  ibv_wr_opcode opcode = IBV_WR_RDMA_WRITE;
  uint64_t length = 0;
  bool signaled = false;
  uint32_t imm = 0;
  uint64_t remote_address = 0;
  uint32_t rkey = 0;
  uint32_t sges = 0;
  std::array<ibv_sge, kMaxSge> sge{};
  // On the transport as its flow number `sequence` of this QP; not when it failed on posting.
  bool in_transport = false;
  uint64_t sequence = 0;
  bool delivered = false;  // the transport delivered it to the responder
  bool placed = false;     // its effect there is done (or failed: `effect`)
  bool finished = false;   // the transport finished it (`transport_status`)
  transport::FlowStatus transport_status = transport::FlowStatus::kCompleted;
  ibv_wc_status effect = IBV_WC_SUCCESS;
};

struct ReceiveWork {
  uint64_t wr_id = 0;
  uint32_t sges = 0;
  std::array<ibv_sge, kMaxSge> sge{};
};

}  // namespace

// A QP's state; the VerbsQp handle the user holds points here.
struct SoftwareRnic::Queue {
  uint32_t qpn = 0;
  std::string device;
  Cq* send_cq = nullptr;
  Cq* recv_cq = nullptr;
  ibv_qp_cap caps{};
  ibv_qp_state state = IBV_QPS_RESET;
  int port = -1;  // run port, from INIT
  int access = 0;
  ibv_mtu path_mtu = IBV_MTU_1024;
  uint32_t dest_qpn = 0;
  int remote_port = -1;
  bool remote_here = true;  // the peer's port is this process's
  uint8_t rnr_retry = 7;
  uint16_t udp_source_port = 0;
  bool requester_open = false;  // its halves on the port's transport (they stay open)
  bool responder_open = false;
  RingQueue<SendWork> sends;  // posted, not yet completed, oldest first
  RingQueue<ReceiveWork> receives;
  // Across processes: immediates of messages from elsewhere that found no receive yet.
  RingQueue<uint32_t> arrivals;
  // Requesters whose next message waits here for a receive (RNR NAKs retried forever).
  RingQueue<uint32_t> waiting_senders;
  bool waiting_for_receive = false;  // as a requester, registered in its responder's list
  uint64_t transport_posted = 0;     // flows handed to the transport
  uint64_t transport_delivered = 0;  // its delivery reports so far
  uint64_t transport_finished = 0;   // its finish reports so far
};

class SoftwareRnic::Cq final : public VerbsCq {
 public:
  Cq(SoftwareRnic& rnic, std::string device, int entries)
      : rnic_(rnic), id_(rnic.next_cq_id_++), device_(std::move(device)), entries_(entries) {
    rnic_.cqs_[id_] = this;
  }
  ~Cq() override { rnic_.cqs_.erase(id_); }
  Cq(const Cq&) = delete;
  Cq& operator=(const Cq&) = delete;
  int poll(int entries, ibv_wc* wc) override {
    if (rnic_.across_processes()) rnic_.progress();
    if (overrun_) return -1;
    int n = 0;
    while (n < entries && !queue_.empty()) wc[n++] = queue_.pop_front();
    return n;
  }
  int capacity() const override { return entries_; }
  const std::string& device() const { return device_; }
  uint64_t id() const { return id_; }
  bool overrun() const { return overrun_; }
  // False when the queue is full: it is overrun from then on, the entry is lost, and the RNIC
  // puts the queue's QPs in error.
  bool push(const ibv_wc& wc) {
    if (overrun_) return false;
    if (queue_.size() >= static_cast<size_t>(entries_)) {
      overrun_ = true;
      rnic_.overran(*this);
      return false;
    }
    queue_.push_back(wc);
    return true;
  }

 private:
  SoftwareRnic& rnic_;
  uint64_t id_;
  std::string device_;
  int entries_;
  RingQueue<ibv_wc> queue_;
  bool overrun_ = false;
};

// Hands the port transport's reports to the RNIC.
class SoftwareRnic::PortObserver final : public transport::FlowObserver {
 public:
  PortObserver(SoftwareRnic& rnic, size_t port) : rnic_(rnic), port_(port) {}
  void on_flow_delivered(const transport::FlowRecord& record) override {
    rnic_.delivered(record.qpn);
  }
  void on_flow_finished(const transport::FlowRecord& record) override {
    rnic_.finished(record.qpn, static_cast<uint8_t>(record.status));
  }
  void on_delivered_to_responder(uint32_t requester_qpn, clock::Nanos, uint32_t,
                                 uint32_t immediate) override {
    rnic_.arrived(port_, requester_qpn, immediate);
  }

 private:
  SoftwareRnic& rnic_;
  size_t port_;
};

class SoftwareRnic::Qp final : public VerbsQp {
 public:
  Qp(SoftwareRnic& rnic, uint32_t qpn) : rnic_(rnic), qpn_(qpn) {}
  ~Qp() override { rnic_.queues_.erase(qpn_); }
  uint32_t qp_num() const override { return qpn_; }
  ibv_qp_state state() const override { return queue().state; }
  int modify(ibv_qp_attr& attr, int mask) override;
  int set_rate_limit(uint32_t kbps) override;
  int post_send(ibv_send_wr* wr, ibv_send_wr** bad) override;
  int post_recv(ibv_recv_wr* wr, ibv_recv_wr** bad) override;

  // The work of a requester / responder, shared by the RNIC's report handlers.
  static void place_in_order(SoftwareRnic& rnic, Queue& q);
  static void complete(Queue& q);
  static void enter_error(Queue& q);

 private:
  Queue& queue() const { return *rnic_.queues_.at(qpn_); }
  int check_transition(const Queue& q, ibv_qp_state target, int mask) const;
  int apply_attributes(Queue& q, ibv_qp_state target, const ibv_qp_attr& attr, int mask);
  // Places `w` at its responder; false when it waits there for a receive.
  static bool place(SoftwareRnic& rnic, Queue& q, SendWork& w);

  SoftwareRnic& rnic_;
  uint32_t qpn_;
};

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
            : twin_port_counters(*rnic_.twin_, port->index, port->transport->port_counters(0));
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
    set_transport_counters(counters, port.transport->port_counters(0));
    counters.drops = cable.drops;
    counters.drops_other = cable.drops;  // a datagram its socket would not take, or for no peer
    return counters;
  }

  SoftwareRnic& rnic_;
  std::string name_;
};

SoftwareRnic::SoftwareRnic(const config::RunConfig& config, SoftwareRnicOptions options)
    : config_(config), options_(options) {
  const cluster::Session* processes = options.processes;
  std::vector<bool> here(config.ports.size(), true);
  if (processes != nullptr && processes->size() > 1 && config.emulators.size() > 1) {
    const auto emulator = static_cast<uint32_t>(processes->rank());
    std::vector<uint64_t> speeds;
    for (size_t p = 0; p < config.ports.size(); ++p) {
      here[p] = config::drives_port(config, config.ports[p], emulator);
      speeds.push_back(config.ports[p].speed_bps);
    }
    wall_ = std::make_unique<clock::WallClock>();
    scheduler_ = wall_.get();
    cables_ = std::make_unique<DatagramCables>(here, speeds, *processes);
    // Apart from the other processes' numbers, so that flow records and captures tell them apart.
    next_qpn_ += emulator << 16;
  } else {
    std::vector<twin::TwinPortSpec> specs;
    for (const config::PortConfig& port : config.ports) {
      specs.push_back({port.name, port.speed_bps});
    }
    twin_ = std::make_unique<twin::FabricTwin>(config.fabric, specs, clock_, config.run.seed);
  }
  for (size_t p = 0; p < config.ports.size(); ++p) {
    const config::PortConfig& port = config.ports[p];
    auto soft = std::make_unique<Port>();
    soft->index = p;
    soft->here = here[p];
    soft->config = &port;
    soft->device = port.verbs.device;
    soft->number = port.verbs.port;
    soft->active_mtu =
        nic::verbs::path_mtu_code(std::max(256u, config::largest_path_mtu(port.mtu)));
    soft->gids = gid_table(port, port.verbs.port);
    soft->observer = std::make_unique<PortObserver>(*this, p);
    soft->transport_config = config.transport;
    if (here[p]) {
      soft->transport = std::make_unique<transport::Transport>(soft->transport_config, *scheduler_,
                                                               *soft->observer);
      soft->transport->add_port(cables_ ? cables_->port(p) : twin_->port(p), port.qos,
                                nic::frame_format(config, port), static_cast<uint32_t>(p));
    }
    ports_.push_back(std::move(soft));
  }
}

SoftwareRnic::~SoftwareRnic() = default;

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

void SoftwareRnic::set_port_state(size_t port, ibv_port_state state) {
  ports_.at(port)->state = state;
}

void SoftwareRnic::set_active_mtu(size_t port, ibv_mtu mtu) {
  ports_.at(port)->active_mtu = mtu;
}

void SoftwareRnic::revoke_remote_write(const std::string& device) {
  for (auto& [key, region] : regions_) {
    if (region->device == device) region->access &= ~IBV_ACCESS_REMOTE_WRITE;
  }
}

void SoftwareRnic::overran(Cq& cq) {
  scheduler_->run_at(scheduler_->now(), this, cq.id());
}

void SoftwareRnic::on_event(uint64_t cq_id, clock::Nanos) {
  auto cq = cqs_.find(cq_id);
  if (cq == cqs_.end()) return;  // destroyed since
  // In QP number order, so flushes sharing another queue land the same way every run.
  std::vector<uint32_t> on_cq;
  for (const auto& [qpn, q] : queues_) {
    const bool uses = q->send_cq == cq->second || q->recv_cq == cq->second;
    if (uses && q->state != IBV_QPS_RESET && q->state != IBV_QPS_ERR) on_cq.push_back(qpn);
  }
  std::sort(on_cq.begin(), on_cq.end());
  for (uint32_t qpn : on_cq) Qp::enter_error(*queues_.at(qpn));
}

SoftwareRnic::Queue* SoftwareRnic::queue(uint32_t qpn) {
  auto it = queues_.find(qpn);
  return it == queues_.end() ? nullptr : it->second.get();
}

const SoftwareRnic::Region* SoftwareRnic::region(uint32_t key) const {
  auto it = regions_.find(key);
  return it == regions_.end() ? nullptr : it->second.get();
}

int SoftwareRnic::port_of_gid(const ibv_gid& gid) const {
  for (const auto& port : ports_) {
    for (const ibv_gid_entry& entry : port->gids) {
      if (std::memcmp(entry.gid.raw, gid.raw, sizeof(gid.raw)) == 0) {
        return static_cast<int>(port->index);
      }
    }
  }
  return -1;
}

void SoftwareRnic::progress() {
  scheduler_->poll();
  cables_->receive(wall_->now());
}

void SoftwareRnic::arrived(size_t port, uint32_t requester_qpn, uint32_t immediate) {
  if (!cables_) {
    delivered(requester_qpn);  // one number space: the requester is this RNIC's
    return;
  }
  auto it = responder_of_requester_.find(uint64_t{port} << 32 | requester_qpn);
  Queue* responder = it == responder_of_requester_.end() ? nullptr : queue(it->second);
  if (responder == nullptr) return;  // destroyed since
  if (responder->remote_here) {
    delivered(requester_qpn);
  } else {
    arrived_from_elsewhere(*responder, immediate);
  }
}

void SoftwareRnic::arrived_from_elsewhere(Queue& responder, uint32_t immediate) {
  if (responder.state != IBV_QPS_RTR && responder.state != IBV_QPS_RTS) return;  // dropped
  const bool send = config_.transport.op == config::RdmaOp::kSend;
  if (!send && immediate == 0) return;  // a WRITE: nothing for the responder to tell
  responder.arrivals.push_back(immediate);
  hand_arrivals(responder);
}

void SoftwareRnic::hand_arrivals(Queue& responder) {
  const bool send = config_.transport.op == config::RdmaOp::kSend;
  while (!responder.arrivals.empty() && !responder.receives.empty()) {
    const uint32_t imm = responder.arrivals.pop_front();
    const ReceiveWork receive = responder.receives.pop_front();
    ibv_wc wc{};
    wc.wr_id = receive.wr_id;
    wc.status = IBV_WC_SUCCESS;
    wc.opcode = send ? IBV_WC_RECV : IBV_WC_RECV_RDMA_WITH_IMM;
    wc.qp_num = responder.qpn;
    wc.src_qp = responder.dest_qpn;
    if (!send) {
      wc.imm_data = imm;
      wc.wc_flags = IBV_WC_WITH_IMM;
    }
    if (!responder.recv_cq->push(wc)) {
      Qp::enter_error(responder);
      return;
    }
  }
}

void SoftwareRnic::delivered(uint32_t requester_qpn) {
  Queue* q = queue(requester_qpn);
  if (q == nullptr) return;  // destroyed since
  const uint64_t sequence = q->transport_delivered++;
  for (size_t i = 0; i < q->sends.size(); ++i) {
    SendWork& w = q->sends[i];
    if (!w.in_transport || w.sequence != sequence) continue;
    w.delivered = true;
    Qp::place_in_order(*this, *q);
    Qp::complete(*q);
    return;
  }
  // Work flushed when the QP went to the error state: the transport still carried it.
}

void SoftwareRnic::finished(uint32_t requester_qpn, uint8_t status) {
  Queue* q = queue(requester_qpn);
  if (q == nullptr) return;
  const uint64_t sequence = q->transport_finished++;
  for (size_t i = 0; i < q->sends.size(); ++i) {
    SendWork& w = q->sends[i];
    if (!w.in_transport || w.sequence != sequence) continue;
    w.finished = true;
    w.transport_status = static_cast<transport::FlowStatus>(status);
    // A responder in another process took it when it acknowledged it.
    if (!q->remote_here) w.placed = true;
    Qp::complete(*q);
    return;
  }
}

// --- queue pairs ---------------------------------------------------------------------------

int SoftwareRnic::Qp::check_transition(const Queue& q, ibv_qp_state target, int mask) const {
  const int given = mask & ~IBV_QP_STATE;
  int required = 0;
  int optional = 0;
  if (target == IBV_QPS_RESET || target == IBV_QPS_ERR) {
    return given == 0 ? 0 : EINVAL;
  }
  switch (q.state) {
    case IBV_QPS_RESET:
      if (target != IBV_QPS_INIT) return EINVAL;
      required = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
      break;
    case IBV_QPS_INIT:
      if (target == IBV_QPS_INIT) {
        optional = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
      } else if (target == IBV_QPS_RTR) {
        required = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
        optional = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX;
      } else {
        return EINVAL;
      }
      break;
    case IBV_QPS_RTR:
      if (target != IBV_QPS_RTS) return EINVAL;
      required = IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                 IBV_QP_MAX_QP_RD_ATOMIC;
      optional = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER |
                 IBV_QP_PATH_MIG_STATE;
      break;
    case IBV_QPS_RTS:
      if (target != IBV_QPS_RTS) return EINVAL;
      optional = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE |
                 IBV_QP_MIN_RNR_TIMER;
      break;
    default:  // ERR (and SQD/SQE, which this RNIC never enters) leave only to RESET
      return EINVAL;
  }
  if ((given & required) != required) return EINVAL;
  if ((given & ~(required | optional)) != 0) return EINVAL;
  return 0;
}

int SoftwareRnic::Qp::apply_attributes(Queue& q, ibv_qp_state target, const ibv_qp_attr& attr,
                                       int mask) {
  if (mask & IBV_QP_PORT) {
    int found = -1;
    for (const auto& port : rnic_.ports_) {
      if (port->here && port->device == q.device && port->number == attr.port_num) {
        found = static_cast<int>(port->index);
      }
    }
    if (found < 0) return EINVAL;
    q.port = found;
  }
  Port& port = *rnic_.ports_.at(static_cast<size_t>(q.port));
  int remote = q.remote_port;
  if (mask & IBV_QP_AV) {
    const ibv_ah_attr& ah = attr.ah_attr;
    // RoCE addresses by GID: an address vector without a GRH cannot leave the port.
    if (!ah.is_global || ah.port_num != port.number || ah.grh.sgid_index >= port.gids.size()) {
      return EINVAL;
    }
    remote = rnic_.port_of_gid(ah.grh.dgid);
    if (remote < 0) return EHOSTUNREACH;
  }
  if ((mask & IBV_QP_PATH_MTU) &&
      (attr.path_mtu < IBV_MTU_256 || attr.path_mtu > port.active_mtu)) {
    return EINVAL;
  }
  if ((mask & IBV_QP_TIMEOUT) && attr.timeout > 31) return EINVAL;
  if ((mask & IBV_QP_RETRY_CNT) && attr.retry_cnt > 7) return EINVAL;
  if ((mask & IBV_QP_RNR_RETRY) && attr.rnr_retry > 7) return EINVAL;
  if ((mask & IBV_QP_DEST_QPN) && attr.dest_qp_num >= (1u << 24)) return EINVAL;
  // Halves stay open on the transport once opened: a QP reconnected elsewhere is not served.
  const uint32_t dest = (mask & IBV_QP_DEST_QPN) ? attr.dest_qp_num : q.dest_qpn;
  if ((q.responder_open || q.requester_open) && (dest != q.dest_qpn || remote != q.remote_port)) {
    return EINVAL;
  }
  // One transport times every QP of the port: the first QP in RTS sets its retry count and
  // timeout, and a QP wanting others cannot be served as it asks.
  const bool timing = (mask & IBV_QP_TIMEOUT) && (mask & IBV_QP_RETRY_CNT);
  const uint64_t timeout_ns = timing ? retransmit_timeout_ns(attr.timeout) : 0;
  if (timing && port.qp_timing_set &&
      (port.transport_config.retry_count != attr.retry_cnt ||
       port.transport_config.retransmit_timeout_ns != timeout_ns)) {
    return EINVAL;
  }
  if (timing && !port.qp_timing_set) {
    port.transport_config.retry_count = attr.retry_cnt;
    port.transport_config.retransmit_timeout_ns = timeout_ns;
    port.qp_timing_set = true;
  }
  if (mask & IBV_QP_ACCESS_FLAGS) q.access = static_cast<int>(attr.qp_access_flags);
  if (mask & IBV_QP_PATH_MTU) q.path_mtu = attr.path_mtu;
  if (mask & IBV_QP_RNR_RETRY) q.rnr_retry = attr.rnr_retry;
  q.dest_qpn = dest;
  q.remote_port = remote;
  q.remote_here = remote < 0 || rnic_.ports_.at(static_cast<size_t>(remote))->here;
  if (mask & IBV_QP_AV) {
    q.udp_source_port = udp_source_port(attr.ah_attr.grh.flow_label, q.qpn, q.dest_qpn);
  }
  transport::Transport& t = *port.transport;
  const auto remote_port = static_cast<uint32_t>(q.remote_port);
  if (target == IBV_QPS_RTR && !q.responder_open) {
    t.open_responder(0, q.qpn, remote_port, q.dest_qpn, q.udp_source_port);
    q.responder_open = true;
    rnic_.responder_of_requester_[uint64_t(q.port) << 32 | q.dest_qpn] = q.qpn;
  }
  if (target == IBV_QPS_RTS && !q.requester_open) {
    t.open_requester(0, q.qpn, remote_port, q.dest_qpn, q.udp_source_port);
    q.requester_open = true;
  }
  return 0;
}

int SoftwareRnic::Qp::modify(ibv_qp_attr& attr, int mask) {
  Queue& q = queue();
  const ibv_qp_state target = (mask & IBV_QP_STATE) ? attr.qp_state : q.state;
  if ((mask & IBV_QP_CUR_STATE) && attr.cur_qp_state != q.state) return EINVAL;
  if (const int error = check_transition(q, target, mask); error != 0) return error;
  if (target == IBV_QPS_ERR) {
    enter_error(q);
    return 0;
  }
  if (target == IBV_QPS_RESET) {
    q.sends.clear();
    q.receives.clear();
    q.waiting_for_receive = false;
    q.state = IBV_QPS_RESET;
    return 0;
  }
  if (const int error = apply_attributes(q, target, attr, mask); error != 0) return error;
  q.state = target;
  return 0;
}

int SoftwareRnic::Qp::set_rate_limit(uint32_t kbps) {
  if (!rnic_.options_.rate_limiter) return EOPNOTSUPP;
  Queue& q = queue();
  if (q.state != IBV_QPS_RTS) return EINVAL;
  const Port& port = *rnic_.ports_.at(static_cast<size_t>(q.port));
  // 0 lifts the limit.
  const uint64_t bps = kbps == 0 ? port.config->speed_bps : uint64_t{kbps} * 1000;
  port.transport->set_rate_limit(q.qpn, bps);
  return 0;
}

int SoftwareRnic::Qp::post_send(ibv_send_wr* wr, ibv_send_wr** bad) {
  Queue& q = queue();
  for (; wr != nullptr; wr = wr->next) {
    int error = 0;
    if (q.state == IBV_QPS_RESET || q.state == IBV_QPS_INIT || q.state == IBV_QPS_RTR) {
      error = EINVAL;
    } else if (wr->opcode != IBV_WR_RDMA_WRITE && wr->opcode != IBV_WR_RDMA_WRITE_WITH_IMM &&
               wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM) {
      error = EINVAL;  // READ and atomics are not served
    } else if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > q.caps.max_send_sge) {
      error = EINVAL;
    } else if (q.sends.size() >= q.caps.max_send_wr) {
      error = ENOMEM;
    }
    if (error != 0) {
      if (bad != nullptr) *bad = wr;
      return error;
    }
    SendWork w;
    w.wr_id = wr->wr_id;
    w.opcode = wr->opcode;
    w.signaled = (wr->send_flags & IBV_SEND_SIGNALED) != 0 || q.caps.max_inline_data == ~0u;
    w.imm = wr->imm_data;
    w.remote_address = wr->wr.rdma.remote_addr;
    w.rkey = wr->wr.rdma.rkey;
    w.sges = static_cast<uint32_t>(wr->num_sge);
    for (uint32_t s = 0; s < w.sges; ++s) {
      w.sge[s] = wr->sg_list[s];
      w.length += wr->sg_list[s].length;
    }
    if (q.state == IBV_QPS_ERR) {
      // Completes at once, flushed.
      ibv_wc wc{};
      wc.wr_id = w.wr_id;
      wc.status = IBV_WC_WR_FLUSH_ERR;
      wc.qp_num = q.qpn;
      q.send_cq->push(wc);
      continue;
    }
    bool local_ok = w.length <= (1u << 31);
    for (uint32_t s = 0; s < w.sges && local_ok; ++s) {
      const Region* r = rnic_.region(w.sge[s].lkey);
      local_ok = r != nullptr && r->device == q.device && r->covers(w.sge[s].addr, w.sge[s].length);
    }
    if (!local_ok) {
      // Found when the device reads the buffer: a completion with an error, not a failed post.
      w.effect = w.length > (1u << 31) ? IBV_WC_LOC_LEN_ERR : IBV_WC_LOC_PROT_ERR;
      w.placed = true;
      w.finished = true;
      q.sends.push_back(w);
      complete(q);
      continue;
    }
    w.in_transport = true;
    w.sequence = q.transport_posted++;
    q.sends.push_back(w);
    // The transport carries a zero-byte message as one packet; a message of zero bytes is
    // rare enough that its packet's size does not matter.
    // The frames say what the work request is: a WRITE without an immediate, or the immediate
    // the responder's completion carries.
    transport::FlowTags tags;
    tags.plain_write = w.opcode == IBV_WR_RDMA_WRITE;
    if (carries_immediate(w.opcode)) tags.wire_tag = w.imm;
    rnic_.ports_.at(static_cast<size_t>(q.port))
        ->transport->post(q.qpn, std::max<uint64_t>(w.length, 1), tags);
  }
  return 0;
}

int SoftwareRnic::Qp::post_recv(ibv_recv_wr* wr, ibv_recv_wr** bad) {
  Queue& q = queue();
  for (; wr != nullptr; wr = wr->next) {
    int error = 0;
    if (q.state == IBV_QPS_RESET) {
      error = EINVAL;
    } else if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > q.caps.max_recv_sge) {
      error = EINVAL;
    } else if (q.receives.size() >= q.caps.max_recv_wr) {
      error = ENOMEM;
    }
    if (error != 0) {
      if (bad != nullptr) *bad = wr;
      return error;
    }
    if (q.state == IBV_QPS_ERR) {
      ibv_wc wc{};
      wc.wr_id = wr->wr_id;
      wc.status = IBV_WC_WR_FLUSH_ERR;
      wc.qp_num = q.qpn;
      q.recv_cq->push(wc);
      continue;
    }
    ReceiveWork r;
    r.wr_id = wr->wr_id;
    r.sges = static_cast<uint32_t>(wr->num_sge);
    for (uint32_t s = 0; s < r.sges; ++s) r.sge[s] = wr->sg_list[s];
    q.receives.push_back(r);
  }
  // Messages from elsewhere that waited for a receive.
  rnic_.hand_arrivals(q);
  // Senders that were refused for want of a receive go on now.
  while (!q.waiting_senders.empty() && !q.receives.empty()) {
    Queue* sender = rnic_.queue(q.waiting_senders.pop_front());
    if (sender == nullptr || !sender->waiting_for_receive) continue;
    sender->waiting_for_receive = false;
    place_in_order(rnic_, *sender);
    complete(*sender);
  }
  return 0;
}

bool SoftwareRnic::Qp::place(SoftwareRnic& rnic, Queue& q, SendWork& w) {
  Queue* responder = rnic.queue(q.dest_qpn);
  // A responder that is gone, not ready or not this QP's peer drops the packets: the requester
  // retries until it gives up.
  if (responder == nullptr || responder->dest_qpn != q.qpn ||
      (responder->state != IBV_QPS_RTR && responder->state != IBV_QPS_RTS)) {
    w.effect = IBV_WC_RETRY_EXC_ERR;
    w.placed = true;
    return true;
  }
  const bool write = w.opcode == IBV_WR_RDMA_WRITE || w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
  if (write) {
    const Region* target = rnic.region(w.rkey);
    if (target == nullptr || target->device != responder->device ||
        (target->access & IBV_ACCESS_REMOTE_WRITE) == 0 ||
        (responder->access & IBV_ACCESS_REMOTE_WRITE) == 0 ||
        !target->covers(w.remote_address, w.length)) {
      w.effect = IBV_WC_REM_ACCESS_ERR;
      w.placed = true;
      return true;
    }
  }
  ReceiveWork receive;
  if (needs_receive(w.opcode)) {
    if (responder->receives.empty()) {
      if (q.rnr_retry < 7) {
        w.effect = IBV_WC_RNR_RETRY_EXC_ERR;
        w.placed = true;
        return true;
      }
      if (!q.waiting_for_receive) {
        q.waiting_for_receive = true;
        responder->waiting_senders.push_back(q.qpn);
      }
      return false;
    }
    receive = responder->receives.pop_front();
  }
  // Move the bytes: gather from the sender's entries, into the remote range or the receive's.
  uint64_t capacity = 0;
  for (uint32_t s = 0; s < receive.sges; ++s) capacity += receive.sge[s].length;
  const bool send = !write;
  if (send && capacity < w.length) {
    ibv_wc wc{};
    wc.wr_id = receive.wr_id;
    wc.status = IBV_WC_LOC_LEN_ERR;
    wc.qp_num = responder->qpn;
    responder->recv_cq->push(wc);
    enter_error(*responder);
    w.effect = IBV_WC_REM_INV_REQ_ERR;
    w.placed = true;
    return true;
  }
  uint32_t out_sge = 0;
  uint64_t out_offset = 0;
  uint64_t written = 0;
  for (uint32_t s = 0; s < w.sges; ++s) {
    const auto* from = reinterpret_cast<const uint8_t*>(w.sge[s].addr);
    uint64_t left = w.sge[s].length;
    while (left > 0) {
      if (write) {
        std::memmove(reinterpret_cast<uint8_t*>(w.remote_address + written), from, left);
        written += left;
        break;
      }
      const ibv_sge& to = receive.sge[out_sge];
      const uint64_t n = std::min<uint64_t>(left, to.length - out_offset);
      std::memmove(reinterpret_cast<uint8_t*>(to.addr + out_offset), from, n);
      from += n;
      left -= n;
      out_offset += n;
      if (out_offset == to.length) {
        ++out_sge;
        out_offset = 0;
      }
    }
  }
  if (needs_receive(w.opcode)) {
    ibv_wc wc{};
    wc.wr_id = receive.wr_id;
    wc.status = IBV_WC_SUCCESS;
    wc.opcode = write ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
    wc.byte_len = static_cast<uint32_t>(w.length);
    wc.qp_num = responder->qpn;
    wc.src_qp = q.qpn;
    if (carries_immediate(w.opcode)) {
      wc.imm_data = w.imm;
      wc.wc_flags = IBV_WC_WITH_IMM;
    }
    if (!responder->recv_cq->push(wc)) enter_error(*responder);
  }
  w.placed = true;
  return true;
}

void SoftwareRnic::Qp::place_in_order(SoftwareRnic& rnic, Queue& q) {
  if (q.waiting_for_receive) return;
  for (size_t i = 0; i < q.sends.size(); ++i) {
    SendWork& w = q.sends[i];
    if (w.placed) continue;
    if (!w.delivered || !place(rnic, q, w)) return;
  }
}

void SoftwareRnic::Qp::complete(Queue& q) {
  while (!q.sends.empty()) {
    SendWork& w = q.sends.front();
    if (!w.finished) return;
    const bool carried = w.transport_status == transport::FlowStatus::kCompleted;
    if (carried && !w.placed) return;
    const ibv_wc_status status = carried ? w.effect : completion_status(w.transport_status);
    if (w.signaled || status != IBV_WC_SUCCESS) {
      ibv_wc wc{};
      wc.wr_id = w.wr_id;
      wc.status = status;
      wc.opcode = w.opcode == IBV_WR_SEND || w.opcode == IBV_WR_SEND_WITH_IMM ? IBV_WC_SEND
                                                                              : IBV_WC_RDMA_WRITE;
      wc.qp_num = q.qpn;
      if (!q.send_cq->push(wc)) {
        q.sends.pop_front();
        enter_error(q);
        return;
      }
    }
    q.sends.pop_front();
    if (status != IBV_WC_SUCCESS) {
      enter_error(q);
      return;
    }
  }
}

void SoftwareRnic::Qp::enter_error(Queue& q) {
  q.state = IBV_QPS_ERR;
  q.waiting_for_receive = false;
  while (!q.sends.empty()) {
    ibv_wc wc{};
    wc.wr_id = q.sends.pop_front().wr_id;
    wc.status = IBV_WC_WR_FLUSH_ERR;
    wc.qp_num = q.qpn;
    q.send_cq->push(wc);
  }
  while (!q.receives.empty()) {
    ibv_wc wc{};
    wc.wr_id = q.receives.pop_front().wr_id;
    wc.status = IBV_WC_WR_FLUSH_ERR;
    wc.qp_num = q.qpn;
    q.recv_cq->push(wc);
  }
}

}  // namespace etwire::dataplane
