// The DPDK devices behind a run's dpdk ports, set up before any port and closed after the last:
// the back-to-back ring devices etwire makes itself (one ring per queue and direction, a device
// without a peer sending to itself), the devices the EAL found by name or port id, and the
// configuration of devices of several queues, which are configured before their queues are set
// up (one DpdkPort per queue), started after, and stopped before the ports go.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "config/run_config.h"

struct rte_ring;

namespace etwire::nic::dpdk {

class RunDevices {
 public:
  // Needs the EAL running (start_eal). `instance` keeps the names of rings and devices apart
  // from another data plane's in the same process. Only the ports of emulator process
  // `emulator` get devices (config::drives_port). Throws std::runtime_error naming the port
  // when a ring or device cannot be made or DPDK has no device of that name; what was made by
  // then is released.
  RunDevices(const config::RunConfig& config, uint32_t instance, uint32_t emulator = 0);
  // Stops the devices of several queues and closes what was made here.
  ~RunDevices();
  RunDevices(const RunDevices&) = delete;
  RunDevices& operator=(const RunDevices&) = delete;

  // The DPDK port id of run port `port`.
  uint16_t device(size_t port) const { return devices_[port]; }
  // The ring queue `queue` of a ring device receives from (nullptr for other devices): the ring
  // PMD cannot count its receive queue, the ring can.
  rte_ring* rx_ring(size_t port, uint16_t queue) const {
    return inbound_[port].empty() ? nullptr : inbound_[port][queue];
  }
  // Starts the devices of several queues, once every queue's port is set up.
  void start();
  // Stops them (before the ports and the pools their receive queues hold mbufs of go).
  void stop();
  // Waits, up to `patience`, until every device of this process reports its link up: a device
  // that connects to its peer after it starts (net_memif, a NIC negotiating) would drop the first
  // frames otherwise. Returns the names of the ports whose links are still down.
  std::vector<std::string> wait_for_links(std::chrono::milliseconds patience) const;

 private:
  struct MultiQueueDevice {
    uint16_t device = 0;
    uint16_t queues = 0;
    std::string port;  // for messages
  };
  void release();

  std::vector<uint16_t> devices_;                // by run port
  std::vector<std::string> names_;               // by run port; "" for another process's
  std::vector<std::vector<rte_ring*>> inbound_;  // by run port, by queue: ring devices only
  std::vector<rte_ring*> rings_;                 // made here
  std::vector<uint16_t> made_devices_;           // made here
  std::vector<MultiQueueDevice> multi_queue_devices_;
  bool started_ = false;
};

}  // namespace etwire::nic::dpdk
