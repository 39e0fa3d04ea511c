#include "control/resolve/config_schema.h"

#include <fmt/format.h>

#include <cctype>
#include <deque>
#include <limits>
#include <stdexcept>
#include <vector>

#include "control/load/load_options.h"
#include "control/load/schema_recorder.h"
#include "control/resolve/config_loader.h"

namespace etwire::control {

namespace {

using nlohmann::json;

// Far above the probes the configuration needs (some hundreds): a parser that kept asking for
// new keys in every probe would otherwise never let the search end.
constexpr size_t kMaxProbes = 20000;

// "fabric.faults[].kind" -> {"fabric", "faults", "[]", "kind"}.
std::vector<std::string> path_steps(const std::string& path) {
  std::vector<std::string> steps;
  std::string key;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '.' || path[i] == '[') {
      if (!key.empty()) steps.push_back(key);
      key.clear();
      if (path[i] == '[') {
        steps.emplace_back("[]");
        ++i;  // the ']' of a general path's "[]"
      }
      continue;
    }
    key += path[i];
  }
  if (!key.empty()) steps.push_back(key);
  return steps;
}

// Where a general path is in a probe, whose lists hold one element each.
json::json_pointer pointer_to(const std::string& path) {
  json::json_pointer pointer;
  for (const auto& step : path_steps(path)) pointer /= step == "[]" ? "0" : step;
  return pointer;
}

// The values that may make a parser ask for more keys than it did: the probes to read next.
std::vector<json> probe_values(const ExpectedValue& expected) {
  switch (expected.kind) {
    case ValueKind::kList:
      return {json::array({json::object()})};
    case ValueKind::kAny:
    case ValueKind::kSection:  // a section read only when present (workload)
      return {json::object()};
    case ValueKind::kBoolean:
      return {true, false};
    case ValueKind::kChoice: {
      std::vector<json> names(expected.names.begin(), expected.names.end());
      return names;
    }
    default:
      return {};
  }
}

// Reads every probe from the empty configuration on; what each parser asked is gathered in `all`.
void search(SchemaRecorder& all) {
  std::deque<json> probes{json::object()};
  size_t read = 0;
  while (!probes.empty()) {
    if (++read > kMaxProbes) {
      throw std::logic_error(
          "the configuration schema search did not end: a parser asks for "
          "new keys in every probe");
    }
    const json probe = std::move(probes.front());
    probes.pop_front();
    SchemaRecorder recorder;
    LoadOptions options;
    options.read_traces = false;
    options.schema = &recorder;
    // JSON is YAML.
    load_config_text(probe.dump(), "schema-probe.yaml", ".", options);
    for (const auto& [path, asked] : recorder.expected()) {
      const auto before = all.expected().find(path);
      const bool known = before != all.expected().end();
      const ValueKind was = known ? before->second.kind : ValueKind::kAny;
      all.expect(path, asked);
      const ExpectedValue& expected = all.expected().at(path);
      // A key asked about first and read later (require, then list) is probed again as what it
      // turned out to be; kinds only ever say more, so a key is probed at most three times.
      if (known && expected.kind == was) continue;
      for (const json& value : probe_values(expected)) {
        json next = probe;
        next[pointer_to(path)] = value;
        probes.push_back(std::move(next));
      }
    }
  }
}

// A name as the loader compares it: any case, '-' or '_'.
std::string loose_name_pattern(const std::vector<std::string>& names) {
  std::string pattern = "^(?:";
  for (size_t n = 0; n < names.size(); ++n) {
    if (n > 0) pattern += '|';
    for (char c : names[n]) {
      if (std::isalpha(static_cast<unsigned char>(c))) {
        pattern += fmt::format("[{}{}]", static_cast<char>(std::tolower(c)),
                               static_cast<char>(std::toupper(c)));
      } else if (c == '-' || c == '_') {
        pattern += "[-_]";
      } else if (std::isalnum(static_cast<unsigned char>(c))) {
        pattern += c;
      } else {
        pattern += fmt::format("\\{}", c);
      }
    }
  }
  return pattern + ")$";
}

void set_range(json& schema, const ExpectedValue& expected) {
  if (expected.min > std::numeric_limits<double>::lowest()) {
    schema[expected.min_open ? "exclusiveMinimum" : "minimum"] = expected.min;
  }
  if (expected.max < std::numeric_limits<double>::max()) schema["maximum"] = expected.max;
}

// Integral bounds print as integers (a bound of 2^63-1 or 2^64-1 is no bound).
void set_integral_range(json& schema, const ExpectedValue& expected) {
  if (expected.min > -9.2e18) schema["minimum"] = static_cast<int64_t>(expected.min);
  if (expected.max < 9.2e18) schema["maximum"] = static_cast<int64_t>(expected.max);
}

json value_schema(const ExpectedValue& expected) {
  json schema = json::object();
  switch (expected.kind) {
    case ValueKind::kAny:
      break;
    case ValueKind::kSection:
      schema["type"] = "object";
      break;
    case ValueKind::kList:
      schema["type"] = "array";
      break;
    case ValueKind::kText:
      // yaml-cpp hands every scalar over as text: `name: 7` is a name.
      schema["type"] = {"string", "number", "boolean"};
      break;
    case ValueKind::kBoolean:
      schema["anyOf"] = {
          {{"type", "boolean"}},
          {{"type", "string"},
           {"pattern", loose_name_pattern({"true", "false", "yes", "no", "on", "off"})}}};
      break;
    case ValueKind::kInteger:
      schema["type"] = {"integer", "string"};
      schema["pattern"] = "^\\s*[-+]?(?:0[xX][0-9a-fA-F]+|[0-9]+)\\s*$";
      set_integral_range(schema, expected);
      break;
    case ValueKind::kReal:
      // A decimal or a ratio ("5/1024").
      schema["type"] = {"number", "string"};
      schema["pattern"] = "^\\s*[-+0-9.eE]+\\s*(?:/\\s*[-+0-9.eE]+\\s*)?$";
      set_range(schema, expected);
      break;
    case ValueKind::kBytes:
      schema["type"] = {"integer", "string"};
      schema["pattern"] = "^\\s*[0-9.]+\\s*(?:[KMGTkmgt]\\s*(?:[Ii]\\s*[Bb]|[Bb])?|[Bb])?\\s*$";
      set_integral_range(schema, expected);
      break;
    case ValueKind::kRate:
      schema["type"] = {"integer", "string"};
      schema["pattern"] = "^\\s*[0-9.]+\\s*[kKmMgGtT]?(?:bps|b/s|bits?/s|Bps|B/s)?\\s*$";
      set_integral_range(schema, expected);
      break;
    case ValueKind::kDuration:
      // A bare number only for 0: "5" alone could be any unit.
      schema["type"] = {"integer", "string"};
      schema["pattern"] = "^\\s*(?:[0-9.]+\\s*(?:ns|us|\u00b5s|\u03bcs|ms|s)|0)\\s*$";
      schema["minimum"] = 0;
      schema["maximum"] = 0;
      break;
    case ValueKind::kChoice:
      // The names as the loader prints them first, for completion; any case and '_' too.
      schema["anyOf"] = {{{"enum", expected.names}},
                         {{"type", "string"}, {"pattern", loose_name_pattern(expected.names)}}};
      break;
    case ValueKind::kMac:
      schema["type"] = "string";
      break;
    case ValueKind::kIpv4:
      schema["type"] = "string";
      schema["format"] = "ipv4";
      break;
    case ValueKind::kIpv6:
      schema["type"] = "string";
      schema["format"] = "ipv6";
      break;
  }
  // `key:` with nothing (null) leaves the key at its default, as if absent.
  if (schema.contains("type")) {
    json types = schema["type"].is_array() ? schema["type"] : json::array({schema["type"]});
    types.push_back("null");
    schema["type"] = types;
  } else if (schema.contains("anyOf")) {
    schema["anyOf"].push_back({{"type", "null"}});
  }
  if (!expected.description.empty()) schema["description"] = expected.description;
  return schema;
}

// The schema at a step of the tree: a section's keys, a list's element or a value.
json& node_at(json& root, const std::vector<std::string>& steps) {
  json* at = &root;
  for (const auto& step : steps) {
    if (step == "[]") {
      (*at)["type"] = {"array", "null"};
      at = &(*at)["items"];
    } else {
      (*at)["type"] = {"object", "null"};
      (*at)["additionalProperties"] = false;
      at = &(*at)["properties"][step];
    }
  }
  return *at;
}

}  // namespace

json config_json_schema(const std::string& version) {
  SchemaRecorder all;
  search(all);
  json schema = {
      {"$schema", "http://json-schema.org/draft-07/schema#"},
      {"title", "etwire run configuration"},
      {"description", fmt::format("The keys etwire {} reads from a run configuration "
                                  "(`etwire schema` writes this file)",
                                  version)},
  };
  for (const auto& [path, expected] : all.expected()) {
    json& node = node_at(schema, path_steps(path));
    // A section's or a list's keys may be written before it: merge rather than replace.
    const json own = value_schema(expected);
    for (const auto& [key, value] : own.items()) node[key] = value;
  }
  return schema;
}

}  // namespace etwire::control
