// Typed reading of one YAML value against the schema: integers, numbers, booleans, sizes, rates,
// durations, addresses and names. Each reader either stores the value and returns true, or
// reports what was expected (with the value it got) and returns false, leaving `out` alone.
// Internal to control/.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "config/addresses.h"
#include "config/enum_names.h"
#include "control/load/document_context.h"
#include "control/load/nearest_name.h"

namespace etwire::control {

// How a value is shown in "got ...": "\"big\"", "a list", "a section", "nothing".
std::string describe_value(const YAML::Node& node);

bool read_text(DocumentContext& ctx, const YAML::Node& node, const std::string& path,
               std::string& out);
bool read_bool(DocumentContext& ctx, const YAML::Node& node, const std::string& path, bool& out);
bool read_integer(DocumentContext& ctx, const YAML::Node& node, const std::string& path,
                  int64_t min, int64_t max, int64_t& out);

template <class T>
bool read_integer(DocumentContext& ctx, const YAML::Node& node, const std::string& path,
                  int64_t min, int64_t max, T& out) {
  int64_t value = 0;
  if (!read_integer(ctx, node, path, min, max, value)) return false;
  out = static_cast<T>(value);
  return true;
}

// A real number, as a decimal ("0.5", "1e-3") or a ratio ("5/1024").
struct RealRange {
  double min = 0;
  double max = std::numeric_limits<double>::max();
  bool min_open = false;  // true: the value must be strictly above min
};
bool read_real(DocumentContext& ctx, const YAML::Node& node, const std::string& path,
               RealRange range, double& out);

bool read_bytes(DocumentContext& ctx, const YAML::Node& node, const std::string& path, uint64_t min,
                uint64_t max, uint64_t& out);
bool read_rate(DocumentContext& ctx, const YAML::Node& node, const std::string& path, uint64_t min,
               uint64_t max, uint64_t& out);
bool read_duration(DocumentContext& ctx, const YAML::Node& node, const std::string& path,
                   uint64_t min, uint64_t max, uint64_t& out);

bool read_mac(DocumentContext& ctx, const YAML::Node& node, const std::string& path,
              config::MacAddress& out);
bool read_ipv4(DocumentContext& ctx, const YAML::Node& node, const std::string& path,
               config::Ipv4Address& out);
bool read_ipv6(DocumentContext& ctx, const YAML::Node& node, const std::string& path,
               config::Ipv6Address& out);

// What each reader accepts, as the JSON Schema says it (schema_recorder.h).
ExpectedValue expected_integer(int64_t min, int64_t max);
ExpectedValue expected_real(RealRange range);
ExpectedValue expected_bytes(uint64_t min, uint64_t max);
ExpectedValue expected_rate(uint64_t min, uint64_t max);
ExpectedValue expected_duration(uint64_t min, uint64_t max);
// kText, kBoolean, kMac, kIpv4, kIpv6, kSection, kList and kAny.
ExpectedValue expected_plain(ValueKind kind);
template <class E>
ExpectedValue expected_choice(config::NameTable<E> table) {
  ExpectedValue value = expected_plain(ValueKind::kChoice);
  for (const auto& entry : table) value.names.emplace_back(entry.name);  // aliases too
  value.description = "one of";
  for (const auto& name : config::canonical_names(table)) value.description += " " + name;
  return value;
}

// One of a fixed set of names; a near miss is suggested.
void report_bad_name(DocumentContext& ctx, const YAML::Node& node, const std::string& path,
                     const std::vector<std::string>& allowed, std::string_view what);

template <class E>
bool read_choice(DocumentContext& ctx, const YAML::Node& node, const std::string& path,
                 config::NameTable<E> table, E& out) {
  if (ctx.recording()) ctx.expect(path, expected_choice(table));
  std::string text;
  if (!read_text(ctx, node, path, text)) return false;
  if (auto value = config::parse_named(table, text)) {
    out = *value;
    return true;
  }
  report_bad_name(ctx, node, path, config::canonical_names(table), "");
  return false;
}

}  // namespace etwire::control
