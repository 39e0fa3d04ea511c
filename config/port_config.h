// `ports:` — the ports traffic leaves and enters by: which backend drives each, its addresses,
// speed, MTU, QoS marking, and the device settings of its backend.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/addresses.h"
#include "config/qos_config.h"
#include "config/transport_config.h"

namespace etwire::config {

enum class Backend : uint8_t {
  kLoopback,  // software NIC wired to the fabric twin, on a virtual clock
  kDpdk,      // RoCEv2 frames on a DPDK port (physical or virtual device), wall clock
  kVerbs,     // an RDMA NIC through libibverbs, wall clock
};
std::string_view backend_name(Backend backend);  // "loopback", "dpdk", "verbs"

// PFC generation on a DPDK port: pause the link partner's data priority (qos.data.priority)
// while the port's receive queue backs up, as a NIC does for a lossless class.
struct DpdkPfcSettings {
  bool enabled = false;
  // Receive-queue occupancy in descriptors: pause at xoff or above, resume at xon or below.
  // Resolved by the parser: xoff defaults to three quarters of rx_descriptors, xon to two thirds
  // of xoff.
  uint16_t xoff = 768;
  uint16_t xon = 512;
  uint16_t quanta = 0xFFFF;  // of each pause, 512 bit times each; refreshed while needed
  bool present = false;      // the dpdk section has a pfc: section
};

// Exactly one of port_id, vdev and pci identifies the DPDK port.
struct DpdkPortSettings {
  std::optional<uint16_t> port_id;  // a port the EAL arguments already create
  std::string vdev;  // "net_ring0" or "net_pcap0,tx_pcap=/tmp/x.pcap": added as --vdev
  std::string pci;   // "0000:3b:00.0": added to the EAL allow list
  // Queue pairs the port runs on, each driven by its own worker lcore (`lcores`, one per queue).
  // A port's connections are spread over its queues; each queue paces its share of the port's
  // speed (speed / queues).
  uint16_t queues = 1;
  std::vector<uint32_t> lcores;  // with queues > 1: the worker lcore of each queue
  uint16_t rx_descriptors = 1024;
  uint16_t tx_descriptors = 1024;  // default: from the port's speed, 1024 up to 4096
  std::optional<uint32_t> lcore;   // worker core of a port of one queue; default: the main lcore
  // The port this one is cabled to directly, with no device between ("" = cabled to the device
  // under test, which reaches every port). Back-to-back ports reach only each other; two net_ring
  // ports named each other's peer are wired together by etwire.
  std::string peer;
  DpdkPfcSettings pfc;
  bool present = false;  // the port entry has a dpdk: section
};

// The TX ring a DPDK port gets when the configuration leaves it out: about 170 us of full frames
// at `speed_bps` (1024 descriptors at 100 Gb/s, 4096 at 400 Gb/s and above). Half of it is how
// far pacing catches up after the loop was held up, and a shared machine holds loops up for
// longer than 40 us now and then.
uint16_t default_tx_descriptors(uint64_t speed_bps);

// net_ring devices are made by etwire itself (see `peer`), not by the EAL.
inline bool is_ring_device(const DpdkPortSettings& dpdk) {
  return dpdk.vdev.starts_with("net_ring");
}

// What etwire does with a verbs port's DCQCN settings (transport.dcqcn) on the device.
enum class VerbsDcqcn : uint8_t {
  kCheck,  // read the device's settings back and say where they differ from the config
  kApply,  // write the config's settings to the device (mlx5 sysfs; needs root), then check
};
std::string_view verbs_dcqcn_name(VerbsDcqcn mode);  // "check", "apply"

struct VerbsPortSettings {
  std::string device;  // "mlx5_0"; required for a verbs port
  uint8_t port = 1;    // the device's port number (1-based, as in ibv_devinfo)
  // The GID table entry the port's queue pairs use. nullopt: the RoCE v2 entry whose address is
  // the port's configured IP (ipv4, or ipv6 with transport.ip_version 6).
  std::optional<uint32_t> gid_index;
  // Per-QP transmit rate: the device's per-QP limiter where it has one, else etwire paces the
  // posting of work requests. nullopt: no limit (the NIC's line rate and its DCQCN).
  std::optional<uint64_t> rate_limit_bps;
  VerbsDcqcn dcqcn = VerbsDcqcn::kCheck;
  bool present = false;  // the port entry has a verbs: section
};

struct PortConfig {
  std::string name;      // unique
  std::string key_path;  // the entry it came from ("ports[1]"); `count` makes several per entry
  Backend backend = Backend::kLoopback;
  MacAddress mac;
  Ipv4Address ipv4;
  std::optional<Ipv6Address> ipv6;
  bool mac_derived = false;  // address chosen by the loader (see docs/configuration.md)
  bool ipv4_derived = false;
  bool ipv6_derived = false;
  // The MAC address frames leaving this port are sent to, when the device under test is a router
  // (an L3 hop) rather than a switch: every frame goes to it, whatever port it is for. nullopt =
  // the destination port's own MAC (an L2 device, or the fabric twin). Only DPDK ports without a
  // back-to-back peer take it.
  std::optional<MacAddress> next_hop_mac;
  uint64_t speed_bps = 100'000'000'000;
  uint32_t mtu = 4200;  // IP MTU of the link, as on a Linux netdev
  uint16_t vlan = 0;    // 802.1Q VLAN id; 0 = untagged
  PortQos qos;
  // How this port's responders take data that arrives out of order; nullopt = transport.receiver.
  // On a hardware RNIC it says what the NIC's firmware does (etwire does not set it), for
  // `run --predict`'s twin of the port.
  std::optional<Receiver> receiver;
  // The emulator (emulators[].name) whose process drives this port; "" with no emulators section.
  std::string emulator;
  // The first QP number the port gives on the wire; nullopt = mapping.addressing.qpn_base.
  std::optional<uint32_t> qpn_base;
  DpdkPortSettings dpdk;
  VerbsPortSettings verbs;
};

// `dpdk:` — process-wide DPDK settings, used when any port has backend dpdk.
struct DpdkEalConfig {
  std::vector<std::string> eal_args;  // passed to rte_eal_init after the program name
  uint32_t mbufs = 16383;             // per port mempool size (2^n - 1 is the efficient size)
  uint32_t mbuf_cache = 256;
  uint16_t burst = 32;  // packets per rx/tx burst
  bool present = false;
};

}  // namespace etwire::config
