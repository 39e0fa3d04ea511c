#include "config/enum_names.h"

#include <cctype>

namespace etwire::config {

namespace {

constexpr NamedValue<Backend> kBackends[] = {
    {"loopback", Backend::kLoopback}, {"dpdk", Backend::kDpdk}, {"verbs", Backend::kVerbs}};
constexpr NamedValue<EcnCodepoint> kEcnCodepoints[] = {
    {"not-ect", EcnCodepoint::kNotEct}, {"ect0", EcnCodepoint::kEct0},
    {"ect1", EcnCodepoint::kEct1},      {"ce", EcnCodepoint::kCe},
    {"ect-0", EcnCodepoint::kEct0},     {"ect-1", EcnCodepoint::kEct1},
    {"non-ect", EcnCodepoint::kNotEct}};
constexpr NamedValue<ReplayMode> kReplayModes[] = {{"full", ReplayMode::kFull},
                                                   {"comm-only", ReplayMode::kCommOnly}};
constexpr NamedValue<SizeConvention> kCommSizes[] = {{"input", SizeConvention::kInput},
                                                     {"output", SizeConvention::kOutput}};
constexpr NamedValue<Placement> kPlacements[] = {{"block", Placement::kBlock},
                                                 {"round-robin", Placement::kRoundRobin},
                                                 {"explicit", Placement::kExplicit},
                                                 {"rail", Placement::kRail}};
constexpr NamedValue<AddressSharing> kAddressSharing[] = {{"shared", AddressSharing::kShared},
                                                          {"per-rank", AddressSharing::kPerRank}};
constexpr NamedValue<Retransmission> kRetransmissions[] = {{"adaptive", Retransmission::kAdaptive},
                                                           {"fixed", Retransmission::kFixed}};
constexpr NamedValue<Receiver> kReceivers[] = {{"go-back-n", Receiver::kGoBackN},
                                               {"out-of-order", Receiver::kOutOfOrder}};
constexpr NamedValue<EntropyMode> kEntropyModes[] = {{"per-qp", EntropyMode::kPerQp},
                                                     {"spray", EntropyMode::kSpray}};
constexpr NamedValue<RdmaOp> kRdmaOps[] = {{"write", RdmaOp::kWrite},
                                           {"write-with-imm", RdmaOp::kWriteWithImmediate},
                                           {"send", RdmaOp::kSend},
                                           {"write-with-immediate", RdmaOp::kWriteWithImmediate}};
constexpr NamedValue<RnicKind> kRnicKinds[] = {{"hardware", RnicKind::kHardware},
                                               {"software", RnicKind::kSoftware}};
constexpr NamedValue<VerbsDcqcn> kVerbsDcqcn[] = {{"check", VerbsDcqcn::kCheck},
                                                  {"apply", VerbsDcqcn::kApply}};
constexpr NamedValue<Topology> kTopologies[] = {{"single-switch", Topology::kSingleSwitch},
                                                {"leaf-spine", Topology::kLeafSpine},
                                                {"three-tier", Topology::kThreeTier}};
constexpr NamedValue<Hierarchy> kHierarchies[] = {{"off", Hierarchy::kOff},
                                                  {"involved-dim", Hierarchy::kInvolvedDim}};
constexpr NamedValue<ProtocolChoice> kProtocolChoices[] = {{"simple", ProtocolChoice::kSimple},
                                                           {"ll", ProtocolChoice::kLl},
                                                           {"ll128", ProtocolChoice::kLl128},
                                                           {"auto", ProtocolChoice::kAuto}};
constexpr NamedValue<TopologyPath> kTopologyPaths[] = {{"pci-switch", TopologyPath::kPciSwitch},
                                                       {"cpu", TopologyPath::kCpu},
                                                       {"system", TopologyPath::kSystem}};
constexpr NamedValue<Protocol> kProtocols[] = {
    {"simple", Protocol::kSimple}, {"ll", Protocol::kLl}, {"ll128", Protocol::kLl128}};
constexpr NamedValue<BufferMode> kBufferModes[] = {{"shared", BufferMode::kShared},
                                                   {"per-port", BufferMode::kPerPort},
                                                   {"dynamic", BufferMode::kDynamic}};
constexpr NamedValue<EcnMarkPoint> kEcnMarkPoints[] = {{"dequeue", EcnMarkPoint::kDequeue},
                                                       {"enqueue", EcnMarkPoint::kEnqueue}};
constexpr NamedValue<EcnSpacing> kEcnSpacings[] = {{"independent", EcnSpacing::kIndependent},
                                                   {"uniform", EcnSpacing::kUniform},
                                                   {"wait", EcnSpacing::kWait}};
constexpr NamedValue<FaultKind> kFaultKinds[] = {{"link-down", FaultKind::kLinkDown},
                                                 {"degrade", FaultKind::kDegrade},
                                                 {"pfc-storm", FaultKind::kPfcStorm},
                                                 {"lossy", FaultKind::kLossy}};
constexpr NamedValue<EcmpHash> kEcmpHashes[] = {{"udp-source-port", EcmpHash::kUdpSourcePort},
                                                {"five-tuple", EcmpHash::kFiveTuple}};
constexpr NamedValue<LoadBalancing> kLoadBalancings[] = {{"ecmp", LoadBalancing::kEcmp},
                                                         {"spray", LoadBalancing::kSpray},
                                                         {"flowlet", LoadBalancing::kFlowlet},
                                                         {"adaptive", LoadBalancing::kAdaptive}};
constexpr NamedValue<SprayOrder> kSprayOrders[] = {{"random", SprayOrder::kRandom},
                                                   {"round-robin", SprayOrder::kRoundRobin},
                                                   {"entropy", SprayOrder::kEntropy}};

}  // namespace

NameTable<Backend> backend_names() {
  return kBackends;
}
NameTable<EcnCodepoint> ecn_codepoint_names() {
  return kEcnCodepoints;
}
NameTable<ReplayMode> replay_mode_names() {
  return kReplayModes;
}
NameTable<SizeConvention> comm_size_names() {
  return kCommSizes;
}
NameTable<Placement> placement_names() {
  return kPlacements;
}
NameTable<AddressSharing> address_sharing_names() {
  return kAddressSharing;
}
NameTable<RdmaOp> rdma_op_names() {
  return kRdmaOps;
}
NameTable<Receiver> receiver_names() {
  return kReceivers;
}
NameTable<EntropyMode> entropy_mode_names() {
  return kEntropyModes;
}
NameTable<Retransmission> retransmission_names() {
  return kRetransmissions;
}
NameTable<RnicKind> rnic_kind_names() {
  return kRnicKinds;
}
NameTable<VerbsDcqcn> verbs_dcqcn_names() {
  return kVerbsDcqcn;
}
NameTable<Topology> topology_names() {
  return kTopologies;
}
NameTable<Hierarchy> hierarchy_names() {
  return kHierarchies;
}
NameTable<TopologyPath> topology_path_names() {
  return kTopologyPaths;
}

NameTable<Protocol> protocol_names() {
  return kProtocols;
}
NameTable<ProtocolChoice> protocol_choice_names() {
  return kProtocolChoices;
}
NameTable<BufferMode> buffer_mode_names() {
  return kBufferModes;
}
NameTable<EcnMarkPoint> ecn_mark_point_names() {
  return kEcnMarkPoints;
}
NameTable<EcnSpacing> ecn_spacing_names() {
  return kEcnSpacings;
}
NameTable<FaultKind> fault_kind_names() {
  return kFaultKinds;
}

NameTable<EcmpHash> ecmp_hash_names() {
  return kEcmpHashes;
}
NameTable<LoadBalancing> load_balancing_names() {
  return kLoadBalancings;
}
NameTable<SprayOrder> spray_order_names() {
  return kSprayOrders;
}

std::string normalize_name(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    out += c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string_view backend_name(Backend backend) {
  return name_of(backend_names(), backend);
}
std::string_view ecn_codepoint_name(EcnCodepoint codepoint) {
  return name_of(ecn_codepoint_names(), codepoint);
}
std::string_view replay_mode_name(ReplayMode mode) {
  return name_of(replay_mode_names(), mode);
}
std::string_view placement_name(Placement placement) {
  return name_of(placement_names(), placement);
}
std::string_view address_sharing_name(AddressSharing sharing) {
  return name_of(address_sharing_names(), sharing);
}
std::string_view rdma_op_name(RdmaOp op) {
  return name_of(rdma_op_names(), op);
}
std::string_view receiver_name(Receiver receiver) {
  return name_of(receiver_names(), receiver);
}
std::string_view entropy_mode_name(EntropyMode mode) {
  return name_of(entropy_mode_names(), mode);
}
std::string_view retransmission_name(Retransmission mode) {
  return name_of(retransmission_names(), mode);
}
std::string_view rnic_kind_name(RnicKind kind) {
  return name_of(rnic_kind_names(), kind);
}
std::string_view verbs_dcqcn_name(VerbsDcqcn mode) {
  return name_of(verbs_dcqcn_names(), mode);
}
std::string_view topology_name(Topology topology) {
  return name_of(topology_names(), topology);
}
std::string_view buffer_mode_name(BufferMode mode) {
  return name_of(buffer_mode_names(), mode);
}
std::string_view ecn_mark_point_name(EcnMarkPoint point) {
  return name_of(ecn_mark_point_names(), point);
}
std::string_view ecn_spacing_name(EcnSpacing spacing) {
  return name_of(ecn_spacing_names(), spacing);
}
std::string_view fault_kind_name(FaultKind kind) {
  return name_of(fault_kind_names(), kind);
}

std::string_view ecmp_hash_name(EcmpHash hash) {
  return name_of(ecmp_hash_names(), hash);
}
std::string_view load_balancing_name(LoadBalancing mode) {
  return name_of(load_balancing_names(), mode);
}
std::string_view spray_order_name(SprayOrder order) {
  return name_of(spray_order_names(), order);
}

}  // namespace etwire::config
