// What the in-process DPDK tests share. The EAL starts once per process, with one set of
// arguments: every test of this binary asks for it here, and skips with the reason when it
// cannot start on the machine.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include "nic/dpdk/eal.h"
#include "nic/frame/wire_directory.h"

namespace etwire::nic::dpdk::testing {

// A connection's route between 10.0.0.1 (MAC 02:..:01, the requester) and 10.0.0.2 (02:..:02).
inline WireRoute route_between(const WireEnd& requester, const WireEnd& responder) {
  WireRoute route;
  route.requester = requester;
  route.responder = responder;
  route.forward.src_mac = {2, 0, 0, 0, 0, 1};
  route.forward.dst_mac = {2, 0, 0, 0, 0, 2};
  route.forward.src_ip = {10, 0, 0, 1};
  route.forward.dst_ip = {10, 0, 0, 2};
  route.backward = route.forward;
  route.backward.src_mac = route.forward.dst_mac;
  route.backward.dst_mac = route.forward.src_mac;
  route.backward.src_ip = route.forward.dst_ip;
  route.backward.dst_ip = route.forward.src_ip;
  return route;
}

inline const std::optional<std::string>& eal_failure() {
  static const std::optional<std::string> failure = []() -> std::optional<std::string> {
    try {
      start_eal({"--no-pci", "--no-huge", "--no-shconf", "-m", "512", "-l", "0", "--no-telemetry",
                 "--log-level=warning", "--vdev=net_null0"});
      return std::nullopt;
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
  }();
  return failure;
}

}  // namespace etwire::nic::dpdk::testing
