// The spellings of every enumerated config value, in one place: the parser accepts them (any
// case, '_' or '-'), messages list them, and the *_name() functions print the first spelling.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/collectives_config.h"
#include "config/fabric_config.h"
#include "config/mapping_config.h"
#include "config/port_config.h"
#include "config/qos_config.h"
#include "config/transport_config.h"
#include "config/verbs_config.h"
#include "config/workload_config.h"

namespace etwire::config {

template <class E>
struct NamedValue {
  std::string_view name;
  E value;
};

template <class E>
using NameTable = std::span<const NamedValue<E>>;

NameTable<Backend> backend_names();
NameTable<EcnCodepoint> ecn_codepoint_names();
NameTable<ReplayMode> replay_mode_names();
NameTable<SizeConvention> comm_size_names();
NameTable<Placement> placement_names();
NameTable<AddressSharing> address_sharing_names();
NameTable<RdmaOp> rdma_op_names();
NameTable<Retransmission> retransmission_names();
NameTable<EntropyMode> entropy_mode_names();
NameTable<Receiver> receiver_names();
NameTable<RnicKind> rnic_kind_names();
NameTable<VerbsDcqcn> verbs_dcqcn_names();
NameTable<Topology> topology_names();
NameTable<BufferMode> buffer_mode_names();
NameTable<EcnMarkPoint> ecn_mark_point_names();
NameTable<EcnSpacing> ecn_spacing_names();
NameTable<EcmpHash> ecmp_hash_names();
NameTable<LoadBalancing> load_balancing_names();
NameTable<SprayOrder> spray_order_names();
NameTable<FaultKind> fault_kind_names();
NameTable<Hierarchy> hierarchy_names();
NameTable<Protocol> protocol_names();
NameTable<TopologyPath> topology_path_names();
NameTable<ProtocolChoice> protocol_choice_names();

// Lower case with '_' turned into '-': the form names are compared in.
std::string normalize_name(std::string_view text);

template <class E>
std::optional<E> parse_named(NameTable<E> table, std::string_view text) {
  std::string wanted = normalize_name(text);
  for (const auto& entry : table) {
    if (entry.name == wanted) return entry.value;
  }
  return std::nullopt;
}

// The first spelling of `value` (tables list the canonical spelling first).
template <class E>
std::string_view name_of(NameTable<E> table, E value) {
  for (const auto& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return "?";
}

// Canonical spellings only (aliases that map to a value already listed are left out).
template <class E>
std::vector<std::string> canonical_names(NameTable<E> table) {
  std::vector<std::string> names;
  for (const auto& entry : table) {
    if (name_of(table, entry.value) == entry.name) names.emplace_back(entry.name);
  }
  return names;
}

}  // namespace etwire::config
