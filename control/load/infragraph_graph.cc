#include "control/load/infragraph_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "common/rate.h"
#include "control/load/infragraph_limits.h"
#include "control/load/infragraph_slice.h"
#include "control/load/key_path.h"
#include "control/load/map_reader.h"
#include "control/load/nearest_name.h"

namespace etwire::control::infragraph {

namespace {

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
    for (const ListItem& item : capped_list(infra, "devices")) {
      MapReader entry(ctx_, item.node, item.path);
      Device device;
      if (!entry.require("name", "the device's name, which instances refer to") ||
          !read_name(entry, "name", device.name)) {
        continue;
      }
      if (!device_index_.emplace(device.name, graph_.devices.size()).second) {
        ctx_.error(Problem::kDuplicate, entry.get("name"), entry.key_path("name"),
                   fmt::format("a second device named \"{}\"", device.name));
        continue;
      }
      std::set<std::string> component_names;
      for (const ListItem& part : capped_list(entry, "components")) {
        Component component;
        if (read_component(part, component)) {
          if (!component_names.insert(component.name).second) {
            ctx_.error(Problem::kDuplicate, component.node, component.path,
                       fmt::format("device \"{}\" has a second component named \"{}\"", device.name,
                                   component.name));
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
          ctx_.error(
              Problem::kBadReference, component.node, component.path,
              fmt::format("component \"{}\" of device \"{}\" is a composed device, but "
                          "devices has none named so{}",
                          component.name, device.name, suggest(component.name, graph_.devices)));
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
              read_name(entry, "name", out.name);
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
    for (const ListItem& item : capped_list(infra, "links")) {
      MapReader entry(ctx_, item.node, item.path);
      Link link;
      link.path = item.path;
      link.node.reset(item.node);
      if (!entry.require("name", "the link's name, which edges refer to") ||
          !read_name(entry, "name", link.name)) {
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
    for (const ListItem& item : capped_list(infra, "instances")) {
      MapReader entry(ctx_, item.node, item.path);
      Instance instance;
      std::string device;
      bool ok = entry.require("name", "the instance's name, which edges refer to") &&
                read_name(entry, "name", instance.name);
      ok = entry.require("device", "the device it is copies of") &&
           read_name(entry, "device", device) && ok;
      ok = entry.require("count", "how many copies of the device there are") &&
           entry.integer("count", instance.count, 1, kMaxCount) && ok;
      if (!ok) continue;
      const auto it = device_index_.find(device);
      if (it == device_index_.end()) {
        ctx_.error(Problem::kBadReference, entry.get("device"), entry.key_path("device"),
                   fmt::format("devices has no device named \"{}\"{}", device,
                               suggest(device, graph_.devices)));
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
    for (const ListItem& item : capped_list(infra, "edges", kMaxCables)) {
      const size_t index = graph_.edges.size();
      graph_.edges.push_back(item.node);
      MapReader entry(ctx_, item.node, item.path);
      std::string scheme;
      std::string link_name;
      bool ok = entry.require("scheme", "one2one or many2many") && entry.text("scheme", scheme);
      ok = entry.require("link", "the name of one of links") &&
           read_name(entry, "link", link_name) && ok;
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
                               suggest(link_name, graph_.links)));
        continue;
      }
      std::vector<End> ones;
      std::vector<End> others;
      MapReader ep1 = entry.section("ep1");
      MapReader ep2 = entry.section("ep2");
      const bool expanded = expand(ep1, ones);
      if (!expand(ep2, others) || !expanded) continue;
      // As InfraGraph pairs them: one2one in order, up to the shorter side; many2many each with
      // each. Counted before any is made: two instances of 30,000 copies are 900 million pairs.
      const bool one2one = scheme == "one2one";
      const size_t pairs = one2one ? std::min(ones.size(), others.size())
                                   : capped_product(ones.size(), others.size(), kMaxCables + 1);
      if (pairs > kMaxCables - graph_.cables.size()) {
        ctx_.error(
            Problem::kOutOfRange, item.node, item.path,
            fmt::format("{} of {} ends with {} makes {}{} cables{}: a graph holds at "
                        "most {}",
                        scheme, ones.size(), others.size(), pairs > kMaxCables ? "more than " : "",
                        std::min(pairs, kMaxCables),
                        graph_.cables.empty() ? ""
                                              : fmt::format(", after the {} of the edges before it",
                                                            graph_.cables.size()),
                        kMaxCables));
        return;
      }
      bool reported = false;
      for (size_t p = 0; p < pairs && !reported; ++p) {
        const End& a = ones[one2one ? p : p / others.size()];
        const End& b = others[one2one ? p : p % others.size()];
        if (a.name == b.name) continue;  // a component is not cabled to itself
        reported = !add_cable(item, index, link->second, a, b);
      }
    }
  }

  // False (and reported) when an end already has a cable. Neither end is recorded as cabled
  // unless the cable is made: a refused edge once left its first end pointing at a cable that
  // did not exist, which a later edge to that end read past the end of the cables.
  bool add_cable(const ListItem& item, size_t edge, size_t link, const End& a, const End& b) {
    for (const End* end : {&a, &b}) {
      const auto it = cabled_.find(end->name);
      if (it == cabled_.end()) continue;
      const Cable& first = graph_.cables[it->second];
      ctx_.error(Problem::kDuplicate, item.node, item.path,
                 fmt::format("{} is cabled twice: to {} by {} and to {} by {}; etwire takes a "
                             "component of an instance for one port with one cable",
                             end->name, first.a.name == end->name ? first.b.name : first.a.name,
                             graph_.edge_path(first.edge), end == &a ? b.name : a.name,
                             graph_.edge_path(edge)));
      return false;
    }
    cabled_.emplace(a.name, graph_.cables.size());
    cabled_.emplace(b.name, graph_.cables.size());
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
              read_name(ep, "instance", instance_text, kMaxEndpointBytes);
    ok = ep.require("component", "a component of the instance's device, with a slice") &&
         read_name(ep, "component", component_text, kMaxEndpointBytes) && ok;
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
                                         suggest(head->name, graph_.instances)));
    }
    const Instance& instance = graph_.instances[found->second];
    std::vector<uint32_t> copies;
    if (std::string why = pick(*head, instance.count, copies); !why.empty()) {
      return bad("instance", why);
    }
    // The ends it expands into, counted step by step before any is made; and the bytes of their
    // names (each repeats the instance's name, a number, and each step's name and index).
    size_t total = copies.size();
    size_t name_bytes = instance.name.size() + 11;
    if (total > kMaxEnds - ends_) return too_many_ends(ep, total);
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
        return bad("component", fmt::format("device \"{}\" has no component named \"{}\"{}",
                                            holder.name, step->name, suggest(step->name, parts)));
      }
      Taken taken{&*it, static_cast<uint32_t>(it - parts.begin()), {}};
      if (std::string why = pick(*step, it->count, taken.indexes); !why.empty()) {
        return bad("component", why);
      }
      // Checked at each step: a step's indexes are at most a count, the product of many steps
      // of a million each is more than 64 bits hold.
      total = capped_product(total, taken.indexes.size(), kMaxEnds + 1);
      name_bytes += it->name.size() + 12;
      if (total > kMaxEnds - ends_) return too_many_ends(ep, total);
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
    if (name_bytes > (kMaxEndNameBytes - end_name_bytes_) / total) {
      return bad("component",
                 fmt::format("the endpoint expands to {} components whose names take {} bytes "
                             "each{}: the names of a graph's ends take at most {}",
                             total, name_bytes,
                             end_name_bytes_ == 0
                                 ? ""
                                 : fmt::format(", after the {} of the endpoints before it",
                                               end_name_bytes_),
                             kMaxEndNameBytes));
    }
    ends_ += total;
    end_name_bytes_ += total * name_bytes;
    append_ends(found->second, instance.name, copies, steps, out);
    return true;
  }

  bool too_many_ends(MapReader& ep, size_t total) {
    ctx_.error(
        Problem::kOutOfRange, ep.get("component"), ep.key_path("component"),
        fmt::format(
            "the endpoint expands to {}{} components{}: a graph's endpoints "
            "expand to at most {}",
            total > kMaxEnds ? "more than " : "", std::min(total, kMaxEnds),
            ends_ == 0 ? "" : fmt::format(", after the {} of the endpoints before it", ends_),
            kMaxEnds));
    return false;
  }

  // "did you mean" among a list written by hand, for the first few errors: a generated list of
  // thousands of long names would cost a table of edits per name and error.
  template <class Item>
  std::string suggest(const std::string& typed, const std::vector<Item>& items) {
    constexpr size_t kSuggested = 8;
    constexpr size_t kMaxCandidates = 4096;
    constexpr size_t kMaxTyped = 64;
    if (++suggested_ > kSuggested || items.size() > kMaxCandidates || typed.size() > kMaxTyped) {
      return "";
    }
    return did_you_mean(typed, names_of(items));
  }

  DocumentContext& ctx_;
  Graph graph_;
  std::map<std::string, size_t> device_index_;
  std::map<std::string, size_t> link_index_;
  std::map<std::string, size_t> instance_index_;
  std::map<std::pair<size_t, uint32_t>, size_t> node_index_;
  std::map<std::string, size_t> cabled_;  // end name -> its cable
  size_t ends_ = 0;                       // that endpoints expanded into, over all edges
  size_t end_name_bytes_ = 0;             // their names'
  size_t suggested_ = 0;
};

}  // namespace

std::string Graph::edge_path(size_t edge) const {
  return element_path(child_path(path, "edges"), edge);
}

std::optional<Graph> read_graph(DocumentContext& ctx, const YAML::Node& document) {
  return Reader(ctx).read(document);
}

}  // namespace etwire::control::infragraph
