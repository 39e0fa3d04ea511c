#include "control/load/infragraph_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <utility>

#include "common/rate.h"
#include "control/load/infragraph_slice.h"
#include "control/load/key_path.h"
#include "control/load/map_reader.h"
#include "control/load/nearest_name.h"

namespace etwire::control::infragraph {

namespace {

constexpr int64_t kMaxCount = int64_t{1} << 20;  // copies of an instance or of a component
constexpr size_t kMaxCables = size_t{1} << 21;   // after expansion
// Link speeds, as fabric.leaf_spine.uplink_speed takes them.
constexpr uint64_t kMinRate = 1'000'000;
constexpr uint64_t kMaxRate = 3'200'000'000'000;

const std::vector<std::string>& component_kinds() {
  static const std::vector<std::string> kinds = {"custom", "device", "cpu",  "xpu",
                                                 "nic",    "memory", "port", "switch"};
  return kinds;
}

template <class Item>
std::vector<std::string> names_of(const std::vector<Item>& items) {
  std::vector<std::string> names;
  for (const Item& item : items) names.push_back(item.name);
  return names;
}

class Reader {
 public:
  explicit Reader(DocumentContext& ctx) : ctx_(ctx) {}

  std::optional<Graph> read(const YAML::Node& document) {
    const size_t errors = ctx_.diagnostics().error_count();
    if (!document.IsDefined() || document.IsNull()) {
      ctx_.error(Problem::kMissing, document, "",
                 "the InfraGraph file is empty: expected an infrastructure with devices, "
                 "instances, links and edges");
      return std::nullopt;
    }
    // A missing key gives an invalid node, on which everything but IsDefined throws.
    const YAML::Node inner = document.IsMap() ? document["infrastructure"] : YAML::Node();
    const bool wrapped = inner.IsDefined() && inner.IsMap();
    const YAML::Node root = wrapped ? inner : document;
    if (wrapped) graph_.path = "infrastructure";
    graph_.root.reset(root);
    MapReader infra(ctx_, root, graph_.path);
    if (!root.IsMap()) return std::nullopt;
    if (infra.has("connections") && !infra.has("edges")) {
      ctx_.error(Problem::kBadValue, infra.get("connections"), infra.key_path("connections"),
                 "connection strings (\"server.0.nic.0.eth.leafsw.0.port.0\") are InfraGraph's "
                 "earlier form, which its schema replaced with edges (ep1, ep2, scheme, link): "
                 "etwire reads edges");
      return std::nullopt;
    }
    read_devices(infra);
    read_links(infra);
    read_instances(infra);
    if (ctx_.diagnostics().error_count() != errors) return std::nullopt;
    read_edges(infra);
    if (ctx_.diagnostics().error_count() != errors) return std::nullopt;
    return std::move(graph_);
  }

 private:
  void read_devices(MapReader& infra) {
    for (const ListItem& item : infra.list("devices")) {
      MapReader entry(ctx_, item.node, item.path);
      Device device;
      if (!entry.require("name", "the device's name, which instances refer to") ||
          !entry.text("name", device.name)) {
        continue;
      }
      if (!device_index_.emplace(device.name, graph_.devices.size()).second) {
        ctx_.error(Problem::kDuplicate, entry.get("name"), entry.key_path("name"),
                   fmt::format("a second device named \"{}\"", device.name));
        continue;
      }
      for (const ListItem& part : entry.list("components")) {
        Component component;
        if (read_component(part, component)) {
          for (const Component& other : device.components) {
            if (other.name == component.name) {
              ctx_.error(Problem::kDuplicate, component.node, component.path,
                         fmt::format("device \"{}\" has a second component named \"{}\"",
                                     device.name, component.name));
            }
          }
          device.components.push_back(std::move(component));
        }
      }
      graph_.devices.push_back(std::move(device));
    }
    // Composition refers to devices by name, in any order; then which devices are hosts.
    for (Device& device : graph_.devices) {
      for (const Component& component : device.components) {
        if (component.composed && device_index_.count(component.name) == 0) {
          ctx_.error(Problem::kBadReference, component.node, component.path,
                     fmt::format("component \"{}\" of device \"{}\" is a composed device, but "
                                 "devices has none named so{}",
                                 component.name, device.name,
                                 did_you_mean(component.name, names_of(graph_.devices))));
        }
      }
    }
    mark_hosts();
  }

  bool read_component(const ListItem& item, Component& out) {
    MapReader entry(ctx_, item.node, item.path);
    out.path = item.path;
    out.node.reset(item.node);
    bool ok = entry.require("name", "the component's name, which edges refer to") &&
              entry.text("name", out.name);
    ok = entry.require("count", "how many of it one device holds") &&
         entry.integer("count", out.count, 1, kMaxCount) && ok;
    std::string choice;
    if (!entry.require("choice",
                       "its kind: nic, port, xpu, cpu, switch, memory, device or custom") ||
        !entry.text("choice", choice)) {
      return false;
    }
    if (std::find(component_kinds().begin(), component_kinds().end(), choice) ==
        component_kinds().end()) {
      ctx_.error(Problem::kBadValue, entry.get("choice"), entry.key_path("choice"),
                 fmt::format("\"{}\" is not a component kind InfraGraph defines (custom, device, "
                             "cpu, xpu, nic, memory, port, switch){}",
                             choice, did_you_mean(choice, component_kinds())));
      return false;
    }
    out.kind = choice;
    out.composed = choice == "device";
    if (choice == "custom") {
      MapReader custom = entry.section("custom");
      custom.text("type", out.kind);
    }
    return ok;
  }

  // Depth-first over composition: 1 while a device's components are being looked at, 2 after.
  // The walk keeps its own stack: a chain of compositions as long as the file can hold would
  // overflow the call stack.
  void mark_hosts() {
    std::vector<int> state(graph_.devices.size(), 0);
    struct Frame {
      size_t device;
      size_t next;  // its component to look at next
    };
    std::vector<Frame> stack;
    for (size_t root = 0; root < graph_.devices.size(); ++root) {
      if (state[root] != 0) continue;
      state[root] = 1;
      stack.push_back({root, 0});
      while (!stack.empty()) {
        Frame& top = stack.back();
        Device& device = graph_.devices[top.device];
        if (top.next == device.components.size()) {
          state[top.device] = 2;
          const bool host = device.host;
          stack.pop_back();
          if (!stack.empty()) graph_.devices[stack.back().device].host |= host;
          continue;
        }
        const Component& component = device.components[top.next++];
        if (component.kind == "xpu" || component.kind == "nic") device.host = true;
        if (!component.composed) continue;
        const auto it = device_index_.find(component.name);
        if (it == device_index_.end()) continue;
        if (state[it->second] == 1) {
          ctx_.error(Problem::kInconsistent, component.node, component.path,
                     fmt::format("device \"{}\" is composed into itself: component \"{}\" of "
                                 "device \"{}\" closes the loop",
                                 component.name, component.name, device.name));
        } else if (state[it->second] == 2) {
          device.host = graph_.devices[it->second].host || device.host;
        } else {
          state[it->second] = 1;
          stack.push_back({it->second, 0});  // `top` and `device` are not used past this
        }
      }
    }
  }

  void read_links(MapReader& infra) {
    for (const ListItem& item : infra.list("links")) {
      MapReader entry(ctx_, item.node, item.path);
      Link link;
      link.path = item.path;
      link.node.reset(item.node);
      if (!entry.require("name", "the link's name, which edges refer to") ||
          !entry.text("name", link.name)) {
        continue;
      }
      if (!link_index_.emplace(link.name, graph_.links.size()).second) {
        ctx_.error(Problem::kDuplicate, entry.get("name"), entry.key_path("name"),
                   fmt::format("a second link named \"{}\"", link.name));
        continue;
      }
      MapReader physical = entry.section("physical");
      MapReader bandwidth = physical.section("bandwidth");
      static const std::vector<std::pair<std::string, double>> kRates = {
          {"gigabits_per_second", 1e9},
          {"gigabytes_per_second", 8e9},
          {"gigatransfers_per_second", 0}};
      double value = 0;
      if (const auto unit = read_choice_value(bandwidth, kRates, RealRange{0, 1e7, true}, value)) {
        if (*unit == 0) {
          link.unusable = fmt::format(
              "link \"{}\" gives its bandwidth in gigatransfers per second, which does not say "
              "how many bits a transfer carries: give gigabits_per_second or "
              "gigabytes_per_second",
              link.name);
        } else if (const auto bps = static_cast<uint64_t>(std::llround(value * *unit));
                   bps < kMinRate || bps > kMaxRate) {
          ctx_.error(Problem::kOutOfRange, bandwidth.node(), bandwidth.path(),
                     fmt::format("link \"{}\" runs at {}, outside the speeds etwire models "
                                 "({} to {})",
                                 link.name, format_rate(bps), format_rate(kMinRate),
                                 format_rate(kMaxRate)));
        } else {
          link.bandwidth_bps = bps;
        }
      }
      MapReader latency = physical.section("latency");
      static const std::vector<std::pair<std::string, double>> kDelays = {
          {"ms", 1e6}, {"us", 1e3}, {"ns", 1}};
      if (const auto unit = read_choice_value(latency, kDelays, RealRange{0, 1e12, false}, value)) {
        link.latency_ns = static_cast<uint64_t>(std::llround(value * *unit));
      }
      graph_.links.push_back(std::move(link));
    }
  }

  // A value given as {choice: unit, unit: number} (the choice may be left out when one unit is
  // given): the unit's scale, with the number in `value`.
  std::optional<double> read_choice_value(MapReader& section,
                                          const std::vector<std::pair<std::string, double>>& units,
                                          RealRange range, double& value) {
    std::string choice;
    const bool chosen = section.text("choice", choice);
    std::vector<std::string> given;
    std::vector<std::string> names;
    for (const auto& [name, scale] : units) {
      names.push_back(name);
      if (section.has(name)) given.push_back(name);
    }
    if (!chosen) {
      if (given.empty()) return std::nullopt;
      if (given.size() > 1) {
        ctx_.error(
            Problem::kInconsistent, section.node(), section.path(),
            fmt::format("both {} and {} are given: say which with choice", given[0], given[1]));
        return std::nullopt;
      }
      choice = given[0];
    }
    for (const auto& [name, scale] : units) {
      if (name != choice) continue;
      if (!section.require(name, "the value of the chosen unit") ||
          !section.real(name, value, range)) {
        return std::nullopt;
      }
      return scale;
    }
    report_bad_name(ctx_, section.get("choice"), section.key_path("choice"), names, "");
    return std::nullopt;
  }

  void read_instances(MapReader& infra) {
    for (const ListItem& item : infra.list("instances")) {
      MapReader entry(ctx_, item.node, item.path);
      Instance instance;
      std::string device;
      bool ok = entry.require("name", "the instance's name, which edges refer to") &&
                entry.text("name", instance.name);
      ok = entry.require("device", "the device it is copies of") && entry.text("device", device) &&
           ok;
      ok = entry.require("count", "how many copies of the device there are") &&
           entry.integer("count", instance.count, 1, kMaxCount) && ok;
      if (!ok) continue;
      const auto it = device_index_.find(device);
      if (it == device_index_.end()) {
        ctx_.error(Problem::kBadReference, entry.get("device"), entry.key_path("device"),
                   fmt::format("devices has no device named \"{}\"{}", device,
                               did_you_mean(device, names_of(graph_.devices))));
        continue;
      }
      instance.device = it->second;
      if (!instance_index_.emplace(instance.name, graph_.instances.size()).second) {
        ctx_.error(Problem::kDuplicate, entry.get("name"), entry.key_path("name"),
                   fmt::format("a second instance named \"{}\"", instance.name));
        continue;
      }
      graph_.instances.push_back(std::move(instance));
    }
  }

  void read_edges(MapReader& infra) {
    for (const ListItem& item : infra.list("edges")) {
      const size_t index = graph_.edges.size();
      graph_.edges.push_back(item.node);
      MapReader entry(ctx_, item.node, item.path);
      std::string scheme;
      std::string link_name;
      bool ok = entry.require("scheme", "one2one or many2many") && entry.text("scheme", scheme);
      ok = entry.require("link", "the name of one of links") && entry.text("link", link_name) && ok;
      ok = entry.require("ep1", "one end: instance and component") && ok;
      ok = entry.require("ep2", "the other end: instance and component") && ok;
      if (!ok) continue;
      if (scheme == "ring") {
        ctx_.error(Problem::kBackend, entry.get("scheme"), entry.key_path("scheme"),
                   "etwire does not expand ring edges: write the ring's cables as one2one edges");
        continue;
      }
      if (scheme != "one2one" && scheme != "many2many") {
        report_bad_name(ctx_, entry.get("scheme"), entry.key_path("scheme"),
                        {"one2one", "many2many", "ring"}, "");
        continue;
      }
      const auto link = link_index_.find(link_name);
      if (link == link_index_.end()) {
        ctx_.error(Problem::kBadReference, entry.get("link"), entry.key_path("link"),
                   fmt::format("links has no link named \"{}\"{}", link_name,
                               did_you_mean(link_name, names_of(graph_.links))));
        continue;
      }
      std::vector<End> ones;
      std::vector<End> others;
      MapReader ep1 = entry.section("ep1");
      MapReader ep2 = entry.section("ep2");
      const bool expanded = expand(ep1, ones);
      if (!expand(ep2, others) || !expanded) continue;
      std::vector<std::pair<size_t, size_t>> pairs;
      if (scheme == "one2one") {
        // As InfraGraph pairs them: in order, up to the shorter side.
        for (size_t i = 0; i < std::min(ones.size(), others.size()); ++i) pairs.emplace_back(i, i);
      } else {
        for (size_t i = 0; i < ones.size(); ++i) {
          for (size_t j = 0; j < others.size(); ++j) pairs.emplace_back(i, j);
        }
      }
      bool reported = false;
      for (const auto& [i, j] : pairs) {
        if (ones[i].name == others[j].name) continue;  // a component is not cabled to itself
        if (graph_.cables.size() >= kMaxCables) {
          ctx_.error(Problem::kOutOfRange, item.node, item.path,
                     fmt::format("the graph expands to more than {} cables", kMaxCables));
          return;
        }
        if (!reported) reported = !add_cable(item, index, link->second, ones[i], others[j]);
      }
    }
  }

  // False (and reported) when an end already has a cable.
  bool add_cable(const ListItem& item, size_t edge, size_t link, const End& a, const End& b) {
    for (const End* end : {&a, &b}) {
      const auto [it, inserted] = cabled_.emplace(end->name, graph_.cables.size());
      if (inserted) continue;
      const Cable& first = graph_.cables[it->second];
      ctx_.error(Problem::kDuplicate, item.node, item.path,
                 fmt::format("{} is cabled twice: to {} by {} and to {} by {}; etwire takes a "
                             "component of an instance for one port with one cable",
                             end->name, first.a.name == end->name ? first.b.name : first.a.name,
                             graph_.edge_path(first.edge), end == &a ? b.name : a.name,
                             graph_.edge_path(edge)));
      return false;
    }
    Cable cable;
    cable.edge = edge;
    cable.link = link;
    cable.a = a;
    cable.b = b;
    cable.node_a = node_of(a);
    cable.node_b = node_of(b);
    graph_.cables.push_back(std::move(cable));
    return true;
  }

  uint32_t node_of(const End& end) {
    const auto [it, inserted] =
        node_index_.emplace(std::make_pair(end.instance, end.copy), graph_.nodes.size());
    if (inserted) {
      const Instance& instance = graph_.instances[end.instance];
      graph_.nodes.push_back({end.instance, end.copy, fmt::format("{}.{}", instance.name, end.copy),
                              graph_.devices[instance.device].host});
    }
    return static_cast<uint32_t>(it->second);
  }

  // Each step of an endpoint: the component's place in its device, and the indexes taken.
  struct Taken {
    const Component* component;
    uint32_t place;
    std::vector<uint32_t> indexes;
  };
  // Every copy of the instance times every index of each step, the last step turning fastest.
  static void append_ends(size_t instance_index, const std::string& instance_name,
                          const std::vector<uint32_t>& copies, const std::vector<Taken>& steps,
                          std::vector<End>& out) {
    for (const uint32_t copy : copies) {
      std::vector<size_t> at(steps.size(), 0);
      while (true) {
        End end;
        end.instance = instance_index;
        end.copy = copy;
        end.name = fmt::format("{}.{}", instance_name, copy);
        end.order = {static_cast<uint32_t>(instance_index), copy};
        for (size_t s = 0; s < steps.size(); ++s) {
          const uint32_t index = steps[s].indexes[at[s]];
          end.name += fmt::format(".{}.{}", steps[s].component->name, index);
          end.order.push_back(steps[s].place);
          end.order.push_back(index);
        }
        out.push_back(std::move(end));
        size_t s = steps.size();
        while (s > 0 && ++at[s - 1] == steps[s - 1].indexes.size()) at[--s] = 0;
        if (s == 0) break;
      }
    }
  }

  // An endpoint's components, every copy its slices take: instance copies outermost, then each
  // component step in turn.
  bool expand(MapReader& ep, std::vector<End>& out) {
    std::string instance_text;
    std::string component_text;
    bool ok = ep.require("instance", "an instance's name, with a slice of its copies") &&
              ep.text("instance", instance_text);
    ok = ep.require("component", "a component of the instance's device, with a slice") &&
         ep.text("component", component_text) && ok;
    if (!ok) return false;
    const auto bad = [&](const char* key, const std::string& message) {
      ctx_.error(Problem::kBadValue, ep.get(key), ep.key_path(key), message);
      return false;
    };
    const std::optional<Step> head = parse_step(instance_text);
    if (!head) {
      return bad("instance", fmt::format("\"{}\" is not an instance name with an optional slice "
                                         "(\"leafsw\", \"leafsw[0]\", \"leafsw[0:4]\")",
                                         instance_text));
    }
    const auto found = instance_index_.find(head->name);
    if (found == instance_index_.end()) {
      return bad("instance", fmt::format("instances has no instance named \"{}\"{}", head->name,
                                         did_you_mean(head->name, names_of(graph_.instances))));
    }
    const Instance& instance = graph_.instances[found->second];
    std::vector<uint32_t> copies;
    if (std::string why = pick(*head, instance.count, copies); !why.empty()) {
      return bad("instance", why);
    }
    std::vector<Taken> steps;
    size_t device = instance.device;
    std::string_view rest = component_text;
    while (true) {
      const size_t dot = rest.find('.');
      const std::string_view piece = rest.substr(0, dot);
      const std::optional<Step> step = parse_step(piece);
      if (!step) {
        return bad("component", fmt::format("\"{}\" is not a component name with an optional "
                                            "slice (\"port\", \"port[4]\", \"cx5[0].port[0:2]\")",
                                            piece));
      }
      const Device& holder = graph_.devices[device];
      const auto& parts = holder.components;
      const auto it = std::find_if(parts.begin(), parts.end(),
                                   [&](const Component& c) { return c.name == step->name; });
      if (it == parts.end()) {
        return bad("component",
                   fmt::format("device \"{}\" has no component named \"{}\"{}", holder.name,
                               step->name, did_you_mean(step->name, names_of(parts))));
      }
      Taken taken{&*it, static_cast<uint32_t>(it - parts.begin()), {}};
      if (std::string why = pick(*step, it->count, taken.indexes); !why.empty()) {
        return bad("component", why);
      }
      steps.push_back(std::move(taken));
      if (dot == std::string_view::npos) break;
      if (!it->composed) {
        return bad("component", fmt::format("\"{}\" is a {} of device \"{}\", not a device "
                                            "composed into it: it has no components",
                                            it->name, it->kind, holder.name));
      }
      device = device_index_.at(it->name);
      rest = rest.substr(dot + 1);
    }
    if (steps.back().component->composed) {
      return bad("component",
                 fmt::format("\"{}\" is a device composed into \"{}\": name the component of it "
                             "that is cabled (\"{}[0].port[0]\")",
                             steps.back().component->name, graph_.devices[device].name,
                             steps.back().component->name));
    }
    size_t total = copies.size();
    for (const Taken& step : steps) total *= step.indexes.size();
    if (total > kMaxCables) {
      return bad("component", fmt::format("the endpoint expands to {} components", total));
    }
    append_ends(found->second, instance.name, copies, steps, out);
    return true;
  }

  DocumentContext& ctx_;
  Graph graph_;
  std::map<std::string, size_t> device_index_;
  std::map<std::string, size_t> link_index_;
  std::map<std::string, size_t> instance_index_;
  std::map<std::pair<size_t, uint32_t>, size_t> node_index_;
  std::map<std::string, size_t> cabled_;  // end name -> its cable
};

}  // namespace

std::string Graph::edge_path(size_t edge) const {
  return element_path(child_path(path, "edges"), edge);
}

std::optional<Graph> read_graph(DocumentContext& ctx, const YAML::Node& document) {
  return Reader(ctx).read(document);
}

}  // namespace etwire::control::infragraph
