// The machine's RDMA devices as a run needs to know them: each device's ports with their state,
// link layer, active MTU and speed, and each port's GID table with the type of every entry
// (RoCE v2 is what etwire's frames are) and the IP address a RoCE GID stands for. Read through
// libibverbs; `etwire devices` prints it, and the verbs backend picks a port's GID from it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

struct ibv_device;  // libibverbs'

namespace etwire::nic::verbs {

struct GidEntry {
  uint32_t index = 0;
  std::string type;  // "RoCE v2", "RoCE v1", "IB"
  std::array<uint8_t, 16> gid{};
};

struct RdmaPort {
  uint32_t number = 0;      // from 1
  std::string state;        // "active", "down", ...
  std::string link_layer;   // "Ethernet", "InfiniBand"
  uint32_t active_mtu = 0;  // bytes
  uint64_t speed_bps =
      0;  // lanes x lane rate; 0 when the device reports a code etwire does not know
  std::vector<GidEntry> gids;
};

struct RdmaDevice {
  std::string name;  // as ibv_devices lists it (mlx5_0)
  std::vector<RdmaPort> ports;
};

// No RDMA device can be used here; the message says why, in the library's words.
class NoRdmaDevice : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The devices libibverbs lists, for as long as the object lives (ibv_get_device_list). Throws
// NoRdmaDevice, with the library's reason, when it lists none.
class DeviceList {
 public:
  DeviceList();
  ~DeviceList();
  DeviceList(const DeviceList&) = delete;
  DeviceList& operator=(const DeviceList&) = delete;
  int size() const { return count_; }
  ibv_device* operator[](int index) const { return devices_[index]; }
  std::string name(int index) const;

 private:
  ibv_device** devices_ = nullptr;
  int count_ = 0;
};

// Every RDMA device, port and GID entry. Throws NoRdmaDevice when libibverbs reaches none (no
// device, or a kernel without RDMA support), std::runtime_error when a device cannot be queried.
std::vector<RdmaDevice> list_rdma_devices();

// A port's speed from the verbs codes: the lane rate of `active_speed` times the lanes of
// `active_width`. 0 for a code not in the verbs specification.
uint64_t port_speed_bps(uint8_t active_speed, uint8_t active_width);
// The active MTU in bytes for an ibv_mtu code (1 = 256 .. 5 = 4096); 0 for another code.
uint32_t mtu_bytes(int mtu_code);
// The IP address a RoCE GID stands for: dotted IPv4 for an IPv4-mapped GID (::ffff:a.b.c.d),
// else the IPv6 text; nullopt for an all-zero GID.
std::optional<std::string> gid_address(const std::array<uint8_t, 16>& gid);

// One line per port, then its GID entries, for a terminal.
std::string devices_to_text(const std::vector<RdmaDevice>& devices);

}  // namespace etwire::nic::verbs
