#include "control/check/config_checks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <map>
#include <set>

#include "common/rate.h"
#include "control/check/check_reporter.h"
#include "control/check/collnet_checks.h"
#include "control/check/port_backend_checks.h"
#include "control/load/key_path.h"
#include "control/load/nearest_name.h"
#include "nic/frame_size.h"

namespace etwire::control {

namespace {

class Checker : private CheckReporter {
 public:
  Checker(const config::RunConfig& config, const SourceMap& where, Diagnostics& out)
      : CheckReporter(where, out), config_(config) {
    for (const auto& port : config.ports) port_names_.push_back(port.name);
  }

  void port_reference(const std::string& name, const std::string& path) {
    if (config_.find_port(name)) return;
    error(Problem::kBadReference, path,
          fmt::format("no port named \"{}\" in ports{}", name, did_you_mean(name, port_names_)));
  }

  void references() {
    for (const auto& item : config_.fabric.port_overrides) {
      port_reference(item.port, child_path(item.key_path, "port"));
    }
  }

  // NCCL's graph names a channel's NICs by device number, which the ring layout takes for the GPU
  // of that number: true where GPU k is on NIC k, not under a topology that moves them.
  void graph_and_topology() {
    if (!config_.collectives.ring_graph) return;
    for (const config::JobMapping& mapping : config_.mapping.jobs) {
      const config::ServerTopology* topology = mapping.hosts.topology.get();
      if (topology == nullptr || topology->is_identity()) continue;
      error(Problem::kInconsistent, "collectives.graph",
            fmt::format("job \"{}\"'s topology ({}) does not put GPU k on NIC k, and a graph's "
                        "NICs are not mapped through a topology (not built): leave out one of "
                        "them",
                        mapping.job, mapping.hosts.topology_file));
    }
  }

  // Ports made by one entry (`count`) share its settings: problems with them are reported once,
  // naming the whole range.
  std::vector<std::pair<const config::PortConfig*, std::string>> entries() const {
    std::vector<std::pair<const config::PortConfig*, std::string>> out;
    for (size_t i = 0; i < config_.ports.size(); ++i) {
      const config::PortConfig& port = config_.ports[i];
      size_t last = i;
      while (last + 1 < config_.ports.size() && config_.ports[last + 1].key_path == port.key_path) {
        ++last;
      }
      out.emplace_back(&port, last == i ? fmt::format("port \"{}\"", port.name)
                                        : fmt::format("ports \"{}\" to \"{}\"", port.name,
                                                      config_.ports[last].name));
      i = last;
    }
    return out;
  }

  // Two ports on one device would fight over it. Devices are an emulator server's own: the
  // processes of a split run may each have a device of the same address.
  void devices() {
    std::map<std::pair<std::string, std::string>, std::string> seen;
    for (const auto& port : config_.ports) {
      std::string device;
      std::string key;
      if (port.backend == config::Backend::kDpdk) {
        if (!port.dpdk.vdev.empty()) {
          device = "dpdk vdev " + port.dpdk.vdev.substr(0, port.dpdk.vdev.find(','));
          key = "dpdk.vdev";
        } else if (!port.dpdk.pci.empty()) {
          device = "dpdk PCI device " + port.dpdk.pci;
          key = "dpdk.pci";
        } else if (port.dpdk.port_id) {
          device = fmt::format("dpdk port id {}", *port.dpdk.port_id);
          key = "dpdk.port_id";
        }
      } else if (port.backend == config::Backend::kVerbs && !port.verbs.device.empty()) {
        device = fmt::format("verbs device {} port {}", port.verbs.device, port.verbs.port);
        key = "verbs.device";
      }
      if (device.empty()) continue;
      auto [it, inserted] = seen.emplace(std::make_pair(port.emulator, device), port.name);
      if (!inserted) {
        error(Problem::kDuplicate, child_path(port.key_path, key),
              fmt::format(
                  "port \"{}\" uses {}, which port \"{}\" already uses{}", port.name, device,
                  it->second,
                  port.emulator.empty() ? "" : fmt::format(" on emulator \"{}\"", port.emulator)));
      }
    }
  }

  // Back-to-back cabling is symmetric and joins two dpdk ports.
  void peers() {
    for (const auto& port : config_.ports) {
      if (port.backend != config::Backend::kDpdk || port.dpdk.peer.empty()) continue;
      const std::string at = child_path(child_path(port.key_path, "dpdk"), "peer");
      const config::PortConfig* peer = config_.find_port(port.dpdk.peer);
      if (peer == nullptr) {
        error(Problem::kBadReference, at,
              fmt::format("port \"{}\": peer \"{}\" is not a port of this configuration", port.name,
                          port.dpdk.peer));
      } else if (peer->name == port.name) {
        error(Problem::kInconsistent, at,
              fmt::format("port \"{}\" cannot be its own peer; leave peer out for a net_ring "
                          "port looped to itself",
                          port.name));
      } else if (peer->backend != config::Backend::kDpdk) {
        error(Problem::kInconsistent, at,
              fmt::format("port \"{}\": peer \"{}\" uses the {} backend; back-to-back "
                          "cabling joins two dpdk ports",
                          port.name, peer->name, config::backend_name(peer->backend)));
      } else if (peer->dpdk.peer != port.name) {
        error(Problem::kInconsistent, at,
              fmt::format("port \"{}\" names \"{}\" as its peer, but \"{}\" {}; cabling is "
                          "symmetric: set its dpdk.peer to \"{}\"",
                          port.name, peer->name, peer->name,
                          peer->dpdk.peer.empty() ? std::string("names no peer")
                                                  : fmt::format("names \"{}\"", peer->dpdk.peer),
                          port.name));
      } else if (config::is_ring_device(port.dpdk) != config::is_ring_device(peer->dpdk)) {
        error(Problem::kInconsistent, at,
              fmt::format("port \"{}\" and its peer \"{}\" must both be net_ring devices or "
                          "neither: etwire wires ring devices to each other itself",
                          port.name, peer->name));
      }
    }
  }

  void addresses() {
    std::map<std::string, std::string> macs;
    std::map<std::string, std::string> ipv4s;
    std::map<std::string, std::string> ipv6s;
    auto claim = [&](std::map<std::string, std::string>& seen, const std::string& address,
                     const config::PortConfig& port, const char* key, const char* kind,
                     bool derived) {
      auto [it, inserted] = seen.emplace(address, port.name);
      if (inserted) return;
      error(Problem::kDuplicate, derived ? port.key_path : child_path(port.key_path, key),
            fmt::format("{} {} of port \"{}\"{} is already the address of port \"{}\"", kind,
                        address, port.name, derived ? " (derived)" : "", it->second));
    };
    for (const auto& port : config_.ports) {
      claim(macs, port.mac.to_string(), port, "mac", "MAC address", port.mac_derived);
      claim(ipv4s, port.ipv4.to_string(), port, "ipv4", "IPv4 address", port.ipv4_derived);
      if (port.ipv6) {
        claim(ipv6s, port.ipv6->to_string(), port, "ipv6", "IPv6 address", port.ipv6_derived);
      }
    }
  }

  // With an emulators section every port names the one whose process drives it.
  void port_emulator(const config::PortConfig& port, const std::string& name) {
    const auto& emulators = config_.emulators;
    const std::string at = child_path(port.key_path, "emulator");
    const std::string& located = where().contains(at) ? at : port.key_path;
    if (port.emulator.empty()) {
      if (!emulators.empty()) {
        error(Problem::kMissing, located,
              fmt::format("{}: names no emulator: with an emulators section every port says "
                          "whose process drives it (emulator: NAME)",
                          name));
      }
      return;
    }
    if (std::any_of(emulators.begin(), emulators.end(),
                    [&](const auto& e) { return e.name == port.emulator; })) {
      return;
    }
    std::vector<std::string> names;
    for (const auto& e : emulators) names.push_back(e.name);
    error(Problem::kBadReference, located,
          emulators.empty()
              ? fmt::format("{}: names emulator \"{}\", but there is no emulators section", name,
                            port.emulator)
              : fmt::format("{}: names emulator \"{}\", which is not one of {}", name,
                            port.emulator, fmt::join(names, ", ")));
  }

  // The emulators' MPI ranks are 0 .. n-1, one each, and each drives a port.
  void emulators() {
    const auto& emulators = config_.emulators;
    // The fabric twin lives in one process: its ports cannot be split between emulators.
    if (emulators.size() > 1) {
      for (const auto& port : config_.ports) {
        if (!on_fabric_twin(config_, port)) continue;
        error(Problem::kBackend, "emulators",
              fmt::format("{} emulators, but port \"{}\" is cabled into the fabric twin, which "
                          "lives in one process: a run across emulator processes needs dpdk or "
                          "verbs ports cabled to a real device",
                          emulators.size(), port.name));
        break;
      }
    }
    // A receiver in another process tells a message's collective only by its immediate.
    if (emulators.size() > 1 && config_.transport.op != config::RdmaOp::kWriteWithImmediate) {
      error(Problem::kInconsistent, "transport.op",
            fmt::format("{} emulators, but transport.op is {}: a receiver in another emulator "
                        "process tells which collective a message belongs to only by its "
                        "immediate, which only write-with-imm carries",
                        emulators.size(), config::rdma_op_name(config_.transport.op)));
    }
    for (const auto& emulator : emulators) {
      if (emulator.rank >= emulators.size()) {
        error(Problem::kInconsistent, child_path(emulator.key_path, "rank"),
              fmt::format("emulator \"{}\" has MPI rank {}, but {} emulator{} take ranks 0 .. {}",
                          emulator.name, emulator.rank, emulators.size(),
                          emulators.size() == 1 ? "" : "s", emulators.size() - 1));
      }
      const bool drives = std::any_of(config_.ports.begin(), config_.ports.end(),
                                      [&](const auto& p) { return p.emulator == emulator.name; });
      if (!drives) {
        warning(Problem::kInconsistent, emulator.key_path,
                fmt::format("emulator \"{}\" drives no port: its process would only wait",
                            emulator.name));
      }
    }
  }

  // A run drives one kind of port: the data plane is the backend's (and the clock with it).
  void one_backend() {
    if (config_.ports.empty()) return;
    const config::PortConfig& first = config_.ports.front();
    for (const auto& port : config_.ports) {
      if (port.backend == first.backend) continue;
      error(Problem::kBackend, child_path(port.key_path, "backend"),
            fmt::format("port \"{}\" uses backend {}, but port \"{}\" uses backend {}: a run "
                        "drives one backend, on one clock (loopback ports on the virtual clock, "
                        "dpdk and verbs ports each with their own devices on the wall clock)",
                        port.name, config::backend_name(port.backend), first.name,
                        config::backend_name(first.backend)));
      return;
    }
  }

  void path_mtu() {
    const config::TransportConfig& t = config_.transport;
    for (const auto& port : config_.ports) {
      if (t.pmtu + config::kRoceHeaderAllowance <= port.mtu) continue;
      if (t.pmtu_auto) continue;  // auto picks a fitting value
      error(Problem::kInconsistent, "transport.pmtu",
            fmt::format("path MTU {} needs a port MTU of at least {} (payload + {} bytes of "
                        "headers), but port \"{}\" has MTU {}: the largest path MTU it carries "
                        "is {}",
                        t.pmtu, t.pmtu + config::kRoceHeaderAllowance, config::kRoceHeaderAllowance,
                        port.name, port.mtu, config::largest_path_mtu(port.mtu)));
      return;
    }
  }

  // A frame larger than a shaper's bucket would never leave its port. The largest frame counted
  // as the worst case of any port: IPv6, tagged, with RETH and ImmDt.
  void shapers() {
    const uint32_t largest = config_.transport.pmtu + nic::data_packet_overhead({6, true}) +
                             nic::kRethBytes + nic::kImmediateBytes;
    auto check = [&](const config::Shaper& shaper, const std::string& path) {
      if (!shaper.shapes() || shaper.burst_bytes >= largest) return;
      error(Problem::kInconsistent, path + ".shaper.burst",
            fmt::format("a burst of {} bytes is smaller than a frame at path MTU {} (up to {} "
                        "bytes on the wire): such a frame would never leave the shaper",
                        shaper.burst_bytes, config_.transport.pmtu, largest));
    };
    check(config_.fabric.shaper, "fabric");
    for (const auto& item : config_.fabric.port_overrides) {
      // An override that gives no shaper of its own was judged as the fabric's.
      if (item.shaper.burst_bytes != config_.fabric.shaper.burst_bytes) {
        check(item.shaper, item.key_path);
      }
    }
  }

  void ip_family() {
    if (config_.transport.ip_version != 6) return;
    for (const auto& port : config_.ports) {
      if (!port.ipv6) {
        error(Problem::kMissing, child_path(port.key_path, "ipv6"),
              fmt::format("transport.ip_version is 6 but port \"{}\" has no IPv6 address",
                          port.name));
      }
    }
  }

  void retransmission() {
    const config::TransportConfig& t = config_.transport;
    if (!t.retransmission_model_set || config_.verbs.rnic != config::RnicKind::kHardware) return;
    for (const auto& port : config_.ports) {
      if (port.backend != config::Backend::kVerbs) continue;
      error(Problem::kBackend, "transport.retransmission",
            fmt::format("port \"{}\" is a hardware RNIC, which retransmits as its firmware is "
                        "set (on NVIDIA NICs adaptive retransmission is ROCE_ACCL "
                        "roce_adp_retrans_en, set with mlxreg); etwire sets only the QP's timeout "
                        "and retry count: leave transport.retransmission, "
                        "adaptive_first_timeout and naks_count_as_retries out, or run the "
                        "software RNIC (verbs.rnic: software)",
                        port.name));
      return;
    }
  }

  // A hardware RNIC puts its own source port on its packets (from the QP's flow label), and
  // takes out-of-order data as its firmware is set.
  void hardware_rnic_transport() {
    if (config_.verbs.rnic != config::RnicKind::kHardware) return;
    const config::TransportConfig& t = config_.transport;
    const auto first_rnic = std::find_if(config_.ports.begin(), config_.ports.end(), [](auto& p) {
      return p.backend == config::Backend::kVerbs;
    });
    if (first_rnic == config_.ports.end()) return;
    if (t.entropy.mode != config::EntropyMode::kPerQp) {
      error(Problem::kBackend, "transport.entropy.mode",
            fmt::format("port \"{}\" is a hardware RNIC, which chooses the UDP source port of "
                        "its packets itself (from the QP's flow label): etwire cannot spray its "
                        "entropy; leave transport.entropy out, or run the software RNIC "
                        "(verbs.rnic: software)",
                        first_rnic->name));
    }
    if (t.receiver != config::Receiver::kGoBackN) {
      error(Problem::kBackend, "transport.receiver",
            fmt::format("port \"{}\" is a hardware RNIC, which places out-of-order data or not "
                        "as its firmware is set (on NVIDIA NICs with adaptive routing on, see "
                        "mlxreg); etwire does not set it: leave transport.receiver out (a "
                        "port's receiver can say what its NIC does, for run --predict), or run "
                        "the software RNIC (verbs.rnic: software)",
                        first_rnic->name));
    }
    for (const config::PortConfig& port : config_.ports) {
      if (port.backend != config::Backend::kVerbs || !port.receiver) continue;
      warning(Problem::kBackend, child_path(port.key_path, "receiver"),
              fmt::format("port \"{}\" is a hardware RNIC: receiver {} says what its firmware "
                          "does, which etwire neither sets nor reads; run --predict's twin of "
                          "the port receives that way",
                          port.name, config::receiver_name(*port.receiver)));
    }
  }

  void dcqcn() {
    const config::DcqcnConfig& d = config_.transport.dcqcn;
    if (!d.enabled || config_.ports.empty()) return;
    const config::PortConfig* slowest = &config_.ports.front();
    for (const auto& port : config_.ports) {
      if (port.speed_bps < slowest->speed_bps) slowest = &port;
    }
    if (d.min_rate_bps > slowest->speed_bps) {
      error(
          Problem::kInconsistent, "transport.dcqcn.min_rate",
          fmt::format("min_rate {} is above the speed of port \"{}\" ({})",
                      format_rate(d.min_rate_bps), slowest->name, format_rate(slowest->speed_bps)));
    }
    if (d.rate_on_first_cnp_bps > slowest->speed_bps) {
      error(Problem::kInconsistent, "transport.dcqcn.rate_on_first_cnp",
            fmt::format("rate_on_first_cnp {} is above the speed of port \"{}\" ({})",
                        format_rate(d.rate_on_first_cnp_bps), slowest->name,
                        format_rate(slowest->speed_bps)));
    }
    if (d.additive_increase_bps > d.hyper_increase_bps) {
      warning(Problem::kInconsistent, "transport.dcqcn.additive_increase",
              fmt::format("additive_increase ({}) is above hyper_increase ({}): hyper increase "
                          "would slow recovery down",
                          format_rate(d.additive_increase_bps), format_rate(d.hyper_increase_bps)));
    }
  }

  void fabric(const SectionPresence& present) {
    bool any_loopback =
        std::any_of(config_.ports.begin(), config_.ports.end(),
                    [this](const config::PortConfig& p) { return on_fabric_twin(config_, p); });
    if (!any_loopback) {
      if (present.fabric) {
        warning(Problem::kBackend, "fabric",
                "ignored by this run: the fabric twin serves loopback ports and the software "
                "RNIC, and this run has neither (dpdk and verbs ports are cabled to the real "
                "device under test); `run --predict` uses it as the twin of that device");
      }
      return;
    }
    const config::FabricConfig& f = config_.fabric;
    if (f.pfc.enabled) {
      std::set<uint8_t> lossless(f.pfc.priorities.begin(), f.pfc.priorities.end());
      for (const auto& port : config_.ports) {
        if (!on_fabric_twin(config_, port) || lossless.count(port.qos.data.priority) > 0) {
          continue;
        }
        warning(Problem::kInconsistent, child_path(port.key_path, "qos.data.priority"),
                fmt::format("port \"{}\" sends data on priority {}, which fabric.pfc.priorities "
                            "does not make lossless",
                            port.name, port.qos.data.priority));
        break;
      }
    }
    if (f.topology != config::Topology::kSingleSwitch && f.rails.nics_per_host == 0 &&
        f.leaf_spine.ports_per_leaf > 0) {
      size_t loopback = static_cast<size_t>(std::count_if(
          config_.ports.begin(), config_.ports.end(),
          [this](const config::PortConfig& p) { return on_fabric_twin(config_, p); }));
      if (loopback <= f.leaf_spine.ports_per_leaf) {
        warning(Problem::kInconsistent, "fabric.leaf_spine.ports_per_leaf",
                fmt::format("all {} loopback ports fit on one leaf ({} per leaf): no traffic "
                            "crosses the spines",
                            loopback, f.leaf_spine.ports_per_leaf));
      }
    }
    if (f.trimming.enabled) {
      for (const auto& port : config_.ports) {
        if (!on_fabric_twin(config_, port) || port.qos.data.priority != f.trimming.priority) {
          continue;
        }
        warning(Problem::kInconsistent, "fabric.trimming.priority",
                fmt::format("port \"{}\" sends data on priority {} too: trimmed headers wait "
                            "behind the queue they were cut from instead of overtaking it",
                            port.name, port.qos.data.priority));
        break;
      }
    }
    for (const auto& item : f.port_overrides) {
      const config::PortConfig* port = config_.find_port(item.port);
      if (port && !on_fabric_twin(config_, *port)) {
        warning(Problem::kBackend, child_path(item.key_path, "port"),
                fmt::format("ignored: port \"{}\" uses backend {}, not the fabric twin", item.port,
                            config::backend_name(port->backend)));
      }
    }
  }

  void dpdk(const SectionPresence& present) {
    bool any_dpdk = std::any_of(
        config_.ports.begin(), config_.ports.end(),
        [](const config::PortConfig& p) { return p.backend == config::Backend::kDpdk; });
    if (present.dpdk && !any_dpdk) {
      warning(Problem::kBackend, "dpdk", "ignored: no port uses backend dpdk");
    }
    bool any_verbs = std::any_of(
        config_.ports.begin(), config_.ports.end(),
        [](const config::PortConfig& p) { return p.backend == config::Backend::kVerbs; });
    if (config_.verbs.present && !any_verbs) {
      warning(Problem::kBackend, "verbs", "ignored: no port uses backend verbs");
    }
  }

  void telemetry() {
    // Queue samples come from the twin's switches, which only loopback runs have.
    if (config_.telemetry.record.queue_sample_interval_ns > 0) {
      const auto other = std::find_if(
          config_.ports.begin(), config_.ports.end(),
          [](const config::PortConfig& p) { return p.backend != config::Backend::kLoopback; });
      if (other != config_.ports.end()) {
        error(Problem::kBackend, "telemetry.record.queue_sample_interval",
              fmt::format("samples the fabric twin's switch queues, which only loopback ports "
                          "have: port \"{}\" uses backend {} (not built for the software RNIC "
                          "either); leave it out or 0",
                          other->name, config::backend_name(other->backend)));
      }
    }
    // Each process numbers the collective instances it sees; the rows would not join
    // collectives.csv, whose numbers are the merged run's.
    if (config_.telemetry.record.nodes.value_or(false) && config_.emulators.size() > 1) {
      error(Problem::kBackend, "telemetry.record.nodes",
            "nodes.csv is not built for a run split between emulator processes; leave it out or "
            "false");
    }
    if (!config_.telemetry.record.pcap) return;
    if (config_.emulators.size() > 1) {
      warning(Problem::kBackend, "telemetry.record.pcap",
              "a run split between emulator processes captures the ports of process 0 only "
              "(the process that writes the results)");
    }
    bool all_verbs = std::all_of(
        config_.ports.begin(), config_.ports.end(),
        [](const config::PortConfig& p) { return p.backend == config::Backend::kVerbs; });
    if (all_verbs && !config_.ports.empty()) {
      warning(Problem::kBackend, "telemetry.record.pcap",
              "verbs ports cannot capture their frames (the NIC builds them): no capture "
              "file is written");
    }
  }

 private:
  const config::RunConfig& config_;
  std::vector<std::string> port_names_;
};

}  // namespace

void check_config(const config::RunConfig& config, const SectionPresence& present,
                  const SourceMap& where, Diagnostics& out) {
  Checker check(config, where, out);
  check.references();
  check.graph_and_topology();
  for (const auto& [port, name] : check.entries()) {
    check_port_backend(config, *port, name, where, out);
    check.port_emulator(*port, name);
  }
  check.devices();
  check.peers();
  check.addresses();
  check.one_backend();
  check.emulators();
  check.path_mtu();
  check.shapers();
  check.ip_family();
  check.retransmission();
  check.hardware_rnic_transport();
  check.dcqcn();
  check.fabric(present);
  check.dpdk(present);
  check.telemetry();
  check_collnet(config, where, out);
}

}  // namespace etwire::control
