// Reads one YAML map (a section) against the schema. Every key the code asks about becomes a
// known key; finish() reports the keys nobody asked about as unknown, suggesting the nearest
// known one, and duplicate keys are reported on construction. Internal to control/.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "control/load/document_context.h"
#include "control/load/value_readers.h"

namespace etwire::control {

struct ListItem {
  YAML::Node node;
  std::string path;
};

class MapReader {
 public:
  // A null or absent node reads as an empty section; anything other than a map is reported as a
  // wrong type (and reads as empty).
  MapReader(DocumentContext& ctx, const YAML::Node& node, std::string path);

  const std::string& path() const { return path_; }
  const YAML::Node& node() const { return node_; }
  DocumentContext& context() { return ctx_; }
  std::string key_path(std::string_view key) const;

  // True when the key is present with a non-null value.
  bool has(std::string_view key);
  // The value (undefined node when absent). Declares the key known.
  YAML::Node get(std::string_view key);
  // True when the key's value came from a --set argument.
  bool overridden(std::string_view key) const;
  // Reports a missing required key; `what` says what belongs there.
  bool require(std::string_view key, std::string_view what);

  bool text(std::string_view key, std::string& out);
  bool boolean(std::string_view key, bool& out);
  template <class T>
  bool integer(std::string_view key, T& out, int64_t min, int64_t max) {
    expect_made(key, [&] { return expected_integer(min, max); });
    return has(key) && read_integer(ctx_, get(key), key_path(key), min, max, out);
  }
  bool real(std::string_view key, double& out, RealRange range);
  bool bytes(std::string_view key, uint64_t& out, uint64_t min, uint64_t max);
  bool rate(std::string_view key, uint64_t& out, uint64_t min, uint64_t max);
  bool duration(std::string_view key, uint64_t& out, uint64_t min, uint64_t max);
  template <class E>
  bool choice(std::string_view key, E& out, config::NameTable<E> table) {
    expect_made(key, [&] { return expected_choice(table); });
    return has(key) && read_choice(ctx_, get(key), key_path(key), table, out);
  }

  // A nested section (empty when absent).
  MapReader section(std::string_view key);
  // A list's elements (none when absent; reported when not a list).
  std::vector<ListItem> list(std::string_view key);

  // Marks keys as known without reading them (read elsewhere).
  void declare(std::string_view key) {
    known_.emplace(key);
    expect(key, ValueKind::kAny);
  }
  // Reports unknown keys. Call once, after every key has been asked for.
  void finish();

 private:
  // The value at key as yaml-cpp hands it back, without declaring the key: for an absent key an
  // invalid node that answers only IsDefined(), and a null node when this is no map. The schema
  // asks for every key it knows, present or not, and a valid undefined node instead costs a
  // handful of allocations each: nearly half the time of loading a configuration under ASan.
  YAML::Node find(std::string_view key) const;
  // The value at key when present and not null, declared and noted; a null node otherwise.
  YAML::Node present(std::string_view key);
  // Says what `key` expects while the JSON Schema is written (DocumentContext::recording).
  void expect(std::string_view key, ValueKind kind);
  template <class Make>
  void expect_made(std::string_view key, Make make) {
    if (ctx_.recording()) ctx_.expect(key_path(key), make());
  }

  DocumentContext& ctx_;
  YAML::Node node_;
  std::string path_;
  std::set<std::string, std::less<>> known_;
  bool wrong_type_ = false;  // reported on construction: its missing keys would only repeat it
};

}  // namespace etwire::control
