#include "trace/synth/model_layout.h"

#include <nlohmann/json.hpp>

namespace etwire::synth {

std::string_view group_kind_name(GroupKind kind) {
  switch (kind) {
    case GroupKind::kTensor:
      return "tp";
    case GroupKind::kData:
      return "dp";
    case GroupKind::kExpert:
      return "ep";
    case GroupKind::kExpertData:
      return "edp";
  }
  return "?";
}

ModelLayout::ModelLayout(const ModelSpec& spec)
    : dp_(spec.dp),
      tp_(spec.tp),
      pp_(spec.pp),
      ep_(spec.ep),
      ranks_(spec.ranks()),
      membership_(4, std::vector<uint32_t>(static_cast<size_t>(spec.ranks()), 0)) {
  for (int32_t p = 0; p < pp_; ++p) {
    for (int32_t d = 0; d < dp_; ++d) {
      std::vector<int32_t> ranks;
      for (int32_t t = 0; t < tp_; ++t) ranks.push_back(rank_of({t, d, p}));
      add_group(GroupKind::kTensor, std::move(ranks));
    }
  }
  for (int32_t p = 0; p < pp_; ++p) {
    for (int32_t t = 0; t < tp_; ++t) {
      std::vector<int32_t> ranks;
      for (int32_t d = 0; d < dp_; ++d) ranks.push_back(rank_of({t, d, p}));
      add_group(GroupKind::kData, std::move(ranks));
    }
  }
  if (!spec.moe()) return;
  const int32_t stage_ranks = dp_ * tp_;
  for (int32_t p = 0; p < pp_; ++p) {
    for (int32_t g = 0; g < stage_ranks / ep_; ++g) {
      std::vector<int32_t> ranks;
      for (int32_t i = 0; i < ep_; ++i) ranks.push_back(p * stage_ranks + g * ep_ + i);
      add_group(GroupKind::kExpert, std::move(ranks));
    }
  }
  for (int32_t p = 0; p < pp_; ++p) {
    for (int32_t i = 0; i < ep_; ++i) {
      std::vector<int32_t> ranks;
      for (int32_t g = 0; g < stage_ranks / ep_; ++g)
        ranks.push_back(p * stage_ranks + g * ep_ + i);
      add_group(GroupKind::kExpertData, std::move(ranks));
    }
  }
}

void ModelLayout::add_group(GroupKind kind, std::vector<int32_t> ranks) {
  // A group of one rank communicates with nobody: no collective is written for it.
  if (ranks.size() < 2) return;
  ModelGroup group;
  group.id = static_cast<int64_t>(groups_.size()) + 1;
  group.kind = kind;
  group.ranks = std::move(ranks);
  for (int32_t rank : group.ranks) {
    membership_[static_cast<size_t>(kind)][static_cast<size_t>(rank)] =
        static_cast<uint32_t>(groups_.size()) + 1;
  }
  groups_.push_back(std::move(group));
}

RankCoords ModelLayout::coords(int32_t rank) const {
  RankCoords c;
  c.t = rank % tp_;
  c.d = (rank / tp_) % dp_;
  c.p = rank / (tp_ * dp_);
  return c;
}

std::optional<int64_t> ModelLayout::group(int32_t rank, GroupKind kind) const {
  const uint32_t index = membership_[static_cast<size_t>(kind)][static_cast<size_t>(rank)];
  if (index == 0) return std::nullopt;
  return groups_[index - 1].id;
}

std::optional<int32_t> ModelLayout::previous_stage(int32_t rank) const {
  RankCoords c = coords(rank);
  if (c.p == 0) return std::nullopt;
  --c.p;
  return rank_of(c);
}

std::optional<int32_t> ModelLayout::next_stage(int32_t rank) const {
  RankCoords c = coords(rank);
  if (c.p + 1 >= pp_) return std::nullopt;
  ++c.p;
  return rank_of(c);
}

std::string ModelLayout::comm_groups_json() const {
  // An ordered JSON object keeps the ids in numeric order for people reading the file.
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  for (const auto& group : groups_) doc[std::to_string(group.id)] = group.ranks;
  return doc.dump() + "\n";
}

}  // namespace etwire::synth
