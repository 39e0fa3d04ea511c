#include "emulator/engine/dpdk/dpdk_data_plane.h"

#include <fmt/format.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include <atomic>
#include <stdexcept>

#include "nic/dpdk/eal.h"

namespace etwire::engine {

namespace {

// Names of rings, devices and mempools are process-wide in DPDK: each data plane gets its own.
std::atomic<uint32_t> instances{0};

std::string device_name(const std::string& spec) {
  return spec.substr(0, spec.find(','));
}

frame::FrameAddresses addresses(const control::RankEndpoint& from, const control::RankEndpoint& to,
                                const control::RunConfig& config) {
  frame::FrameAddresses a;
  a.src_mac = from.mac.bytes;
  a.dst_mac = to.mac.bytes;
  a.ip_version = config.transport.ip_version;
  a.vlan_id = config.ports[from.port].vlan;
  if (a.ip_version == 6) {
    a.src_ip = from.ipv6.value_or(control::Ipv6Address{}).bytes;
    a.dst_ip = to.ipv6.value_or(control::Ipv6Address{}).bytes;
  } else {
    for (int i = 0; i < 4; ++i) {
      a.src_ip[i] = static_cast<uint8_t>(from.ipv4.value >> (24 - 8 * i));
      a.dst_ip[i] = static_cast<uint8_t>(to.ipv4.value >> (24 - 8 * i));
    }
  }
  return a;
}

}  // namespace

std::vector<std::string> eal_arguments(const control::RunConfig& config) {
  std::vector<std::string> args = {"--no-telemetry", "--log-level=warning"};
  args.insert(args.end(), config.dpdk.eal_args.begin(), config.dpdk.eal_args.end());
  for (const control::PortConfig& port : config.ports) {
    if (port.backend != control::Backend::kDpdk) continue;
    if (!port.dpdk.vdev.empty() && !control::is_ring_device(port.dpdk)) {
      args.push_back("--vdev=" + port.dpdk.vdev);
    } else if (!port.dpdk.pci.empty()) {
      args.push_back("-a");
      args.push_back(port.dpdk.pci);
    }
  }
  return args;
}

DpdkDataPlane::DpdkDataPlane(const control::RunConfig& config, transport::FlowObserver& observer)
    : config_(config), payload_(config.transport.pmtu, config.transport.pmtu) {
  for (const control::PortConfig& port : config.ports) {
    if (port.backend != control::Backend::kDpdk) {
      throw std::invalid_argument(fmt::format(
          "{}: port \"{}\" ({}) uses the {} backend; a DPDK run drives dpdk ports only",
          config.source_file, port.name, port.key_path, control::backend_name(port.backend)));
    }
  }
  nic::dpdk::start_eal(eal_arguments(config));
  const uint32_t instance = instances.fetch_add(1);
  std::vector<uint16_t> devices(config.ports.size(), 0);
  try {
    // Back-to-back ring devices: each direction of a cable is one ring, the sender's TX queue
    // and the receiver's RX queue; a ring device without a peer sends to itself.
    std::vector<rte_ring*> inbound(config.ports.size(), nullptr);
    for (size_t p = 0; p < config.ports.size(); ++p) {
      if (!control::is_ring_device(config.ports[p].dpdk)) continue;
      const std::string name = fmt::format("etw{}r{}", instance, p);
      rte_ring* ring = rte_ring_create(name.c_str(), 4096, static_cast<int>(rte_socket_id()),
                                       RING_F_SP_ENQ | RING_F_SC_DEQ);
      if (ring == nullptr) {
        throw std::runtime_error(fmt::format("port \"{}\": cannot create ring {}: {}",
                                             config.ports[p].name, name, rte_strerror(rte_errno)));
      }
      rings_.push_back(ring);
      inbound[p] = ring;
    }
    for (size_t p = 0; p < config.ports.size(); ++p) {
      const control::PortConfig& port = config.ports[p];
      if (control::is_ring_device(port.dpdk)) {
        // Validation has made sure a peer exists and names this port back.
        const control::PortConfig* peer =
            port.dpdk.peer.empty() ? &port : config.find_port(port.dpdk.peer);
        rte_ring* rx = inbound[p];
        rte_ring* tx = inbound[static_cast<size_t>(peer - config.ports.data())];
        const std::string name = fmt::format("etw{}_{}", instance, device_name(port.dpdk.vdev));
        const int id = rte_eth_from_rings(name.c_str(), &rx, 1, &tx, 1, rte_socket_id());
        if (id < 0) {
          throw std::runtime_error(fmt::format("port \"{}\": cannot make ring device {}: {}",
                                               port.name, name, rte_strerror(rte_errno)));
        }
        devices[p] = static_cast<uint16_t>(id);
        made_devices_.push_back(devices[p]);
      } else if (port.dpdk.port_id) {
        devices[p] = *port.dpdk.port_id;
      } else {
        const std::string name =
            port.dpdk.vdev.empty() ? port.dpdk.pci : device_name(port.dpdk.vdev);
        if (rte_eth_dev_get_port_by_name(name.c_str(), &devices[p]) != 0) {
          throw std::runtime_error(
              fmt::format("port \"{}\" ({}): DPDK has no device {} (is it in dpdk.eal_args, "
                          "bound to a DPDK driver, or already used?)",
                          port.name, port.key_path, name));
        }
      }
    }
    transport_ = std::make_unique<transport::Transport>(config.transport, clock_, observer);
    for (size_t p = 0; p < config.ports.size(); ++p) {
      const control::PortConfig& port = config.ports[p];
      nic::dpdk::DpdkPortSetup setup;
      setup.name = port.name;
      setup.device = devices[p];
      setup.index = static_cast<uint32_t>(p);
      setup.speed_bps = port.speed_bps;
      setup.mtu = port.mtu;
      setup.pmtu = config.transport.pmtu;
      setup.ip_version = config.transport.ip_version;
      setup.vlan = port.vlan;
      setup.mac = port.mac.bytes;
      setup.rx_descriptors = port.dpdk.rx_descriptors;
      setup.tx_descriptors = port.dpdk.tx_descriptors;
      setup.mbufs = config.dpdk.mbufs;
      setup.mbuf_cache = config.dpdk.mbuf_cache;
      setup.burst = config.dpdk.burst;
      setup.pool_prefix = fmt::format("etw{}p{}", instance, p);
      ports_.push_back(std::make_unique<nic::dpdk::DpdkPort>(setup, payload_, directory_));
      nic::FrameFormat format;
      format.ip_version = config.transport.ip_version;
      format.vlan_tagged = port.vlan != 0;
      const uint32_t index = transport_->add_port(*ports_.back(), port.qos, format);
      transport_->set_catch_up(index, ports_.back()->catch_up());
    }
  } catch (...) {
    transport_.reset();
    ports_.clear();
    for (uint16_t id : made_devices_) rte_eth_dev_close(id);
    for (rte_ring* ring : rings_) rte_ring_free(ring);
    throw;
  }
}

DpdkDataPlane::~DpdkDataPlane() {
  transport_.reset();
  for (auto& port : ports_) port->stop();
  ports_.clear();
  for (uint16_t id : made_devices_) rte_eth_dev_close(id);
  for (rte_ring* ring : rings_) rte_ring_free(ring);
}

void DpdkDataPlane::poll() {
  events_ += clock_.poll();
  const clock::Nanos now = clock_.now();
  for (auto& port : ports_) port->poll(now);
}

void DpdkDataPlane::connected(const WireConnection& connection) {
  const control::RankEndpoint& from = *connection.requester;
  const control::RankEndpoint& to = *connection.responder;
  const control::PortConfig& src = config_.ports[from.port];
  const control::PortConfig& dst = config_.ports[to.port];
  if (!src.dpdk.peer.empty() && src.dpdk.peer != dst.name) {
    throw std::invalid_argument(fmt::format(
        "{}: ranks on port \"{}\" send to ranks on port \"{}\", but \"{}\" is cabled back to "
        "back to \"{}\" (dpdk.peer) and reaches nothing else; map the job so that traffic "
        "crosses that cable only (hosts.ranks_per_host keeps traffic within a host off the ports)",
        config_.source_file, src.name, dst.name, src.name, src.dpdk.peer));
  }
  if (src.dpdk.peer.empty() && control::is_ring_device(src.dpdk) && from.port != to.port) {
    throw std::invalid_argument(fmt::format(
        "{}: ranks on port \"{}\" send to ranks on port \"{}\", but \"{}\" is a ring device "
        "looped to itself (no dpdk.peer)",
        config_.source_file, src.name, dst.name, src.name));
  }
  nic::dpdk::WireRoute route;
  route.requester = {static_cast<uint32_t>(from.port), connection.requester_qpn};
  route.responder = {static_cast<uint32_t>(to.port), connection.responder_qpn};
  route.forward = addresses(from, to, config_);
  route.backward = addresses(to, from, config_);
  if (connection.id.requester != connection.id.responder) {
    throw std::logic_error(
        "dpdk data plane: a connection's requester and responder indexes differ");
  }
  directory_.add(connection.id.requester, route);
}

PortRecord DpdkDataPlane::port_record(size_t index) const {
  const nic::dpdk::DpdkPort& port = *ports_[index];
  const nic::dpdk::DpdkPortCounters& nic = port.counters();
  const frame::FrameErrorCounters& errors = port.frame_errors();
  const auto& transport = transport_->port_counters(static_cast<uint32_t>(index));
  PortRecord record;
  record.name = config_.ports[index].name;
  record.speed_bps = config_.ports[index].speed_bps;
  record.tx_bytes = nic.tx_bytes;
  record.rx_bytes = nic.rx_bytes;
  record.tx_packets = nic.tx_frames;
  record.rx_packets = nic.rx_frames;
  record.data_packets = transport.data_packets;
  record.retransmitted_packets = transport.retransmitted_packets;
  record.ecn_marked_received = transport.ecn_marked_received;
  record.cnps_sent = transport.cnps_sent;
  record.cnps_received = transport.cnps_received;
  record.pfc_pauses_sent = nic.pauses_sent;
  record.pfc_pauses_received = nic.pauses_received;
  // Frames this port lost: not sent (no mbuf, queue full), arrived broken or for no QP, or lost
  // inside the device.
  record.drops = nic.tx_dropped + nic.tx_unrouted + nic.rx_unknown_qp + errors.truncated +
                 errors.bad_header + errors.bad_icrc + errors.unknown_opcode + port.device_drops();
  record.timeouts = transport.timeouts;
  return record;
}

}  // namespace etwire::engine
