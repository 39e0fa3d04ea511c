#include "nic/dpdk/run_devices.h"

#include <fmt/format.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include <stdexcept>
#include <thread>

#include "nic/dpdk/dpdk_port.h"

namespace etwire::nic::dpdk {

namespace {

std::string device_name(const std::string& spec) {
  return spec.substr(0, spec.find(','));
}

}  // namespace

RunDevices::RunDevices(const config::RunConfig& config, uint32_t instance, uint32_t emulator)
    : devices_(config.ports.size(), 0), names_(config.ports.size()), inbound_(config.ports.size()) {
  auto here = [&](size_t p) { return config::drives_port(config, config.ports[p], emulator); };
  try {
    // Back-to-back ring devices: each direction of a cable is one ring per queue, the sender's
    // TX queue and the receiver's RX queue of the same number; a ring device without a peer
    // sends to itself.
    for (size_t p = 0; p < config.ports.size(); ++p) {
      if (!here(p) || !config::is_ring_device(config.ports[p].dpdk)) continue;
      for (uint16_t q = 0; q < config.ports[p].dpdk.queues; ++q) {
        const std::string name = fmt::format("etw{}r{}q{}", instance, p, q);
        rte_ring* ring = rte_ring_create(name.c_str(), 4096, static_cast<int>(rte_socket_id()),
                                         RING_F_SP_ENQ | RING_F_SC_DEQ);
        if (ring == nullptr) {
          throw std::runtime_error(fmt::format("port \"{}\": cannot create ring {}: {}",
                                               config.ports[p].name, name,
                                               rte_strerror(rte_errno)));
        }
        rings_.push_back(ring);
        inbound_[p].push_back(ring);
      }
    }
    for (size_t p = 0; p < config.ports.size(); ++p) {
      const config::PortConfig& port = config.ports[p];
      if (!here(p)) continue;
      names_[p] = port.name;
      if (config::is_ring_device(port.dpdk)) {
        // Validation has made sure a peer exists and names this port back.
        const config::PortConfig* peer =
            port.dpdk.peer.empty() ? &port : config.find_port(port.dpdk.peer);
        // Validation has also made sure both ends have as many queues.
        std::vector<rte_ring*>& rx = inbound_[p];
        std::vector<rte_ring*>& tx = inbound_[static_cast<size_t>(peer - config.ports.data())];
        const std::string name = fmt::format("etw{}_{}", instance, device_name(port.dpdk.vdev));
        const int id =
            rte_eth_from_rings(name.c_str(), rx.data(), static_cast<unsigned>(rx.size()), tx.data(),
                               static_cast<unsigned>(tx.size()), rte_socket_id());
        if (id < 0) {
          throw std::runtime_error(fmt::format("port \"{}\": cannot make ring device {}: {}",
                                               port.name, name, rte_strerror(rte_errno)));
        }
        devices_[p] = static_cast<uint16_t>(id);
        made_devices_.push_back(devices_[p]);
      } else if (port.dpdk.port_id) {
        devices_[p] = *port.dpdk.port_id;
      } else {
        const std::string name =
            port.dpdk.vdev.empty() ? port.dpdk.pci : device_name(port.dpdk.vdev);
        if (rte_eth_dev_get_port_by_name(name.c_str(), &devices_[p]) != 0) {
          throw std::runtime_error(
              fmt::format("port \"{}\" ({}): DPDK has no device {} (is it in dpdk.eal_args, "
                          "bound to a DPDK driver, or already used?)",
                          port.name, port.key_path, name));
        }
      }
    }
    // A device of several queues is configured before its queues are set up (by the ports made
    // below) and started after.
    for (size_t p = 0; p < config.ports.size(); ++p) {
      const config::PortConfig& port = config.ports[p];
      if (!here(p) || port.dpdk.queues == 1) continue;
      configure_device(devices_[p], port.dpdk.queues, port.name);
      multi_queue_devices_.push_back({devices_[p], port.dpdk.queues, port.name});
    }
  } catch (...) {
    release();
    throw;
  }
}

RunDevices::~RunDevices() {
  stop();
  release();
}

std::vector<std::string> RunDevices::wait_for_links(std::chrono::milliseconds patience) const {
  const auto give_up = std::chrono::steady_clock::now() + patience;
  std::vector<std::string> down;
  for (;;) {
    down.clear();
    for (size_t p = 0; p < devices_.size(); ++p) {
      if (names_[p].empty()) continue;
      rte_eth_link link{};
      if (rte_eth_link_get_nowait(devices_[p], &link) == 0 && link.link_status == RTE_ETH_LINK_UP) {
        continue;
      }
      down.push_back(names_[p]);
    }
    if (down.empty() || std::chrono::steady_clock::now() >= give_up) return down;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void RunDevices::start() {
  for (const MultiQueueDevice& device : multi_queue_devices_)
    start_device(device.device, device.port);
  started_ = true;
}

void RunDevices::stop() {
  if (!started_) return;
  started_ = false;
  for (const MultiQueueDevice& device : multi_queue_devices_) {
    stop_device(device.device, device.queues);
  }
}

void RunDevices::release() {
  for (uint16_t id : made_devices_) rte_eth_dev_close(id);
  for (rte_ring* ring : rings_) rte_ring_free(ring);
  made_devices_.clear();
  rings_.clear();
}

}  // namespace etwire::nic::dpdk
