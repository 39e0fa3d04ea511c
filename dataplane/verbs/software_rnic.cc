// The software RNIC: its ports, each a twin port of the rig (or, across processes, a datagram
// cable's end) with a worker of its own, their GID tables as mlx5 shows them, the lookups its
// parts share, and a completion queue's overrun handled as the device's asynchronous event.
#include "dataplane/verbs/software_rnic.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "dataplane/verbs/datagram_cables.h"
#include "dataplane/verbs/software_rnic_internal.h"
#include "dataplane/worker.h"
#include "nic/port_frame_format.h"
#include "twin/layout/configured_layout.h"

namespace etwire::dataplane {

namespace {

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

}  // namespace

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
    // Not the twin rig: the twin lives in one process, and datagrams from the others arrive in
    // real time, so these ports' workers run on a wall clock that polling the RNIC moves on.
    wall_ = std::make_unique<clock::WallClock>();
    scheduler_ = wall_.get();
    cables_ = std::make_unique<DatagramCables>(here, speeds, *processes);
    // Apart from the other processes' numbers, so that flow records and captures tell them apart.
    next_qpn_ += emulator << 16;
  } else {
    // The twin as the loopback data plane has it, with every port of the run, even when the
    // configuration names emulators but the run is one process.
    rig_ = std::make_unique<TwinRig>(config, twin::run_port_specs(config), options.layout);
    scheduler_ = &rig_->clock();
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
      // Not in a WorkerLoop: the RNIC runs on the thread that drives the verbs seam, as a device
      // works beside the host, and its reports go to its queues rather than a flow join.
      soft->worker = std::make_unique<Worker>(soft->transport_config, *scheduler_, *soft->observer);
      soft->worker->add_port(cables_ ? cables_->port(p) : rig_->twin().port(p),
                             static_cast<uint32_t>(p), 0, port.qos,
                             nic::frame_format(config, port));
    }
    ports_.push_back(std::move(soft));
  }
}

SoftwareRnic::~SoftwareRnic() = default;

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

}  // namespace etwire::dataplane
