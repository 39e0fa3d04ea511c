#include "control/check/backend_capabilities.h"

namespace etwire::control {

namespace {

constexpr uint64_t kGbps = 1'000'000'000;
constexpr uint64_t kStandardSpeeds[] = {1 * kGbps,   10 * kGbps,  25 * kGbps,
                                        40 * kGbps,  50 * kGbps,  100 * kGbps,
                                        200 * kGbps, 400 * kGbps, 800 * kGbps};

// The driver of a DPDK vdev spec: "net_pcap0,tx_pcap=x" -> "net_pcap".
std::string vdev_driver(const std::string& vdev) {
  std::string name = vdev.substr(0, vdev.find(','));
  while (!name.empty() && name.back() >= '0' && name.back() <= '9') name.pop_back();
  return name;
}

}  // namespace

std::span<const uint64_t> standard_ethernet_speeds() {
  return kStandardSpeeds;
}

BackendLimits limits_for(const config::PortConfig& port) {
  BackendLimits limits;
  switch (port.backend) {
    case config::Backend::kLoopback:
      limits.min_speed_bps = 1'000'000;
      limits.max_speed_bps = 3'200 * kGbps;
      limits.min_mtu = 576;
      limits.max_mtu = 9216;
      limits.why = "the loopback NIC paces any rate up to 3.2 Tb/s in virtual time";
      return limits;
    case config::Backend::kDpdk:
      limits.min_mtu = 576;
      limits.max_mtu = 9216;
      if (!port.dpdk.pci.empty()) {
        limits.min_speed_bps = 1 * kGbps;
        limits.max_speed_bps = 800 * kGbps;
        limits.standard_speeds = kStandardSpeeds;
        limits.why = "a PCI device is a physical port, which runs at a standard Ethernet rate";
        return limits;
      }
      limits.min_speed_bps = 1'000'000;
      limits.max_speed_bps = 800 * kGbps;
      limits.why = "a DPDK port paces any rate up to 800 Gb/s";
      if (vdev_driver(port.dpdk.vdev) == "net_af_xdp") {
        // XDP on a veth fits a frame in one page: about 3.5 KB of MTU.
        limits.max_mtu = 3498;
        limits.why = "net_af_xdp on a veth carries frames up to about 3.5 KB";
      }
      return limits;
    case config::Backend::kVerbs:
      limits.min_speed_bps = 1 * kGbps;
      limits.max_speed_bps = 800 * kGbps;
      limits.standard_speeds = kStandardSpeeds;
      limits.min_mtu = 576;
      limits.max_mtu = 9216;
      limits.why = "an RDMA NIC runs at a standard Ethernet rate";
      return limits;
  }
  return limits;
}

}  // namespace etwire::control
