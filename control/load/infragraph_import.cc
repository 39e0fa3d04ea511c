#include "control/load/infragraph_import.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/bounded_file.h"
#include "common/duration.h"
#include "common/rate.h"
#include "control/load/entry_count.h"
#include "control/load/infragraph_graph.h"
#include "control/load/infragraph_recognizer.h"
#include "control/load/key_path.h"
#include "control/load/section_parsers.h"

namespace etwire::control {

namespace {

// A fabric of tens of thousands of nodes and links is a few MiB; the cap keeps an endless stream
// from being read forever.
constexpr uint64_t kMaxInfraGraphFileBytes = uint64_t{64} << 20;

using infragraph::Cable;
using infragraph::Graph;
using infragraph::plural;
using infragraph::Recognizer;
using infragraph::Shape;

// The keys of fabric that say what fabric.infragraph says.
constexpr const char* kShapeKeys[] = {"topology", "three_tier", "rails"};
constexpr const char* kLeafSpineShapeKeys[] = {"ports_per_leaf", "spines", "links",
                                               "oversubscription", "uplink_speed"};

// Reports each shape key given beside fabric.infragraph; true when there was one.
bool report_shape_keys(MapReader& fabric) {
  DocumentContext& ctx = fabric.context();
  std::vector<std::pair<std::string, YAML::Node>> given;
  for (const char* key : kShapeKeys) {
    if (fabric.has(key)) given.emplace_back(fabric.key_path(key), fabric.get(key));
  }
  const YAML::Node leaf_spine = fabric.get("leaf_spine");
  if (leaf_spine.IsMap()) {
    for (const char* key : kLeafSpineShapeKeys) {
      const YAML::Node value = leaf_spine[key];
      if (value.IsDefined() && !value.IsNull()) {
        given.emplace_back(child_path(fabric.key_path("leaf_spine"), key), value);
      }
    }
  }
  for (const auto& [path, node] : given) {
    ctx.error(Problem::kInconsistent, node, path,
              "fabric.infragraph describes the topology: give either it or this key, not both "
              "(one source of truth)");
  }
  return !given.empty();
}

// The graph's host NICs in order, for the check of the run's twin ports against them.
std::vector<config::InfraGraphNic> host_nics(const Graph& graph, const Shape& shape) {
  std::vector<config::InfraGraphNic> nics;
  for (size_t k = 0; k < shape.host_ends.size(); ++k) {
    const Cable& cable = graph.cables[shape.host_cables[k]];
    const infragraph::Link& link = graph.links[cable.link];
    nics.push_back(
        {shape.host_ends[k]->name, link.bandwidth_bps, link.name, graph.edge_path(cable.edge)});
  }
  return nics;
}

}  // namespace

bool import_infragraph(MapReader& fabric, const std::string& config_dir,
                       config::FabricConfig& out) {
  std::string text;
  if (!fabric.has("infragraph") || !fabric.text("infragraph", text)) return false;
  DocumentContext& ctx = fabric.context();
  const size_t errors = ctx.diagnostics().error_count();
  const std::string key = fabric.key_path("infragraph");
  report_shape_keys(fabric);
  const std::string file = resolve_config_path(ctx, key, text, config_dir);
  std::string content;
  try {
    content = read_bounded_file(file, kMaxInfraGraphFileBytes, "an InfraGraph file");
  } catch (const InputFileError& e) {
    std::string why = e.what();
    if (e.reason() == InputFileError::Reason::kOpen) {
      why = e.error_number() == ENOENT ? "no such file" : "not readable";
    } else if (e.reason() == InputFileError::Reason::kRead && e.error_number() != 0) {
      why = std::strerror(e.error_number());
    }
    ctx.error(Problem::kBadReference, fabric.get("infragraph"), key,
              fmt::format("cannot read the InfraGraph file {}: {}", file, why));
    return false;
  }
  if (std::optional<Diagnostic> d = too_many_entries(
          content, file, "InfraGraph file",
          "a fabric needs far fewer: an instance names all the copies of a device, an edge many "
          "cables by slices",
          kMaxInfraGraphEntries)) {
    ctx.report(std::move(*d));
    return false;
  }
  YAML::Node document;
  try {
    document = YAML::Load(content);
  } catch (const YAML::Exception& e) {
    Diagnostic d;
    d.problem = Problem::kSyntax;
    d.where = location_from_mark(file, e.mark);
    d.message = "invalid YAML or JSON in the InfraGraph file: " +
                (e.msg.empty() ? std::string(e.what()) : e.msg);
    ctx.report(std::move(d));
    return false;
  }
  const AppliedOverrides none;
  SourceMap places(file);
  DocumentContext doc(none, places, ctx.diagnostics());
  const std::optional<Graph> graph = infragraph::read_graph(doc, document);
  if (!graph) return false;
  const std::optional<Shape> shape = Recognizer(doc, *graph).recognize();
  if (!shape) return false;
  if (shape->latency_ns && fabric.has("propagation_delay")) {
    ctx.error(Problem::kInconsistent, fabric.get("propagation_delay"),
              fabric.key_path("propagation_delay"),
              fmt::format("fabric.infragraph gives every link's latency ({}): give either it or "
                          "this key, not both (one source of truth)",
                          format_duration_ns(*shape->latency_ns)));
  }
  if (ctx.diagnostics().error_count() != errors) return false;
  out.topology = shape->topology;
  out.leaf_spine.ports_per_leaf = shape->leaf_spine.ports_per_leaf;
  out.leaf_spine.spines = shape->leaf_spine.spines;
  out.leaf_spine.links = shape->leaf_spine.links;
  out.leaf_spine.uplink_speed_bps = shape->leaf_spine.uplink_speed_bps;
  out.three_tier = shape->three_tier;
  out.rails = shape->rails;
  if (shape->latency_ns) out.propagation_delay_ns = *shape->latency_ns;
  out.infragraph_nics = host_nics(*graph, *shape);
  return true;
}

}  // namespace etwire::control
