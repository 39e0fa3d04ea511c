// The data plane of a run whose ports are DPDK ports: the wall clock, one DpdkPort per
// configured port, and the transport on top. One run-to-completion loop on the calling thread
// (DPDK's main lcore) runs the transport's due events, hands frames to the devices and polls
// them for arrivals.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "control/run_config.h"
#include "emulator/engine/data_plane.h"
#include "nic/dpdk/dpdk_port.h"
#include "nic/dpdk/wire_directory.h"
#include "traffic/clock/wall_clock.h"
#include "traffic/frame/payload_pattern.h"

struct rte_ring;

namespace etwire::engine {

// The EAL arguments a configuration needs: defaults that keep DPDK quiet, `dpdk.eal_args`, and
// a --vdev or -a for each port's device (net_ring devices excepted: etwire makes those itself).
std::vector<std::string> eal_arguments(const control::RunConfig& config);

class DpdkDataPlane final : public DataPlane {
 public:
  // Starts the EAL (once per process) and every port. Throws std::invalid_argument when a port is
  // not a dpdk port, std::runtime_error when DPDK cannot set a device up (the port and DPDK's
  // reason in the message). `config` and `observer` must outlive the data plane.
  DpdkDataPlane(const control::RunConfig& config, transport::FlowObserver& observer);
  ~DpdkDataPlane() override;

  clock::Scheduler& scheduler() override { return clock_; }
  transport::Transport& transport() override { return *transport_; }
  size_t ports() const override { return ports_.size(); }
  bool virtual_time() const override { return false; }
  clock::Nanos next_event_time() const override { return clock_.now(); }
  void start() override { clock_.restart(); }
  void poll() override;
  uint64_t events_run() const override { return events_; }
  void connected(const WireConnection& connection) override;
  PortRecord port_record(size_t port) const override;

  nic::dpdk::DpdkPort& port(size_t index) { return *ports_[index]; }

 private:
  const control::RunConfig& config_;
  clock::WallClock clock_;
  frame::PayloadPattern payload_;
  nic::dpdk::WireDirectory directory_;
  std::vector<rte_ring*> rings_;  // of the net_ring devices made here
  std::vector<uint16_t> made_devices_;
  std::vector<std::unique_ptr<nic::dpdk::DpdkPort>> ports_;
  std::unique_ptr<transport::Transport> transport_;
  uint64_t events_ = 0;
};

}  // namespace etwire::engine
