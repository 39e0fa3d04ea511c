// Double binary tree all-reduce: each chunk is cut in two halves, half t reduced up tree t to its
// root and broadcast back down. Chunks pipeline: a member passes chunk c up as soon as its
// children's chunk c arrived, and down as soon as its parent's did. The two trees use separate
// channels (QP sets), as NCCL runs them on separate channels.
#include <array>
#include <vector>

#include "traffic/collectives/binary_tree.h"
#include "traffic/collectives/emitter.h"

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
    const uint32_t chunks = spec_.chunks;
    // Per chunk and tree: the receives from the (up to two) children, then from the parent.
    from_children_.assign(static_cast<size_t>(chunks) * 2 * 2, Transfer{});
    from_parent_.assign(static_cast<size_t>(chunks) * 2, Transfer{});
    constexpr uint32_t kUp = 0;
    constexpr uint32_t kDown = 1;
    for (uint32_t c = 0; c < chunks; ++c) {
      for (uint32_t t = 0; t < 2; ++t) {
        const ByteRange half = region(c, t);
        const BinaryTree& tree = trees_[t];
        const size_t at = (static_cast<size_t>(c) * 2 + t) * 2;
        for (int side = 0; side < 2; ++side) {
          const uint32_t child = tree.children[p][side];
          if (child != kNoMember)
            from_children_[at + side] = b.recv(child, half, {c, kUp, t}, true);
        }
        if (tree.parent[p] != kNoMember) {
          b.send(tree.parent[p], half, {c, kUp, t}, {&from_children_[at], 2});
        }
      }
    }
    for (uint32_t c = 0; c < chunks; ++c) {
      for (uint32_t t = 0; t < 2; ++t) {
        const ByteRange half = region(c, t);
        const BinaryTree& tree = trees_[t];
        const size_t at = static_cast<size_t>(c) * 2 + t;
        std::span<const Transfer> ready(&from_children_[at * 2], 2);  // the root's result
        if (tree.parent[p] != kNoMember) {
          from_parent_[at] = b.recv(tree.parent[p], half, {c, kDown, t}, false);
          ready = {&from_parent_[at], 1};
        }
        for (int side = 0; side < 2; ++side) {
          const uint32_t child = tree.children[p][side];
          if (child != kNoMember) b.send(child, half, {c, kDown, t}, ready);
        }
      }
    }
  }

 private:
  ByteRange region(uint32_t chunk, uint32_t tree) const {
    return Partition::piece(Partition::piece({0, spec_.layout.full_bytes()}, spec_.chunks, chunk),
                            2, tree);
  }

  const ResolvedSpec& spec_;
  uint32_t n_;
  std::array<BinaryTree, 2> trees_;
  std::vector<Transfer> from_children_;
  std::vector<Transfer> from_parent_;
};

}  // namespace

std::unique_ptr<Emitter> make_double_binary_tree_emitter(const ResolvedSpec& spec) {
  return std::make_unique<DoubleBinaryTreeEmitter>(spec);
}

}  // namespace etwire::collectives
