// Checks a device port before a run uses it, and picks the GID its queue pairs address with:
// the port must be up, on Ethernet (RoCE), with an active MTU that carries the run's path MTU,
// and the GID must be RoCE v2 with the port's configured IP address. Every refusal quotes what
// the device reported.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "nic/verbs/verbs_api.h"

namespace etwire::nic::verbs {

class PortRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SelectedPort {
  ibv_port_attr attr{};
  ibv_gid_entry gid{};
};

// `address` is the port's configured IP as a GID (IPv4 mapped into IPv6), `address_text` how the
// configuration wrote it. With `gid_index`, that entry must be RoCE v2 with the address; without,
// the first such entry is taken. Throws PortRefused with the reason.
SelectedPort select_port(VerbsDevice& device, uint8_t port, std::optional<uint32_t> gid_index,
                         const std::array<uint8_t, 16>& address, const std::string& address_text,
                         uint32_t path_mtu);

}  // namespace etwire::nic::verbs
