#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "common/exact_bytes.h"
#include "common/units.h"
#include "control/load/device_profile.h"
#include "control/load/infragraph_import.h"
#include "control/load/section_parsers.h"

namespace etwire::control {

namespace {

constexpr uint64_t kMaxBuffer = 1ull << 36;  // 64 GiB: far above any switch

// Which of two compared keys an ordering error points at: one given with --set (the likely
// change), else the second when the file gives it, else the first.
std::string pick_key(MapReader& section, const char* first, const char* second) {
  if (section.has(first) && section.overridden(first)) return first;
  if (section.has(second)) return second;
  return first;
}

// Reads the keys present over `out` (which holds the defaults, or the fabric-wide values for a
// port override), then checks the thresholds are in order.
void parse_ecn(MapReader& section, config::EcnMarking& out) {
  DocumentContext& ctx = section.context();
  section.boolean("enabled", out.enabled);
  bool given = section.bytes("kmin", out.kmin_bytes, 0, kMaxBuffer);
  given = section.bytes("kmax", out.kmax_bytes, 1, kMaxBuffer) || given;
  section.real("pmax", out.pmax, RealRange{0, 1, true});
  section.choice("mark_at", out.mark_at, config::ecn_mark_point_names());
  section.real("average_weight", out.average_weight, RealRange{0, 1, true});
  section.choice("spacing", out.spacing, config::ecn_spacing_names());
  section.boolean("gentle", out.gentle);
  if (out.average_weight < 1 && out.mark_at != config::EcnMarkPoint::kEnqueue &&
      (section.has("average_weight") || section.has("mark_at"))) {
    const std::string key = section.has("average_weight") ? "average_weight" : "mark_at";
    ctx.error(Problem::kInconsistent, section.get(key), section.key_path(key),
              fmt::format("average_weight {} averages the depth packets find as they join, as RED "
                          "does: it needs mark_at: enqueue",
                          out.average_weight));
  }
  // Inherited values (a port override that sets neither) were checked where they were set.
  if (given && out.kmin_bytes > out.kmax_bytes) {
    std::string key = pick_key(section, "kmin", "kmax");
    ctx.error(Problem::kInconsistent, section.get(key), section.key_path(key),
              fmt::format("ECN thresholds out of order: kmin ({}) must not exceed kmax ({})",
                          format_bytes_exact(out.kmin_bytes), format_bytes_exact(out.kmax_bytes)));
  }
  section.finish();
}

void parse_pfc(MapReader& section, config::PfcConfig& out) {
  DocumentContext& ctx = section.context();
  section.boolean("enabled", out.enabled);
  bool given = section.bytes("xoff", out.xoff_bytes, 1, kMaxBuffer);
  given = section.bytes("xon", out.xon_bytes, 0, kMaxBuffer) || given;
  if (section.has("priorities")) {
    out.priorities.clear();
    for (const auto& item : section.list("priorities")) {
      uint8_t priority = 0;
      if (!read_integer(ctx, item.node, item.path, 0, 7, priority)) continue;
      if (std::find(out.priorities.begin(), out.priorities.end(), priority) !=
          out.priorities.end()) {
        ctx.error(Problem::kDuplicate, item.node, item.path,
                  fmt::format("priority {} is listed twice", priority));
        continue;
      }
      out.priorities.push_back(priority);
    }
  }
  if (given && out.xon_bytes >= out.xoff_bytes) {
    std::string key = pick_key(section, "xon", "xoff");
    ctx.error(Problem::kInconsistent, section.get(key), section.key_path(key),
              fmt::format("PFC thresholds out of order: xon ({}) must be below xoff ({})",
                          format_bytes_exact(out.xon_bytes), format_bytes_exact(out.xoff_bytes)));
  }
  section.finish();
}

// A tier's uplinks: an oversubscription ratio or a link speed, one following from the other.
void parse_tier_capacity(MapReader& section, double& oversubscription, uint64_t& uplink_speed_bps) {
  const bool ratio = section.real("oversubscription", oversubscription, RealRange{0, 1024, true});
  if (section.rate("uplink_speed", uplink_speed_bps, 1'000'000, 3'200'000'000'000ull) && ratio) {
    section.context().error(Problem::kInconsistent, section.get("uplink_speed"),
                            section.key_path("uplink_speed"),
                            "give either oversubscription or uplink_speed, not both (one follows "
                            "from the other)");
  }
}

void parse_leaf_spine(MapReader& section, config::LeafSpineConfig& out) {
  section.integer("ports_per_leaf", out.ports_per_leaf, 1, 4096);
  section.integer("spines", out.spines, 1, 1024);
  parse_tier_capacity(section, out.oversubscription, out.uplink_speed_bps);
  section.integer("links", out.links, 1, 256);
  section.choice("ecmp", out.ecmp, config::ecmp_hash_names());
  section.integer("ecmp_seed", out.ecmp_seed, 0, std::numeric_limits<int64_t>::max());
  section.finish();
}

// A key that names a mode's setting while no tier uses that mode would not act: an error.
void refuse_unused_setting(MapReader& section, std::string_view key, config::LoadBalancing mode,
                           const config::LoadBalancingConfig& out) {
  if (!section.has(key) || out.uses(mode)) return;
  section.context().error(Problem::kInconsistent, section.get(key), section.key_path(key),
                          fmt::format("{} applies to load balancing mode {}, which no tier uses",
                                      key, config::load_balancing_name(mode)));
}

void parse_load_balancing(MapReader& section, config::Topology topology,
                          config::LoadBalancingConfig& out) {
  DocumentContext& ctx = section.context();
  config::LoadBalancing every = config::LoadBalancing::kEcmp;
  if (section.choice("mode", every, config::load_balancing_names())) {
    out.leaf = out.spine = out.super_spine = every;
  }
  section.choice("leaf", out.leaf, config::load_balancing_names());
  section.choice("spine", out.spine, config::load_balancing_names());
  if (section.choice("super_spine", out.super_spine, config::load_balancing_names()) &&
      topology != config::Topology::kThreeTier) {
    ctx.error(Problem::kInconsistent, section.get("super_spine"), section.key_path("super_spine"),
              fmt::format("super-spines exist in topology three-tier, not {}",
                          config::topology_name(topology)));
  }
  section.choice("spray", out.spray, config::spray_order_names());
  section.duration("flowlet_gap", out.flowlet_gap_ns, 1, kSecond);
  section.bytes("adaptive_bias", out.adaptive_bias_bytes, 0, kMaxBuffer);
  refuse_unused_setting(section, "spray", config::LoadBalancing::kSpray, out);
  refuse_unused_setting(section, "flowlet_gap", config::LoadBalancing::kFlowlet, out);
  refuse_unused_setting(section, "adaptive_bias", config::LoadBalancing::kAdaptive, out);
  section.finish();
}

void parse_trimming(MapReader& section, config::TrimmingConfig& out) {
  section.boolean("enabled", out.enabled);
  section.integer("priority", out.priority, 0, 7);
  section.bytes("queue", out.queue_bytes, 128, kMaxBuffer);
  for (const char* key : {"priority", "queue"}) {
    if (!section.has(key) || out.enabled) continue;
    section.context().error(Problem::kInconsistent, section.get(key), section.key_path(key),
                            fmt::format("{} applies to trimmed headers, and trimming is off: "
                                        "give enabled: true",
                                        key));
  }
  section.finish();
}

void parse_three_tier(MapReader& section, config::ThreeTierConfig& out) {
  section.integer("leaves_per_pod", out.leaves_per_pod, 1, 4096);
  section.integer("super_spines", out.super_spines, 1, 1024);
  section.integer("links", out.links, 1, 256);
  parse_tier_capacity(section, out.oversubscription, out.uplink_speed_bps);
  section.finish();
}

void parse_rails(MapReader& section, config::RailsConfig& out) {
  DocumentContext& ctx = section.context();
  section.integer("nics_per_host", out.nics_per_host, 1, 64);
  const bool planes = section.integer("planes", out.planes, 1, 64);
  if (planes && out.planes > 1 && out.nics_per_host == 0) {
    ctx.error(Problem::kInconsistent, section.get("planes"), section.key_path("planes"),
              "planes are made of rails: give nics_per_host too");
  } else if (out.nics_per_host > 0 && out.nics_per_host % out.planes != 0) {
    ctx.error(Problem::kInconsistent, section.get("planes"), section.key_path("planes"),
              fmt::format("nics_per_host ({}) is not a multiple of planes ({}): every plane "
                          "takes as many rails",
                          out.nics_per_host, out.planes));
  }
  section.finish();
}

// A shaper has no defaults that suit every device: it takes both its rate and its bucket.
void parse_shaper(MapReader& section, config::Shaper& out) {
  const bool rate = section.rate("rate", out.rate_bps, 1'000'000, 3'200'000'000'000ull);
  const bool burst = section.bytes("burst", out.burst_bytes, 64, 1ull << 30);
  if (rate || burst) {
    section.require("rate", "the rate the shaper lets through (tbf's rate)");
    section.require("burst", "the bytes its bucket holds, which leave at the link's speed");
  }
  section.finish();
}

void parse_port_override(MapReader& section, const config::FabricConfig& fabric,
                         config::FabricPortOverride& out) {
  out.key_path = section.path();
  out.ecn = fabric.ecn;
  out.pfc = fabric.pfc;
  out.propagation_delay_ns = fabric.propagation_delay_ns;
  out.drop_probability = fabric.drop_probability;
  section.require("port", "the name of the port whose link this entry changes");
  section.text("port", out.port);
  MapReader ecn = section.section("ecn");
  parse_ecn(ecn, out.ecn);
  MapReader pfc = section.section("pfc");
  parse_pfc(pfc, out.pfc);
  out.shaper = fabric.shaper;
  MapReader shaper = section.section("shaper");
  parse_shaper(shaper, out.shaper);
  section.duration("propagation_delay", out.propagation_delay_ns, 0, kSecond);
  section.real("drop_probability", out.drop_probability, RealRange{0, 1, false});
  section.finish();
}

// One fault. Every kind's keys are read (so none is reported unknown), then each key given that
// the kind does not use is an error, as is one it needs and lacks.
void parse_fault(MapReader& section, config::FabricFault& out) {
  DocumentContext& ctx = section.context();
  out.key_path = section.path();
  section.require("kind", "link-down, degrade, pfc-storm or lossy");
  section.choice("kind", out.kind, config::fault_kind_names());
  section.duration("at", out.at_ns, 0, kHourNs);
  const bool until = section.duration("until", out.until_ns, 1, kHourNs);
  section.text("link", out.link);
  section.text("port", out.port);
  section.duration("detection", out.detection_ns, 0, kHourNs);
  section.rate("speed", out.speed_bps, 1'000'000, 3'200'000'000'000ull);
  section.integer("priority", out.priority, 0, 7);
  section.real("drop_probability", out.drop_probability, RealRange{0, 1, false});
  section.real("corrupt_probability", out.corrupt_probability, RealRange{0, 1, false});
  section.real("reorder_probability", out.reorder_probability, RealRange{0, 1, false});

  using config::FaultKind;
  const std::string_view kind = config::fault_kind_name(out.kind);
  struct Key {
    const char* name;
    bool used;
    bool needed;
    const char* what;
  };
  const bool lossy = out.kind == FaultKind::kLossy;
  const Key keys[] = {
      {"link", out.kind != FaultKind::kPfcStorm, out.kind != FaultKind::kPfcStorm,
       "the link: a switch port's name (leaf0/spine1) or a port's"},
      {"port", out.kind == FaultKind::kPfcStorm, out.kind == FaultKind::kPfcStorm,
       "the port that sends the pauses"},
      {"until", true, out.kind == FaultKind::kPfcStorm, "when the storm ends"},
      {"detection", out.kind == FaultKind::kLinkDown, false, ""},
      {"speed", out.kind == FaultKind::kDegrade, out.kind == FaultKind::kDegrade,
       "the link's speed while degraded"},
      {"priority", out.kind == FaultKind::kPfcStorm, false, ""},
      {"drop_probability", lossy, false, ""},
      {"corrupt_probability", lossy, false, ""},
      {"reorder_probability", lossy, false, ""},
  };
  for (const Key& key : keys) {
    if (section.has(key.name) && !key.used) {
      ctx.error(Problem::kInconsistent, section.get(key.name), section.key_path(key.name),
                fmt::format("{} does not apply to a {} fault", key.name, kind));
    } else if (key.needed) {
      section.require(key.name, key.what);
    }
  }
  if (until && out.until_ns <= out.at_ns) {
    ctx.error(Problem::kInconsistent, section.get("until"), section.key_path("until"),
              fmt::format("until ({} ns) must come after at ({} ns)", out.until_ns, out.at_ns));
  }
  if (lossy && out.drop_probability == 0 && out.corrupt_probability == 0 &&
      out.reorder_probability == 0) {
    ctx.error(Problem::kInconsistent, section.get("kind"), section.key_path("kind"),
              "a lossy fault needs drop_probability, corrupt_probability or "
              "reorder_probability above 0");
  }
  section.finish();
}

void check_against_buffer(DocumentContext& ctx, const SourceMap& where,
                          const config::FabricConfig& fabric, const std::string& path,
                          const config::EcnMarking& ecn, const config::PfcConfig& pfc) {
  uint64_t buffer = fabric.buffer.size_bytes;
  if (ecn.enabled && ecn.kmax_bytes > buffer) {
    ctx.report(
        where.make(Severity::kWarning, Problem::kInconsistent, path + ".ecn.kmax",
                   fmt::format("kmax ({}) is above the switch buffer ({}): queues drop "
                               "before marking reaches pmax",
                               format_bytes_exact(ecn.kmax_bytes), format_bytes_exact(buffer))));
  }
  if (pfc.enabled && pfc.xoff_bytes > buffer) {
    ctx.report(
        where.make(Severity::kError, Problem::kInconsistent, path + ".pfc.xoff",
                   fmt::format("xoff ({}) is above the switch buffer ({}): PFC could "
                               "never pause before the buffer overflows",
                               format_bytes_exact(pfc.xoff_bytes), format_bytes_exact(buffer))));
  }
}

// fabric.profile: the file must read as a device profile now, so that validate reports it at the
// key, before any run applies it (config_loader.cc).
void parse_profile(MapReader& section, const std::string& config_dir, std::string& out) {
  std::string text;
  if (!section.text("profile", text) || text.empty()) return;
  DocumentContext& ctx = section.context();
  const std::string key = section.key_path("profile");
  out = resolve_config_path(ctx, key, text, config_dir);
  try {
    read_device_profile(out);
  } catch (const DeviceProfileError& e) {
    ctx.error(Problem::kBadReference, section.get("profile"), key,
              fmt::format("not a usable device profile: {}", e.what()));
  }
}

}  // namespace

void parse_fabric(MapReader& section, const std::string& config_dir, config::FabricConfig& out) {
  DocumentContext& ctx = section.context();
  import_infragraph(section, config_dir, out);
  parse_profile(section, config_dir, out.profile);
  // Beside fabric.infragraph the shape keys are errors already: none is required.
  const bool from_graph = section.has("infragraph");
  section.choice("topology", out.topology, config::topology_names());
  section.duration("propagation_delay", out.propagation_delay_ns, 0, kSecond);
  section.duration("switch_latency", out.switch_latency_ns, 0, kSecond);
  section.duration("sender_jitter", out.sender_jitter_ns, 0, kSecond);
  MapReader buffer = section.section("buffer");
  buffer.bytes("size", out.buffer.size_bytes, 1024, kMaxBuffer);
  buffer.choice("mode", out.buffer.mode, config::buffer_mode_names());
  buffer.bytes("ingress_reserve", out.buffer.ingress_reserve_bytes, 0, kMaxBuffer);
  buffer.integer("queue_packets", out.buffer.queue_packets, 0, 1u << 24);
  if (buffer.real("alpha", out.buffer.alpha, RealRange{0, 1024, true}) &&
      out.buffer.mode != config::BufferMode::kDynamic) {
    ctx.error(Problem::kInconsistent, buffer.get("alpha"), buffer.key_path("alpha"),
              fmt::format("alpha bounds the shares of a dynamic buffer, not of a {} one: give "
                          "mode: dynamic",
                          config::buffer_mode_name(out.buffer.mode)));
  }
  buffer.finish();
  MapReader ecn = section.section("ecn");
  parse_ecn(ecn, out.ecn);
  MapReader pfc = section.section("pfc");
  parse_pfc(pfc, out.pfc);
  MapReader shaper = section.section("shaper");
  parse_shaper(shaper, out.shaper);
  MapReader leaf_spine = section.section("leaf_spine");
  parse_leaf_spine(leaf_spine, out.leaf_spine);
  const bool clos = out.topology != config::Topology::kSingleSwitch;
  if (clos && out.leaf_spine.ports_per_leaf == 0 && !from_graph) {
    leaf_spine.require("ports_per_leaf", "how many ports attach to each leaf switch");
  }
  MapReader three_tier = section.section("three_tier");
  parse_three_tier(three_tier, out.three_tier);
  if (out.topology == config::Topology::kThreeTier) {
    if (out.three_tier.leaves_per_pod == 0 && !from_graph) {
      three_tier.require("leaves_per_pod", "how many leaves each pod holds");
    }
  } else if (section.has("three_tier")) {
    ctx.error(Problem::kInconsistent, section.get("three_tier"), section.key_path("three_tier"),
              fmt::format("fabric.three_tier applies to topology three-tier, not {}",
                          config::topology_name(out.topology)));
  }
  MapReader rails = section.section("rails");
  parse_rails(rails, out.rails);
  if (!clos && section.has("rails")) {
    ctx.error(Problem::kInconsistent, section.get("rails"), section.key_path("rails"),
              "rails need leaves: give topology leaf-spine or three-tier");
  }
  if (out.topology == config::Topology::kThreeTier && out.rails.nics_per_host > 0 &&
      out.three_tier.leaves_per_pod > 0 &&
      out.three_tier.leaves_per_pod % out.rails.nics_per_host != 0) {
    ctx.error(Problem::kInconsistent, three_tier.get("leaves_per_pod"),
              three_tier.key_path("leaves_per_pod"),
              fmt::format("leaves_per_pod ({}) is not a multiple of fabric.rails.nics_per_host "
                          "({}): a pod holds whole groups of rail leaves",
                          out.three_tier.leaves_per_pod, out.rails.nics_per_host));
  }
  MapReader load_balancing = section.section("load_balancing");
  if (section.has("load_balancing") && !clos) {
    ctx.error(Problem::kInconsistent, section.get("load_balancing"),
              section.key_path("load_balancing"),
              "a single switch has one path to each port, nothing to balance: give topology "
              "leaf-spine or three-tier");
  } else {
    parse_load_balancing(load_balancing, out.topology, out.load_balancing);
  }
  MapReader trimming = section.section("trimming");
  parse_trimming(trimming, out.trimming);
  section.real("drop_probability", out.drop_probability, RealRange{0, 1, false});
  section.integer("partitions", out.partitions, 1, 4096);
  check_against_buffer(ctx, ctx.source_map(), out, section.path(), out.ecn, out.pfc);

  std::map<std::string, std::string> seen;
  for (const auto& item : section.list("port_overrides")) {
    MapReader entry(ctx, item.node, item.path);
    config::FabricPortOverride override_entry;
    parse_port_override(entry, out, override_entry);
    if (override_entry.port.empty()) continue;
    auto [it, inserted] = seen.emplace(override_entry.port, item.path);
    if (!inserted) {
      ctx.error(Problem::kDuplicate, entry.get("port"), entry.key_path("port"),
                fmt::format("port \"{}\" already has an override at {}", override_entry.port,
                            it->second));
      continue;
    }
    bool own_ecn = override_entry.ecn.kmax_bytes != out.ecn.kmax_bytes;
    bool own_pfc = override_entry.pfc.xoff_bytes != out.pfc.xoff_bytes;
    if (own_ecn || own_pfc) {
      check_against_buffer(ctx, ctx.source_map(), out, item.path, override_entry.ecn,
                           override_entry.pfc);
    }
    out.port_overrides.push_back(std::move(override_entry));
  }
  for (const auto& item : section.list("faults")) {
    MapReader entry(ctx, item.node, item.path);
    config::FabricFault fault;
    parse_fault(entry, fault);
    out.faults.push_back(std::move(fault));
  }
  section.finish();
}

}  // namespace etwire::control
