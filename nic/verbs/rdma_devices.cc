#include "nic/verbs/rdma_devices.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "nic/verbs/verbs_api.h"

namespace etwire::nic::verbs {

namespace {

struct ContextDeleter {
  void operator()(ibv_context* context) const { ibv_close_device(context); }
};

RdmaPort query_port(ibv_context* context, const std::string& device, uint32_t number) {
  ibv_port_attr attr{};
  if (ibv_query_port(context, static_cast<uint8_t>(number), &attr) != 0) {
    throw std::runtime_error(
        fmt::format("{} port {}: cannot query the port: {}", device, number, std::strerror(errno)));
  }
  RdmaPort port;
  port.number = number;
  port.state = port_state_name(attr.state);
  port.link_layer = link_layer_name(attr.link_layer);
  port.active_mtu = mtu_bytes(attr.active_mtu);
  port.speed_bps = port_speed_bps(attr.active_speed, attr.active_width);
  for (int index = 0; index < attr.gid_tbl_len; ++index) {
    ibv_gid_entry entry{};
    // Entries not in use report an error (ENODATA): skip them.
    if (ibv_query_gid_ex(context, number, static_cast<uint32_t>(index), &entry, 0) != 0) continue;
    GidEntry gid;
    gid.index = entry.gid_index;
    gid.type = gid_type_name(entry.gid_type);
    std::memcpy(gid.gid.data(), entry.gid.raw, gid.gid.size());
    if (!gid_address(gid.gid)) continue;
    port.gids.push_back(gid);
  }
  return port;
}

}  // namespace

DeviceList::DeviceList() {
  errno = 0;
  devices_ = ibv_get_device_list(&count_);
  if (devices_ == nullptr) {
    throw NoRdmaDevice(fmt::format("no RDMA device: libibverbs cannot list devices ({}){}",
                                   std::strerror(errno),
                                   errno == ENOSYS ? "; this kernel has no RDMA support" : ""));
  }
  if (count_ == 0) {
    ibv_free_device_list(devices_);
    throw NoRdmaDevice("no RDMA device: libibverbs found none on this machine");
  }
}

DeviceList::~DeviceList() {
  ibv_free_device_list(devices_);
}

std::string DeviceList::name(int index) const {
  return ibv_get_device_name(devices_[index]);
}

std::vector<RdmaDevice> list_rdma_devices() {
  const DeviceList list;
  std::vector<RdmaDevice> devices;
  for (int d = 0; d < list.size(); ++d) {
    RdmaDevice device;
    device.name = list.name(d);
    std::unique_ptr<ibv_context, ContextDeleter> context(ibv_open_device(list[d]));
    if (!context) {
      throw std::runtime_error(
          fmt::format("{}: cannot open the device: {}", device.name, std::strerror(errno)));
    }
    ibv_device_attr attr{};
    if (ibv_query_device(context.get(), &attr) != 0) {
      throw std::runtime_error(
          fmt::format("{}: cannot query the device: {}", device.name, std::strerror(errno)));
    }
    for (uint32_t port = 1; port <= attr.phys_port_cnt; ++port) {
      device.ports.push_back(query_port(context.get(), device.name, port));
    }
    devices.push_back(std::move(device));
  }
  return devices;
}

uint64_t port_speed_bps(uint8_t active_speed, uint8_t active_width) {
  // Lane rates of the verbs speed codes, in Mb/s.
  uint64_t lane_mbps = 0;
  switch (active_speed) {
    case 1:
      lane_mbps = 2'500;  // SDR
      break;
    case 2:
      lane_mbps = 5'000;  // DDR
      break;
    case 4:
    case 8:
      lane_mbps = 10'000;  // QDR, FDR10
      break;
    case 16:
      lane_mbps = 14'000;  // FDR
      break;
    case 32:
      lane_mbps = 25'000;  // EDR
      break;
    case 64:
      lane_mbps = 50'000;  // HDR
      break;
    case 128:
      lane_mbps = 100'000;  // NDR
      break;
    default:
      return 0;
  }
  uint64_t lanes = 0;
  switch (active_width) {
    case 1:
      lanes = 1;
      break;
    case 2:
      lanes = 4;
      break;
    case 4:
      lanes = 8;
      break;
    case 8:
      lanes = 12;
      break;
    case 16:
      lanes = 2;
      break;
    default:
      return 0;
  }
  return lane_mbps * lanes * 1'000'000;
}

uint32_t mtu_bytes(int mtu_code) {
  return mtu_code >= 1 && mtu_code <= 5 ? 128u << mtu_code : 0;
}

std::optional<std::string> gid_address(const std::array<uint8_t, 16>& gid) {
  bool zero = true;
  for (uint8_t byte : gid) zero = zero && byte == 0;
  if (zero) return std::nullopt;
  const bool v4_mapped =
      std::all_of(gid.begin(), gid.begin() + 10, [](uint8_t b) { return b == 0; }) &&
      gid[10] == 0xff && gid[11] == 0xff;
  char text[INET6_ADDRSTRLEN] = {};
  if (v4_mapped) {
    inet_ntop(AF_INET, gid.data() + 12, text, sizeof(text));
  } else {
    inet_ntop(AF_INET6, gid.data(), text, sizeof(text));
  }
  return std::string(text);
}

std::string devices_to_text(const std::vector<RdmaDevice>& devices) {
  std::string out;
  for (const RdmaDevice& device : devices) {
    for (const RdmaPort& port : device.ports) {
      out +=
          fmt::format("{} port {}: {}, {}, active MTU {}, {}\n", device.name, port.number,
                      port.state, port.link_layer, port.active_mtu,
                      port.speed_bps == 0 ? std::string("speed unknown")
                                          : fmt::format("{} Gb/s", port.speed_bps / 1'000'000'000));
      for (const GidEntry& gid : port.gids) {
        out += fmt::format("  gid {:>3}  {:<8} {}\n", gid.index, gid.type,
                           gid_address(gid.gid).value_or("-"));
      }
    }
  }
  return out;
}

}  // namespace etwire::nic::verbs
