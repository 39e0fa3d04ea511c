// Where each rank of a synthetic model sits and which process groups it belongs to. Rank order is
// Megatron-LM's: tensor-parallel index fastest, then data-parallel, then pipeline stage:
//
//   rank = t + tp x (d + dp x p)
//
// Expert-parallel groups are carved from the dp x tp ranks of a stage: with l = t + tp x d the
// rank's index within its stage, the EP group is l / ep and the position in it l % ep. The ranks
// holding the same experts (same position, every EP group of the stage) form the expert-data-
// parallel group that reduces the experts' gradients.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/synth/model_spec.h"

namespace etwire::synth {

enum class GroupKind { kTensor, kData, kExpert, kExpertData };

std::string_view group_kind_name(GroupKind kind);  // "tp", "dp", "ep", "edp"

struct ModelGroup {
  int64_t id = 0;  // the pg_name written on collectives, and the key in the comm-group file
  GroupKind kind = GroupKind::kTensor;
  std::vector<int32_t> ranks;  // ascending
};

struct RankCoords {
  int32_t t = 0;  // tensor-parallel index
  int32_t d = 0;  // data-parallel index
  int32_t p = 0;  // pipeline stage
};

class ModelLayout {
 public:
  // Precondition: validate(spec) found nothing.
  explicit ModelLayout(const ModelSpec& spec);

  int32_t ranks() const { return ranks_; }
  RankCoords coords(int32_t rank) const;
  int32_t rank_of(const RankCoords& c) const { return c.t + tp_ * (c.d + dp_ * c.p); }

  // The group of this kind the rank belongs to; nullopt when that group would hold the rank
  // alone (nothing to communicate) or the model has no such group (EP groups without experts).
  std::optional<int64_t> group(int32_t rank, GroupKind kind) const;
  // Every group, in id order (ids 1, 2, ...): tp, then dp, ep, edp.
  const std::vector<ModelGroup>& groups() const { return groups_; }

  // The same (t, d) one stage before / after; nullopt at the ends of the pipeline.
  std::optional<int32_t> previous_stage(int32_t rank) const;
  std::optional<int32_t> next_stage(int32_t rank) const;

  // The comm-group file etwire (and ASTRA-sim) reads: {"<id>": [ranks...], ...}.
  std::string comm_groups_json() const;

 private:
  void add_group(GroupKind kind, std::vector<int32_t> ranks);

  int32_t dp_, tp_, pp_, ep_;
  int32_t ranks_;
  std::vector<ModelGroup> groups_;
  // By kind, then rank: index into groups_ + 1, or 0 for none.
  std::vector<std::vector<uint32_t>> membership_;
};

}  // namespace etwire::synth
