// One parser per top-level section of the run configuration. Each reads its section through a
// MapReader (so unknown keys, wrong types and ranges are reported with their location), fills
// the plain struct, applies defaults, and checks what can be checked within the section.
// Checks that span sections live in config_checks.h. Internal to control/.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/run_config.h"
#include "control/load/map_reader.h"
#include "control/load/nccl_dump_error.h"

namespace etwire::control {

// Bounds several sections read against.
inline constexpr uint64_t kSecond = 1'000'000'000;         // in nanoseconds, as durations read
inline constexpr uint64_t kHourNs = 3'600'000'000'000ull;  // the longest time a setting takes
inline constexpr int64_t kMaxQpn = (1 << 24) - 1;          // a QPN has 24 bits on the wire

// Paths in the file are relative to the file's directory; paths from --set are used as given
// (relative to the working directory).
std::string resolve_config_path(DocumentContext& ctx, const std::string& key_path,
                                const std::string& text, const std::string& config_dir);

// The NCCL dump `key` names (collectives.graph, hosts.topology), read with `read(path)`: its path
// (relative to the file's directory) into `file`, and what `read` makes of it; nullptr when the
// key is absent or after an error at the key (`read` throws NcclDumpError).
template <typename T, typename Read>
std::shared_ptr<const T> read_nccl_dump_key(MapReader& section, const char* key,
                                            const std::string& config_dir, std::string& file,
                                            Read read) {
  std::string text;
  if (!section.text(key, text) || text.empty()) return nullptr;
  DocumentContext& ctx = section.context();
  file = resolve_config_path(ctx, section.key_path(key), text, config_dir);
  try {
    return std::make_shared<const T>(read(file));
  } catch (const NcclDumpError& e) {
    ctx.error(Problem::kBadValue, section.get(key), section.key_path(key), e.what());
    return nullptr;
  }
}

void parse_run_settings(MapReader& section, const std::string& default_name,
                        config::RunSettings& out);
void parse_workload(MapReader& section, const std::string& config_dir, config::WorkloadConfig& out);
// `ports` is the root's "ports" list.
void parse_ports(MapReader& root, std::vector<config::PortConfig>& out);
void parse_dpdk_eal(MapReader& section, config::DpdkEalConfig& out);
// `emulators` is the root's "emulators" list.
void parse_emulators(MapReader& root, std::vector<config::EmulatorConfig>& out);
void parse_verbs(MapReader& section, config::VerbsConfig& out);
// Needs the job names to default and check `job:` references; `config_dir` resolves
// hosts.topology, which is read here.
void parse_mapping(MapReader& section, const config::WorkloadConfig& workload,
                   const std::string& config_dir, config::MappingConfig& out);
// `config_dir` resolves collectives.graph, which is read here.
void parse_collectives(MapReader& section, const std::string& config_dir,
                       config::CollectivesConfig& out);
// `some_port_out_of_order`: a port's own receiver (ports[].receiver) is out-of-order, so
// transport.out_of_order applies even when transport.receiver is go-back-n.
void parse_transport(MapReader& section, config::TransportConfig& out, bool some_port_out_of_order);
// `config_dir` resolves fabric.infragraph.
void parse_fabric(MapReader& section, const std::string& config_dir, config::FabricConfig& out);
void parse_telemetry(MapReader& section, config::TelemetryConfig& out);

}  // namespace etwire::control
