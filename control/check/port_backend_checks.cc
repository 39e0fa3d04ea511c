#include "control/check/port_backend_checks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <set>

#include "common/rate.h"
#include "control/check/backend_capabilities.h"
#include "control/check/check_reporter.h"
#include "control/load/key_path.h"
#include "nic/frame_size.h"

namespace etwire::control {

namespace {

class PortBackendChecker : private CheckReporter {
 public:
  PortBackendChecker(const config::RunConfig& config, const SourceMap& where, Diagnostics& out)
      : CheckReporter(where, out), config_(config) {}

  void backend_settings(const config::PortConfig& port, const std::string& name) {
    const std::string& at = port.key_path;
    if (port.backend == config::Backend::kDpdk) {
      int ways = (port.dpdk.port_id ? 1 : 0) + (port.dpdk.vdev.empty() ? 0 : 1) +
                 (port.dpdk.pci.empty() ? 0 : 1);
      if (ways == 0) {
        error(Problem::kBackend, port.dpdk.present ? child_path(at, "dpdk") : at,
              fmt::format("{}: backend dpdk needs a device: set dpdk.port_id, dpdk.vdev (e.g. "
                          "net_ring0) or dpdk.pci (e.g. 0000:3b:00.0)",
                          name));
      } else if (ways > 1) {
        error(Problem::kInconsistent, child_path(at, "dpdk"),
              fmt::format("{}: the device is named more than one way: give exactly one of "
                          "port_id, vdev and pci",
                          name));
      }
      dpdk_queues(port, name);
      memif_buffers(port, name);
    } else if (port.dpdk.present) {
      warning(Problem::kBackend, child_path(at, "dpdk"),
              fmt::format("ignored: {} does not use backend dpdk", name));
    }
    if (port.backend == config::Backend::kVerbs) {
      if (port.verbs.device.empty()) {
        error(Problem::kBackend, port.verbs.present ? child_path(at, "verbs") : at,
              fmt::format("{}: backend verbs needs verbs.device (e.g. mlx5_0, as ibv_devices "
                          "lists it)",
                          name));
      }
      if (port.verbs.rate_limit_bps && *port.verbs.rate_limit_bps > port.speed_bps) {
        warning(Problem::kInconsistent, child_path(at, "verbs.rate_limit"),
                fmt::format("{}: the per-QP rate limit {} is above the port's speed {}: it "
                            "never binds",
                            name, format_rate(*port.verbs.rate_limit_bps),
                            format_rate(port.speed_bps)));
      }
    } else if (port.verbs.present) {
      warning(Problem::kBackend, child_path(at, "verbs"),
              fmt::format("ignored: {} does not use backend verbs", name));
    }
  }

  // A net_memif device carries a frame in buffers of `bsize` bytes (2048 unless the vdev says).
  // With frames longer than one buffer the pair loses frames: four of four two-process runs of
  // configs/multi-host-memif.yaml without bsize ended with flows failed on retries.
  void memif_buffers(const config::PortConfig& port, const std::string& name) {
    const std::string& vdev = port.dpdk.vdev;
    if (!vdev.starts_with("net_memif")) return;
    uint64_t bsize = 2048;
    if (const size_t at = vdev.find("bsize="); at != std::string::npos) {
      bsize = std::strtoull(vdev.c_str() + at + 6, nullptr, 10);
    }
    const uint64_t frame = uint64_t{port.mtu} + nic::kEthernetHeaderBytes + nic::kVlanTagBytes;
    if (bsize >= frame) return;
    error(Problem::kInconsistent, child_path(child_path(port.key_path, "dpdk"), "vdev"),
          fmt::format("{}: the net_memif buffers hold {} bytes (bsize), less than a frame of the "
                      "port's MTU {} ({} bytes with its Ethernet header): add bsize={} to the vdev",
                      name, bsize, port.mtu, frame, std::bit_ceil(frame)));
  }

  // Every queue of a port has its own worker lcore: `lcores` lists one per queue when there are
  // several (and `lcore` is for a port of one queue).
  void dpdk_queues(const config::PortConfig& port, const std::string& name) {
    const config::DpdkPortSettings& dpdk = port.dpdk;
    const std::string at = child_path(port.key_path, "dpdk");
    const std::string lcores = child_path(at, "lcores");
    const std::string lcores_at = where().contains(lcores) ? lcores : at;
    if (dpdk.queues == 1) {
      if (!dpdk.lcores.empty()) {
        error(Problem::kInconsistent, lcores_at,
              fmt::format("{}: dpdk.lcores is for a port of several queues (dpdk.queues); a port "
                          "of one queue takes dpdk.lcore",
                          name));
      }
      return;
    }
    if (dpdk.lcore) {
      error(Problem::kInconsistent, child_path(at, "lcore"),
            fmt::format("{}: a port of {} queues runs each on its own lcore: give dpdk.lcores, "
                        "one per queue, instead of dpdk.lcore",
                        name, dpdk.queues));
    }
    if (dpdk.lcores.size() != dpdk.queues) {
      error(Problem::kInconsistent, lcores_at,
            fmt::format("{}: dpdk.queues is {}, so dpdk.lcores needs {} worker lcores, one per "
                        "queue (it has {})",
                        name, dpdk.queues, dpdk.queues, dpdk.lcores.size()));
    }
    for (size_t i = 0; i < dpdk.lcores.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (dpdk.lcores[i] != dpdk.lcores[j]) continue;
        error(Problem::kInconsistent, lcores_at,
              fmt::format("{}: lcore {} is listed twice in dpdk.lcores; each queue needs its own",
                          name, dpdk.lcores[i]));
      }
    }
    if (dpdk.pfc.enabled) {
      error(Problem::kBackend, child_path(at, "pfc"),
            fmt::format("{}: PFC generation (dpdk.pfc.enabled) watches one receive queue; it is "
                        "not available on a port of several queues",
                        name));
    }
    if (config::is_ring_device(dpdk) && !dpdk.peer.empty()) {
      const config::PortConfig* peer = config_.find_port(dpdk.peer);
      if (peer != nullptr && peer->dpdk.queues != dpdk.queues) {
        error(Problem::kInconsistent, child_path(at, "queues"),
              fmt::format("{}: a ring cable carries one ring per queue, so both ends need the "
                          "same dpdk.queues ({} here, {} on \"{}\")",
                          name, dpdk.queues, peer->dpdk.queues, peer->name));
      }
    }
  }

  // next_hop_mac addresses every frame to a router under test. The fabric twin and a back-to-back
  // cable are L2 (they deliver by the destination port's MAC), and an RNIC resolves its next hop
  // itself, so only a DPDK port facing a device takes it.
  void next_hop(const config::PortConfig& port, const std::string& name) {
    if (!port.next_hop_mac) return;
    const std::string at = child_path(port.key_path, "next_hop_mac");
    if (port.backend == config::Backend::kLoopback) {
      error(Problem::kBackend, at,
            fmt::format("{}: next_hop_mac is for a DPDK port facing a router; a loopback port is "
                        "wired to the fabric twin, whose switches forward by the destination "
                        "port's MAC (L2): leave next_hop_mac out",
                        name));
    } else if (port.backend == config::Backend::kVerbs) {
      error(Problem::kBackend, at,
            fmt::format("{}: next_hop_mac is for a DPDK port facing a router; an RDMA NIC "
                        "resolves its next hop itself (the host's neighbour table): leave "
                        "next_hop_mac out",
                        name));
    } else if (!port.dpdk.peer.empty()) {
      error(Problem::kInconsistent, at,
            fmt::format("{}: next_hop_mac is for a DPDK port facing a router, but dpdk.peer "
                        "cables it back to back to \"{}\" (L2: frames must carry the peer's own "
                        "MAC): leave out next_hop_mac or dpdk.peer",
                        name, port.dpdk.peer));
    }
  }

  // The thresholds count descriptors of the port's receive queue: they must fit in it, and
  // resuming must happen below pausing or the port would flap.
  void dpdk_pfc(const config::PortConfig& port, const std::string& name) {
    if (port.backend != config::Backend::kDpdk) return;
    const config::DpdkPortSettings& dpdk = port.dpdk;
    const std::string at = child_path(child_path(port.key_path, "dpdk"), "pfc");
    const std::string xoff = child_path(at, "xoff");
    const std::string xon = child_path(at, "xon");
    if (dpdk.pfc.xoff > dpdk.rx_descriptors) {
      error(Problem::kInconsistent, xoff,
            fmt::format("{}: dpdk.pfc.xoff ({}) is above dpdk.rx_descriptors ({}): the receive "
                        "queue never holds that many, so the port would never pause",
                        name, dpdk.pfc.xoff, dpdk.rx_descriptors));
    }
    if (dpdk.pfc.xon >= dpdk.pfc.xoff) {
      error(Problem::kInconsistent, where().contains(xon) ? xon : xoff,
            fmt::format("{}: PFC thresholds out of order: dpdk.pfc.xon ({}) must be below "
                        "dpdk.pfc.xoff ({}{})",
                        name, dpdk.pfc.xon, dpdk.pfc.xoff,
                        where().contains(xoff) ? "" : ", three quarters of rx_descriptors"));
    }
  }

  void backend_limits(const config::PortConfig& port, const std::string& name) {
    BackendLimits limits = limits_for(port);
    const auto& speeds = limits.standard_speeds;
    bool speed_ok =
        port.speed_bps >= limits.min_speed_bps && port.speed_bps <= limits.max_speed_bps &&
        (speeds.empty() || std::find(speeds.begin(), speeds.end(), port.speed_bps) != speeds.end());
    if (!speed_ok) {
      std::string allowed;
      if (speeds.empty()) {
        allowed = fmt::format("from {} to {}", format_rate(limits.min_speed_bps),
                              format_rate(limits.max_speed_bps));
      } else {
        for (uint64_t s : speeds) allowed += (allowed.empty() ? "one of " : ", ") + format_rate(s);
      }
      error(Problem::kBackend, child_path(port.key_path, "speed"),
            fmt::format("backend {} cannot run {} at {}: expected {} ({})",
                        config::backend_name(port.backend), name, format_rate(port.speed_bps),
                        allowed, limits.why));
    }
    if (port.mtu < limits.min_mtu || port.mtu > limits.max_mtu) {
      error(Problem::kBackend, child_path(port.key_path, "mtu"),
            fmt::format("backend {} cannot use MTU {} on {}: expected {} to {} ({})",
                        config::backend_name(port.backend), port.mtu, name, limits.min_mtu,
                        limits.max_mtu, limits.why));
    }
  }

 private:
  const config::RunConfig& config_;
};

}  // namespace

void check_port_backend(const config::RunConfig& config, const config::PortConfig& port,
                        const std::string& name, const SourceMap& where, Diagnostics& out) {
  PortBackendChecker check(config, where, out);
  check.backend_settings(port, name);
  check.dpdk_pfc(port, name);
  check.next_hop(port, name);
  check.backend_limits(port, name);
}

}  // namespace etwire::control
