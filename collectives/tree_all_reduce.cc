// Double binary tree all-reduce: each chunk is cut in two halves, half t reduced up tree t to its
// root and broadcast back down. Chunks pipeline: a member passes chunk c up as soon as its
// children's chunk c arrived, and down as soon as its parent's did. Every chunk takes the same
// path, so each transfer is one operation per QP piece for a whole chunk run (chunk_run.h) with
// chunk-wise dependencies. The two trees use separate channels (QP sets), as NCCL runs them on
// separate channels.
#include <array>

#include "collectives/binary_tree.h"
#include "collectives/emitter.h"

namespace etwire::collectives {

namespace {

class DoubleBinaryTreeEmitter final : public Emitter {
 public:
  explicit DoubleBinaryTreeEmitter(const ResolvedSpec& spec) : spec_(spec), n_(spec.members()) {
    trees_[0] = in_order_tree(n_);
    trees_[1] = complementary_tree(trees_[0]);
  }

  void emit(uint32_t p, ProgramBuilder& b) override {
    b.set_buffer_bytes(spec_.layout.full_bytes());
    if (n_ == 1) return;
    const ChunkRuns runs = ChunkRuns::split({0, spec_.layout.full_bytes()}, spec_.chunks);
    // Per chunk run and tree: the receives from the (up to two) children, then from the parent.
    std::array<Transfer, 2 * 2 * 2> from_children{};
    std::array<Transfer, 2 * 2> from_parent{};
    constexpr uint32_t kUp = 0;
    constexpr uint32_t kDown = 1;
    for (uint32_t r = 0; r < runs.size(); ++r) {
      for (uint32_t t = 0; t < 2; ++t) {
        const ChunkRun half = runs[r].part(2, t);
        const BinaryTree& tree = trees_[t];
        const size_t at = (static_cast<size_t>(r) * 2 + t) * 2;
        for (int side = 0; side < 2; ++side) {
          const uint32_t child = tree.children[p][side];
          if (child != kNoMember) {
            from_children[at + side] = b.recv_run(child, half, {kUp, t}, true);
          }
        }
        if (tree.parent[p] != kNoMember) {
          b.send_run(tree.parent[p], half, {kUp, t}, {&from_children[at], 2});
        }
      }
    }
    for (uint32_t r = 0; r < runs.size(); ++r) {
      for (uint32_t t = 0; t < 2; ++t) {
        const ChunkRun half = runs[r].part(2, t);
        const BinaryTree& tree = trees_[t];
        const size_t at = static_cast<size_t>(r) * 2 + t;
        std::span<const Transfer> ready(&from_children[at * 2], 2);  // the root's result
        if (tree.parent[p] != kNoMember) {
          from_parent[at] = b.recv_run(tree.parent[p], half, {kDown, t}, false);
          ready = {&from_parent[at], 1};
        }
        for (int side = 0; side < 2; ++side) {
          const uint32_t child = tree.children[p][side];
          if (child != kNoMember) b.send_run(child, half, {kDown, t}, ready);
        }
      }
    }
  }

 private:
  const ResolvedSpec& spec_;
  uint32_t n_;
  std::array<BinaryTree, 2> trees_;
};

}  // namespace

std::unique_ptr<Emitter> make_double_binary_tree_emitter(const ResolvedSpec& spec) {
  return std::make_unique<DoubleBinaryTreeEmitter>(spec);
}

}  // namespace etwire::collectives
