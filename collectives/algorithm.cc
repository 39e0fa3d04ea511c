#include "collectives/algorithm.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace etwire::collectives {

namespace {

using trace::CollectiveType;

constexpr std::array<std::string_view, kAlgorithmCount> kNames = {
    "ring",   "bidir-ring", "halving-doubling", "double-binary-tree",
    "direct", "pxn",        "dissemination",    "tree",
    "pat",    "nvls",       "nvls-tree",        "hierarchical",
    "collnet"};

std::string normalize(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    out += c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace

std::string_view algorithm_name(Algorithm algorithm) {
  return kNames[static_cast<size_t>(algorithm)];
}

std::optional<Algorithm> parse_algorithm(std::string_view text) {
  const std::string name = normalize(text);
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (name == kNames[i]) return static_cast<Algorithm>(i);
  }
  if (name == "bidirectional-ring") return Algorithm::kBidirectionalRing;
  if (name == "hd" || name == "rabenseifner") return Algorithm::kHalvingDoubling;
  if (name == "dbt") return Algorithm::kDoubleBinaryTree;
  return std::nullopt;
}

std::string algorithm_names() {
  std::string out;
  for (std::string_view name : kNames) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

std::string_view collective_kind_name(CollectiveKind kind) {
  return kind ? trace::collective_type_name(*kind) : std::string_view("SEND_RECV");
}

std::vector<Algorithm> applicable_algorithms(CollectiveKind kind) {
  // Named through config::, not the collectives alias: clang 14 (the fuzz build's compiler) refuses
  // `using enum` on a type alias.
  using enum config::Algorithm;
  if (!kind) return {kDirect};
  switch (*kind) {
    case CollectiveType::kAllReduce:
      return {kRing, kBidirectionalRing, kHalvingDoubling, kDoubleBinaryTree, kTree,
              kNvls, kNvlsTree,          kHierarchical,    kCollNet};
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock:
    case CollectiveType::kAllGather:
      return {kRing, kBidirectionalRing, kHalvingDoubling, kDirect, kPat};
    case CollectiveType::kAllToAll:
      return {kDirect, kPxn};
    case CollectiveType::kBroadcast:
    case CollectiveType::kReduce:
      return {kRing, kDirect};
    case CollectiveType::kGather:
    case CollectiveType::kScatter:
      return {kDirect};
    case CollectiveType::kBarrier:
      return {kDissemination};
  }
  return {};
}

Algorithm default_algorithm(CollectiveKind kind) {
  return applicable_algorithms(kind).front();
}

bool is_applicable(Algorithm algorithm, CollectiveKind kind) {
  auto all = applicable_algorithms(kind);
  return std::find(all.begin(), all.end(), algorithm) != all.end();
}

}  // namespace etwire::collectives
