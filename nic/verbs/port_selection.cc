#include "nic/verbs/port_selection.h"

#include <fmt/format.h>

#include <cstring>

#include "nic/verbs/rdma_devices.h"

namespace etwire::nic::verbs {

namespace {

std::array<uint8_t, 16> gid_bytes(const ibv_gid& gid) {
  std::array<uint8_t, 16> bytes{};
  std::memcpy(bytes.data(), gid.raw, bytes.size());
  return bytes;
}

// The port's GID table as `show_gids` lists it, for a refusal.
std::string gid_table_text(VerbsDevice& device, uint8_t port, int entries) {
  std::string out;
  for (int index = 0; index < entries; ++index) {
    ibv_gid_entry entry{};
    if (device.query_gid(port, static_cast<uint32_t>(index), entry) != 0) continue;
    const auto address = gid_address(gid_bytes(entry.gid));
    if (!address) continue;
    out += fmt::format("\n  gid {:>3}  {:<8} {}", index, gid_type_name(entry.gid_type), *address);
  }
  return out.empty() ? std::string("\n  (no GID in use)") : out;
}

}  // namespace

SelectedPort select_port(VerbsDevice& device, uint8_t port, std::optional<uint32_t> gid_index,
                         const std::array<uint8_t, 16>& address, const std::string& address_text,
                         uint32_t path_mtu) {
  const std::string where = fmt::format("{} port {}", device.name(), port);
  SelectedPort selected;
  if (const int error = device.query_port(port, selected.attr); error != 0) {
    throw PortRefused(
        fmt::format("{}: ibv_query_port failed: {} (does the device have this port? "
                    "`etwire devices` lists them)",
                    where, std::strerror(error)));
  }
  const ibv_port_attr& attr = selected.attr;
  if (attr.state != IBV_PORT_ACTIVE) {
    throw PortRefused(
        fmt::format("{} is not up: ibv_query_port reports state {} ({}); bring its "
                    "link up before the run",
                    where, static_cast<int>(attr.state), port_state_name(attr.state)));
  }
  if (attr.link_layer != IBV_LINK_LAYER_ETHERNET) {
    throw PortRefused(
        fmt::format("{}: link layer {}: etwire drives RoCE v2, which needs an "
                    "Ethernet port",
                    where, link_layer_name(attr.link_layer)));
  }
  const uint32_t active = mtu_bytes(attr.active_mtu);
  if (active < path_mtu) {
    throw PortRefused(fmt::format(
        "{}: active MTU {} (ibv_query_port) is below the run's path MTU {} (transport.pmtu); "
        "raise the netdev's MTU to at least {} or lower transport.pmtu",
        where, active, path_mtu, path_mtu + 96));
  }
  auto matches = [&](const ibv_gid_entry& entry) {
    return entry.gid_type == IBV_GID_TYPE_ROCE_V2 && gid_bytes(entry.gid) == address;
  };
  if (gid_index) {
    if (const int error = device.query_gid(port, *gid_index, selected.gid); error != 0) {
      throw PortRefused(fmt::format(
          "{}: GID {} (verbs.gid_index): ibv_query_gid_ex failed: {}; "
          "the port's GIDs:{}",
          where, *gid_index, std::strerror(error), gid_table_text(device, port, attr.gid_tbl_len)));
    }
    if (!matches(selected.gid)) {
      throw PortRefused(fmt::format(
          "{}: GID {} (verbs.gid_index) is {} {}, but the port is configured as RoCE v2 {}; "
          "pick the entry that is (or leave verbs.gid_index out to have it found). The port's "
          "GIDs:{}",
          where, *gid_index, gid_type_name(selected.gid.gid_type),
          gid_address(gid_bytes(selected.gid.gid)).value_or("(empty)"), address_text,
          gid_table_text(device, port, attr.gid_tbl_len)));
    }
    return selected;
  }
  for (int index = 0; index < attr.gid_tbl_len; ++index) {
    ibv_gid_entry entry{};
    if (device.query_gid(port, static_cast<uint32_t>(index), entry) != 0) continue;
    if (!matches(entry)) continue;
    selected.gid = entry;
    return selected;
  }
  throw PortRefused(fmt::format(
      "{}: no RoCE v2 GID has the port's address {}: give the netdev that address, or set the "
      "port's address to one of its GIDs:{}",
      where, address_text, gid_table_text(device, port, attr.gid_tbl_len)));
}

}  // namespace etwire::nic::verbs
