#include <fmt/format.h>

#include <map>

#include "control/load/section_parsers.h"

namespace etwire::control {

namespace {

constexpr int64_t kMaxPortsPerEntry = 4096;
constexpr int64_t kMaxDpdkQueues = 16;
constexpr uint64_t kMinPortSpeed = 1'000'000;             // 1 Mb/s
constexpr uint64_t kMaxPortSpeed = 3'200'000'000'000ull;  // 3.2 Tb/s
constexpr uint64_t kMinQpRateLimit = 1'000'000;           // 1 Mb/s, as for a port
constexpr int64_t kMinPortMtu = 576;   // the smallest IPv4 MTU every host must accept
constexpr int64_t kMaxPortMtu = 9216;  // the largest jumbo MTU common switches take
constexpr int64_t kMaxEmulators = 4096;

void parse_traffic_class(MapReader& section, config::TrafficClass& out) {
  section.integer("dscp", out.dscp, 0, 63);
  section.integer("priority", out.priority, 0, 7);
  section.choice("ecn", out.ecn, config::ecn_codepoint_names());
  section.finish();
}

void parse_qos(MapReader& section, config::PortQos& out) {
  MapReader data = section.section("data");
  parse_traffic_class(data, out.data);
  MapReader ack = section.section("ack");
  parse_traffic_class(ack, out.ack);
  MapReader cnp = section.section("cnp");
  parse_traffic_class(cnp, out.cnp);
  section.finish();
}

// Thresholds left out follow the queue size (read before this); their order and their fit in
// the queue are checked with the other port settings (config_checks.cc).
void parse_dpdk_pfc(MapReader& section, uint16_t rx_descriptors, config::DpdkPfcSettings& out) {
  out.present = section.node().IsMap();
  section.boolean("enabled", out.enabled);
  if (!section.integer("xoff", out.xoff, 1, 32768)) {
    out.xoff = static_cast<uint16_t>(rx_descriptors - rx_descriptors / 4);
  }
  if (!section.integer("xon", out.xon, 0, 32767)) {
    out.xon = static_cast<uint16_t>(out.xoff * 2 / 3);
  }
  section.integer("quanta", out.quanta, 1, 65535);
  section.finish();
}

void parse_dpdk_port(MapReader& section, uint64_t speed_bps, config::DpdkPortSettings& out) {
  out.present = section.node().IsMap();
  uint16_t port_id = 0;
  if (section.integer("port_id", port_id, 0, 65535)) out.port_id = port_id;
  section.text("vdev", out.vdev);
  section.text("pci", out.pci);
  section.integer("queues", out.queues, 1, kMaxDpdkQueues);
  for (const auto& item : section.list("lcores")) {
    uint32_t lcore = 0;
    if (read_integer(section.context(), item.node, item.path, 0, 1023, lcore)) {
      out.lcores.push_back(lcore);
    }
  }
  section.integer("rx_descriptors", out.rx_descriptors, 64, 32768);
  if (!section.integer("tx_descriptors", out.tx_descriptors, 64, 32768)) {
    out.tx_descriptors = config::default_tx_descriptors(speed_bps);
  }
  uint32_t lcore = 0;
  if (section.integer("lcore", lcore, 0, 1023)) out.lcore = lcore;
  section.text("peer", out.peer);
  MapReader pfc = section.section("pfc");
  parse_dpdk_pfc(pfc, out.rx_descriptors, out.pfc);
  section.finish();
}

void parse_verbs_port(MapReader& section, config::VerbsPortSettings& out) {
  out.present = section.node().IsMap();
  section.text("device", out.device);
  section.integer("port", out.port, 1, 255);
  uint32_t gid = 0;
  if (section.integer("gid_index", gid, 0, 255)) out.gid_index = gid;
  uint64_t rate = 0;
  if (section.rate("rate_limit", rate, kMinQpRateLimit, kMaxPortSpeed)) out.rate_limit_bps = rate;
  section.choice("dcqcn", out.dcqcn, config::verbs_dcqcn_names());
  section.finish();
}

// "{i}" in a device name becomes the port's index within its entry, so one entry with `count`
// can name distinct devices (net_ring{i}, mlx5_{i}).
std::string substitute_index(const std::string& text, size_t index) {
  std::string out = text;
  for (size_t at = out.find("{i}"); at != std::string::npos; at = out.find("{i}", at)) {
    out.replace(at, 3, std::to_string(index));
  }
  return out;
}

struct ExplicitAddresses {
  bool mac = false;
  bool ipv4 = false;
  bool ipv6 = false;
};

// An entry's explicit address steps by one per port; a step that leaves the unicast range (or
// the address space) is the entry's mistake, reported at its key, naming the first port it hits.
void report_stepped_address(MapReader& section, std::string_view key, const std::string& port,
                            size_t index, const std::string& base, const std::string& stepped,
                            std::string_view expected) {
  section.context().error(
      Problem::kBadValue, section.get(key), section.key_path(key),
      stepped.empty()
          ? fmt::format("port {} would get {} + {}, past the last address: an entry's address "
                        "steps by one per port, so choose a base that leaves room for them",
                        port, base, index)
          : fmt::format("port {} would get {} ({} + {}), which is not {}: an entry's address "
                        "steps by one per port, so choose a base that leaves room for them",
                        port, stepped, base, index, expected));
}

void parse_port_entry(MapReader& section, std::vector<config::PortConfig>& out,
                      std::map<std::string, std::string>& names) {
  DocumentContext& ctx = section.context();
  config::PortConfig port;
  port.key_path = section.path();
  std::string name;
  section.require("name", "the port's name, used by mapping and in results");
  section.text("name", name);
  int64_t count = 1;
  section.integer("count", count, 1, kMaxPortsPerEntry);
  section.choice("backend", port.backend, config::backend_names());
  ExplicitAddresses given;
  given.mac =
      section.has("mac") && read_mac(ctx, section.get("mac"), section.key_path("mac"), port.mac);
  given.ipv4 = section.has("ipv4") &&
               read_ipv4(ctx, section.get("ipv4"), section.key_path("ipv4"), port.ipv4);
  config::Ipv6Address ipv6;
  given.ipv6 =
      section.has("ipv6") && read_ipv6(ctx, section.get("ipv6"), section.key_path("ipv6"), ipv6);
  if (given.ipv6) port.ipv6 = ipv6;
  config::MacAddress next_hop;
  if (section.has("next_hop_mac") &&
      read_mac(ctx, section.get("next_hop_mac"), section.key_path("next_hop_mac"), next_hop)) {
    port.next_hop_mac = next_hop;
  }
  section.rate("speed", port.speed_bps, kMinPortSpeed, kMaxPortSpeed);
  section.integer("mtu", port.mtu, kMinPortMtu, kMaxPortMtu);
  section.integer("vlan", port.vlan, 0, 4094);
  uint32_t qpn_base = 0;
  if (section.integer("qpn_base", qpn_base, 2, kMaxQpn)) port.qpn_base = qpn_base;
  section.text("emulator", port.emulator);
  MapReader qos = section.section("qos");
  parse_qos(qos, port.qos);
  config::Receiver receiver = config::Receiver::kGoBackN;
  if (section.choice("receiver", receiver, config::receiver_names())) port.receiver = receiver;
  MapReader dpdk = section.section("dpdk");
  parse_dpdk_port(dpdk, port.speed_bps, port.dpdk);
  MapReader verbs = section.section("verbs");
  parse_verbs_port(verbs, port.verbs);
  section.finish();
  if (name.empty()) return;

  for (int64_t i = 0; i < count; ++i) {
    config::PortConfig copy = port;
    size_t index = static_cast<size_t>(i);
    copy.name = count == 1 ? name : name + std::to_string(index);
    // Explicit addresses step by one per port of the entry; derived ones are filled in later.
    copy.mac_derived = !given.mac;
    copy.ipv4_derived = !given.ipv4;
    copy.ipv6_derived = !given.ipv6;
    if (given.mac) {
      const std::optional<config::MacAddress> mac = port.mac.plus(index);
      if (!mac || mac->is_multicast() || mac->is_zero()) {
        report_stepped_address(section, "mac", copy.name, index, port.mac.to_string(),
                               mac ? mac->to_string() : "", "a unicast MAC address");
        // Reported once, at the first port it fails for; this port and the later ones take
        // derived addresses, so the mistake is not reported again as duplicates.
        given.mac = false;
        copy.mac_derived = true;
      } else {
        copy.mac = *mac;
      }
    }
    if (given.ipv4) {
      const std::optional<config::Ipv4Address> ip = port.ipv4.plus(index);
      if (!ip || !ip->is_unicast()) {
        report_stepped_address(section, "ipv4", copy.name, index, port.ipv4.to_string(),
                               ip ? ip->to_string() : "", "a unicast IPv4 address");
        given.ipv4 = false;
        copy.ipv4_derived = true;
      } else {
        copy.ipv4 = *ip;
      }
    }
    if (given.ipv6) {
      const std::optional<config::Ipv6Address> ip = port.ipv6->plus(index);
      if (!ip || !ip->is_unicast()) {
        report_stepped_address(section, "ipv6", copy.name, index, port.ipv6->to_string(),
                               ip ? ip->to_string() : "", "a unicast IPv6 address");
        given.ipv6 = false;
        copy.ipv6_derived = true;
      } else {
        copy.ipv6 = *ip;
      }
    }
    if (copy.dpdk.port_id) copy.dpdk.port_id = static_cast<uint16_t>(*copy.dpdk.port_id + i);
    copy.dpdk.vdev = substitute_index(copy.dpdk.vdev, index);
    copy.dpdk.pci = substitute_index(copy.dpdk.pci, index);
    copy.verbs.device = substitute_index(copy.verbs.device, index);
    auto [it, inserted] = names.emplace(copy.name, copy.key_path);
    if (!inserted) {
      ctx.error(Problem::kDuplicate, section.get("name"), section.key_path("name"),
                fmt::format("port name \"{}\" is already used by {}", copy.name, it->second));
      continue;
    }
    out.push_back(std::move(copy));
  }
}

}  // namespace

void parse_ports(MapReader& root, std::vector<config::PortConfig>& out) {
  DocumentContext& ctx = root.context();
  if (!root.require("ports", "a list of ports, each with at least a name")) return;
  auto entries = root.list("ports");
  if (entries.empty() && root.get("ports").IsSequence()) {
    ctx.error(Problem::kMissing, root.get("ports"), "ports",
              "the list is empty: a run needs at least one port");
  }
  std::map<std::string, std::string> names;
  for (const auto& entry : entries) {
    MapReader section(ctx, entry.node, entry.path);
    parse_port_entry(section, out, names);
  }
}

void parse_dpdk_eal(MapReader& section, config::DpdkEalConfig& out) {
  DocumentContext& ctx = section.context();
  out.present = section.node().IsMap();
  for (const auto& item : section.list("eal_args")) {
    std::string arg;
    if (read_text(ctx, item.node, item.path, arg)) out.eal_args.push_back(arg);
  }
  section.integer("mbufs", out.mbufs, 1023, 1 << 24);
  section.integer("mbuf_cache", out.mbuf_cache, 0, 512);
  section.integer("burst", out.burst, 1, 512);
  section.finish();
}

void parse_verbs(MapReader& section, config::VerbsConfig& out) {
  out.present = section.node().IsMap();
  section.choice("rnic", out.rnic, config::rnic_kind_names());
  // Up to 2 GiB, the largest message an RC work request can carry.
  section.bytes("max_message", out.max_message, 256, uint64_t{1} << 31);
  section.integer("queue_depth", out.queue_depth, 1, 32768);
  section.integer("start_psn", out.start_psn, 0, (1 << 24) - 1);
  section.integer("rnr_retry", out.rnr_retry, 0, 7);
  section.finish();
}

void parse_emulators(MapReader& root, std::vector<config::EmulatorConfig>& out) {
  DocumentContext& ctx = root.context();
  std::map<std::string, std::string> names;
  std::map<uint32_t, std::string> ranks;
  const auto entries = root.list("emulators");
  for (size_t i = 0; i < entries.size(); ++i) {
    MapReader section(ctx, entries[i].node, entries[i].path);
    config::EmulatorConfig emulator;
    emulator.key_path = entries[i].path;
    emulator.rank = static_cast<uint32_t>(i);
    section.require("name", "the emulator's name, which ports[].emulator uses");
    section.text("name", emulator.name);
    section.integer("rank", emulator.rank, 0, kMaxEmulators - 1);
    section.text("host", emulator.host);
    section.finish();
    if (emulator.name.empty()) continue;
    if (auto [it, fresh] = names.emplace(emulator.name, emulator.key_path); !fresh) {
      ctx.error(
          Problem::kDuplicate, section.get("name"), section.key_path("name"),
          fmt::format("emulator name \"{}\" is already used by {}", emulator.name, it->second));
      continue;
    }
    if (auto [it, fresh] = ranks.emplace(emulator.rank, emulator.name); !fresh) {
      ctx.error(Problem::kDuplicate, entries[i].node, emulator.key_path,
                fmt::format("emulator \"{}\" has MPI rank {}, which emulator \"{}\" has "
                            "already: one process per emulator",
                            emulator.name, emulator.rank, it->second));
      continue;
    }
    out.push_back(std::move(emulator));
  }
}

}  // namespace etwire::control
