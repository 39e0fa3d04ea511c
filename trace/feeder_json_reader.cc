#include "trace/feeder_json_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/bounded_file.h"
#include "trace/node_semantics.h"
#include "trace/trace_error.h"

namespace etwire::trace {

namespace {

using nlohmann::json;

// Keys that become attributes, with the kind a binary trace from current producers would use.
struct AttrKey {
  const char* name;
  AttrKind kind;
};
constexpr AttrKey kAttrKeys[] = {
    {"comm_type", AttrKind::kInt64},    {"comm_size", AttrKind::kInt64},
    {"comm_src", AttrKind::kInt64},     {"comm_dst", AttrKind::kInt64},
    {"comm_tag", AttrKind::kInt64},     {"comm_priority", AttrKind::kInt64},
    {"tensor_size", AttrKind::kUint64},
};

class FeederJsonReader final : public NodeSource {
 public:
  explicit FeederJsonReader(std::unique_ptr<ByteSource> bytes) : path_(bytes->path()) {
    std::string text;
    const std::string too_large = too_large_message(kMaxFeederJsonBytes, "a feeder JSON trace");
    // A file known to be too large is refused before any of it is read.
    if (const auto bound = bytes->remaining_bound(); bound && *bound > kMaxFeederJsonBytes) {
      throw TraceError({path_, {}, {}}, fmt::format("{} bytes: {}", *bound, too_large));
    }
    try {
      while (size_t available = bytes->fill(1)) {
        if (text.size() + available > kMaxFeederJsonBytes)
          throw TraceError({path_, {}, {}}, too_large);
        text.append(reinterpret_cast<const char*>(bytes->data()), available);
        bytes->consume(available);
      }
    } catch (const TraceError& e) {
      throw TraceError({path_, {}, {}}, e.problem());
    }
    try {
      document_ = json::parse(text, refuse_duplicate_keys());
    } catch (const json::exception& e) {
      throw TraceError({path_, {}, {}}, fmt::format("invalid JSON: {}", e.what()));
    }
    if (!document_.is_object()) {
      throw TraceError(
          {path_, {}, {}},
          fmt::format("not a feeder JSON trace: the top level is {}, not an object "
                      "with a \"workload_graph\" array",
                      document_.is_null()    ? "null"
                      : document_.is_array() ? "an array"
                                             : fmt::format("a {}", document_.type_name())));
    }
    if (!document_.contains("workload_graph") || !document_["workload_graph"].is_array()) {
      throw TraceError({path_, {}, {}},
                       "not a feeder JSON trace: no top-level \"workload_graph\" array");
    }
    graph_ = &document_["workload_graph"];
  }

  // JSON lets a later duplicate key replace an earlier one, which would silently drop a graph or
  // a node's field: a duplicate is refused, naming the key and the node it is in. Objects hold a
  // few keys each, so a list of them per open object is cheaper than a set.
  json::parser_callback_t refuse_duplicate_keys() {
    return [this, open = std::vector<std::vector<std::string>>(), nodes = uint64_t{0}](
               int depth, json::parse_event_t event, json& parsed) mutable {
      switch (event) {
        case json::parse_event_t::object_start:
          open.emplace_back();
          if (depth == 2) ++nodes;  // an element of the top-level object's array
          break;
        case json::parse_event_t::object_end:
          if (!open.empty()) open.pop_back();
          break;
        case json::parse_event_t::key: {
          const auto& key = parsed.get_ref<const std::string&>();
          std::vector<std::string>& keys = open.back();
          if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
            if (open.size() == 1) {
              throw TraceError({path_, {}, {}},
                               fmt::format("duplicate top-level key \"{}\": JSON would keep only "
                                           "the last one",
                                           key));
            }
            throw TraceError(
                {path_, nodes == 0 ? std::optional<uint64_t>{} : nodes - 1, {}},
                fmt::format("duplicate key \"{}\": JSON would keep only the last one", key));
          }
          keys.push_back(key);
          break;
        }
        default:
          break;
      }
      return true;
    };
  }

  bool next(TraceNode& out) override {
    if (index_ >= graph_->size()) return false;
    uint64_t index = index_++;
    const json& element = (*graph_)[index];
    out.reset();
    out.record_index = index;
    node_id_.reset();
    if (!element.is_object()) fail(index, "workload_graph element is not an object");

    out.id = unsigned_value(element, "Id", index, true).value_or(0);
    node_id_ = out.id;
    if (const json* name = find(element, "Name")) {
      if (!name->is_string()) fail(index, "\"Name\" is not a string");
      out.name = name->get<std::string>();
    }
    const json* type = find(element, "NodeType");
    if (type == nullptr) fail(index, "missing \"NodeType\"");
    if (!type->is_number_integer()) fail(index, "\"NodeType\" is not an integer");
    if (type->is_number_unsigned() && type->get<uint64_t>() > INT64_MAX) {
      fail(index, fmt::format("node type {} is not a known NodeType", type->get<uint64_t>()));
    }
    int64_t raw_type = type->get<int64_t>();
    read_ids(element, "data_deps", index, out.data_deps);
    // The sample files spell it ctrlDeps; accept the schema spelling as well.
    read_ids(element, find(element, "ctrlDeps") ? "ctrlDeps" : "ctrl_deps", index, out.ctrl_deps);
    out.duration_us = unsigned_value(element, "runtime", index, false).value_or(0);

    if (const json* cpu = find(element, "is_cpu_op")) {
      Attribute& attr = out.attrs.append();
      attr.name = "is_cpu_op";
      if (cpu->is_boolean()) {
        attr.kind = AttrKind::kBool;
        attr.bits = cpu->get<bool>() ? 1 : 0;
      } else {
        set_integer(attr, *cpu, AttrKind::kInt64, index);
      }
    }
    for (const AttrKey& key : kAttrKeys) {
      if (const json* value = find(element, key.name)) {
        Attribute& attr = out.attrs.append();
        attr.name = key.name;
        set_integer(attr, *value, key.kind, index);
      }
    }
    apply_node_semantics(out, raw_type, path_);
    return true;
  }

  const TraceMetadata& metadata() const override { return metadata_; }
  const std::string& path() const override { return path_; }

 private:
  // A present, non-null value, or null.
  static const json* find(const json& element, const char* key) {
    auto it = element.find(key);
    if (it == element.end() || it->is_null()) return nullptr;
    return &*it;
  }

  [[noreturn]] void fail(uint64_t index, const std::string& problem) const {
    throw TraceError({path_, index, node_id_}, problem);
  }

  std::optional<uint64_t> unsigned_value(const json& element, const char* key, uint64_t index,
                                         bool required) const {
    const json* value = find(element, key);
    if (value == nullptr) {
      if (required) fail(index, fmt::format("missing \"{}\"", key));
      return std::nullopt;
    }
    if (!value->is_number_unsigned()) {
      fail(index, fmt::format("\"{}\" is not a non-negative integer: {}", key, value->dump()));
    }
    return value->get<uint64_t>();
  }

  void read_ids(const json& element, const char* key, uint64_t index,
                std::vector<uint64_t>& out) const {
    const json* list = find(element, key);
    if (list == nullptr) return;
    if (!list->is_array()) fail(index, fmt::format("\"{}\" is not an array", key));
    for (const json& id : *list) {
      if (!id.is_number_unsigned()) {
        fail(index, fmt::format("\"{}\" holds {}, not a node id", key, id.dump()));
      }
      out.push_back(id.get<uint64_t>());
    }
  }

  // Integers keep their sign; an unsigned value beyond int64 becomes uint64 so nothing is lost.
  void set_integer(Attribute& attr, const json& value, AttrKind kind, uint64_t index) const {
    if (value.is_number_unsigned()) {
      auto bits = value.get<uint64_t>();
      attr.kind = bits > static_cast<uint64_t>(INT64_MAX) ? AttrKind::kUint64 : kind;
      attr.bits = bits;
    } else if (value.is_number_integer()) {
      attr.kind = AttrKind::kInt64;
      attr.bits = static_cast<uint64_t>(value.get<int64_t>());
    } else {
      fail(index, fmt::format("\"{}\" is not an integer: {}", attr.name, value.dump()));
    }
  }

  std::string path_;
  json document_;
  const json* graph_ = nullptr;
  uint64_t index_ = 0;
  std::optional<uint64_t> node_id_;
  TraceMetadata metadata_;
};

}  // namespace

std::unique_ptr<NodeSource> make_feeder_json_reader(std::unique_ptr<ByteSource> bytes) {
  return std::make_unique<FeederJsonReader>(std::move(bytes));
}

}  // namespace etwire::trace
