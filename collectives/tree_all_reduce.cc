// Tree all-reduce over one tree per channel (tree_layout.h): the double binary tree, and NCCL's
// tree (a double binary tree over hosts, a chain inside each). Each chunk is cut into one share
// per channel; share t is reduced up tree t to its root and broadcast back down. Chunks pipeline:
// a member passes chunk c up as soon as its children's chunk c arrived, and down as soon as its
// parent's did. Every chunk takes the same path, so each transfer is one operation per QP piece
// for a whole chunk run (chunk_run.h) with chunk-wise dependencies. Each tree runs on its own
// channel (QP set), as NCCL runs its trees on separate channels.
#include <vector>

#include "collectives/emitter.h"
#include "collectives/tree_layout.h"

namespace etwire::collectives {

namespace {

class TreeAllReduceEmitter final : public Emitter {
 public:
  explicit TreeAllReduceEmitter(const ResolvedSpec& spec)
      : spec_(spec),
        n_(spec.members()),
        trees_(all_reduce_trees(spec)),
        pipelines_(static_cast<uint32_t>(trees_.size())) {
    from_children_.resize(size_t{2} * pipelines_ * kMaxTreeChildren);
    from_parent_.resize(size_t{2} * pipelines_);
  }

  void emit(uint32_t p, ProgramBuilder& b) override {
    b.set_buffer_bytes(spec_.layout.full_bytes());
    if (n_ == 1) return;
    const ChunkRuns runs = ChunkRuns::split({0, spec_.layout.full_bytes()}, spec_.chunks);
    constexpr uint32_t kUp = 0;
    constexpr uint32_t kDown = 1;
    // Per chunk run and tree: the receives from the children, then from the parent.
    for (uint32_t r = 0; r < runs.size(); ++r) {
      for (uint32_t t = 0; t < pipelines_; ++t) {
        const ChunkRun share = runs[r].part(pipelines_, t);
        const Tree& tree = trees_[t];
        Transfer* received = &from_children_[(size_t{r} * pipelines_ + t) * kMaxTreeChildren];
        for (uint32_t side = 0; side < kMaxTreeChildren; ++side) {
          const uint32_t child = tree.children[p][side];
          received[side] =
              child != kNoMember ? b.recv_run(child, share, {kUp, t}, true) : Transfer{};
        }
        if (tree.parent[p] != kNoMember) {
          b.send_run(tree.parent[p], share, {kUp, t}, {received, kMaxTreeChildren});
        }
      }
    }
    for (uint32_t r = 0; r < runs.size(); ++r) {
      for (uint32_t t = 0; t < pipelines_; ++t) {
        const ChunkRun share = runs[r].part(pipelines_, t);
        const Tree& tree = trees_[t];
        const size_t at = size_t{r} * pipelines_ + t;
        // The root's result is its children's sum; everyone else's comes from its parent.
        std::span<const Transfer> ready(&from_children_[at * kMaxTreeChildren], kMaxTreeChildren);
        if (tree.parent[p] != kNoMember) {
          from_parent_[at] = b.recv_run(tree.parent[p], share, {kDown, t}, false);
          ready = {&from_parent_[at], 1};
        }
        for (uint32_t side = 0; side < kMaxTreeChildren; ++side) {
          const uint32_t child = tree.children[p][side];
          if (child != kNoMember) b.send_run(child, share, {kDown, t}, ready);
        }
      }
    }
  }

 private:
  const ResolvedSpec& spec_;
  uint32_t n_;
  std::vector<Tree> trees_;
  uint32_t pipelines_;
  // Per chunk run and tree, kept between members for their storage.
  std::vector<Transfer> from_children_;
  std::vector<Transfer> from_parent_;
};

}  // namespace

std::unique_ptr<Emitter> make_tree_all_reduce_emitter(const ResolvedSpec& spec) {
  return std::make_unique<TreeAllReduceEmitter>(spec);
}

}  // namespace etwire::collectives
