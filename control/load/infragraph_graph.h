// An InfraGraph document (infragraph.dev, the vendor-neutral description of AI/HPC infrastructure
// as a graph) read against its schema and expanded into the cables between device instances.
// Devices are templates of components (nic, port, xpu, cpu, switch, ..., or another device
// composed in), instances are copies of a device, links carry a bandwidth and a latency, and
// edges join instance components written in slice notation ("leafsw[0:4]", "port[4]",
// "cx5[0].port[0]"), one to one or many to many. A device's own edges (what is inside a server
// or a switch) are not read: the twin models what lies between instances. Internal to control/.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "control/load/document_context.h"

namespace etwire::control::infragraph {

struct Component {
  std::string name;
  std::string kind;       // the schema's choice ("nic", "port", "xpu", ...), or a custom type
  bool composed = false;  // choice device: `name` is a device's, and this is `count` copies of it
  uint32_t count = 0;
  std::string path;  // "devices[0].components[1]"
  YAML::Node node;
};

struct Device {
  std::string name;
  std::vector<Component> components;
  // Holds an xpu or nic component, itself or in a device composed into it: a host. The rest
  // (ports, ASICs, cpus, memory) are switches.
  bool host = false;
};

struct Link {
  std::string name;
  std::string path;  // "links[2]"
  YAML::Node node;
  std::optional<uint64_t> bandwidth_bps;
  std::optional<uint64_t> latency_ns;
  std::string unusable;  // why its bandwidth cannot be used as a link speed ("" when it can)
};

struct Instance {
  std::string name;
  size_t device = 0;
  uint32_t count = 0;
};

// One end of a cable: one component of one copy of an instance.
struct End {
  size_t instance = 0;
  uint32_t copy = 0;
  std::string name;  // as InfraGraph names graph nodes: "host.0.nic.1", "dgx.0.cx5.1.port.0"
  // Sorts ends the way etwire numbers ports: instance (in file order), copy, then each step's
  // component (in its device's order) and index.
  std::vector<uint32_t> order;
};

// An instance copy that some cable reaches: "leafsw.0".
struct Node {
  size_t instance = 0;
  uint32_t copy = 0;
  std::string name;
  bool host = false;
};

struct Cable {
  size_t edge = 0;  // its edge, in the file's edges
  size_t link = 0;
  End a;  // from the edge's ep1
  End b;  // from its ep2
  uint32_t node_a = 0;
  uint32_t node_b = 0;
};

struct Graph {
  std::string path;  // the infrastructure's key path: "" or "infrastructure"
  YAML::Node root;   // the infrastructure object
  std::vector<Device> devices;
  std::vector<Link> links;
  std::vector<Instance> instances;
  std::vector<YAML::Node> edges;
  std::vector<Node> nodes;    // in the order cables first reach them
  std::vector<Cable> cables;  // edge by edge, in expansion order

  std::string edge_path(size_t edge) const;  // "edges[3]"
};

// Reads a document that is an Infrastructure object, or holds one under `infrastructure` (as
// InfraGraph's own annotated exports do). Every problem is reported to `ctx`, a context of the
// InfraGraph file; nullopt when there was any.
std::optional<Graph> read_graph(DocumentContext& ctx, const YAML::Node& document);

}  // namespace etwire::control::infragraph
