// PAT (parallel aggregated trees) all-gather and reduce-scatter: a Bruck algorithm with its
// distances reversed. Member b's block travels along a binomial tree rooted at b over the ring
// offsets k = (x - b) mod n of the members x: at the step of distance 2^d, every member whose
// offset is a multiple of 2^(d+1) passes the block on to the member 2^d further (when that
// offset is below n). All-gather takes the distances from the largest down, so the first step
// sends one block across half the group and the last sends about half of all blocks to the
// neighbour: the long hops carry little, the many blocks travel short ones. Reduce-scatter runs
// the trees backwards, from distance 1 up, each member adding what its subtree sent before
// passing the block towards its owner. Either way a member sends n-1 blocks in ceil(log2 n)
// steps, each to one peer.
//
// A block is one transfer per chunk run: the blocks a step sends lie apart in the buffer. Within a
// step, sender and receiver both go through the blocks by ascending offset, so the k-th send on a
// channel meets the k-th receive.
#include <array>
#include <bit>
#include <vector>

#include "collectives/emitter.h"

namespace etwire::collectives {

namespace {

class PatEmitter final : public Emitter {
 public:
  explicit PatEmitter(const ResolvedSpec& spec)
      : spec_(spec),
        n_(spec.members()),
        steps_(n_ > 1 ? static_cast<uint32_t>(std::bit_width(n_ - 1)) : 0),
        gather_(spec.is(trace::CollectiveType::kAllGather)),
        held_(n_) {}

  void emit(uint32_t x, ProgramBuilder& b) override {
    b.set_buffer_bytes(spec_.layout.full_bytes());
    for (auto& runs : held_) runs = {};
    for (uint32_t t = 0; t < steps_; ++t) {
      const uint32_t d = gather_ ? steps_ - 1 - t : t;
      const uint32_t distance = 1u << d;
      const uint32_t span = distance << 1;
      // Offsets k of the blocks this member holds at a node of the trees with a child at k + 2^d.
      for (uint32_t k = 0; k + distance < n_; k += span) {
        if (gather_) {
          send(b, block_at(x, k), x + distance, t);
        } else {
          receive(b, block_at(x, k), x + distance, t);
        }
      }
      // Offsets k whose lowest set bit is 2^d: the block goes to (all-gather: comes from) the
      // member 2^d nearer its owner.
      for (uint32_t k = distance; k < n_; k += span) {
        if (gather_) {
          receive(b, block_at(x, k), x + n_ - distance, t);
        } else {
          send(b, block_at(x, k), x + n_ - distance, t);
        }
      }
    }
  }

 private:
  // The block whose owner lies k members before x.
  uint32_t block_at(uint32_t x, uint32_t k) const { return x >= k ? x - k : x + n_ - k; }
  uint32_t wrap(uint32_t x) const { return x >= n_ ? x - n_ : x; }

  ChunkRuns runs(uint32_t block) const {
    return ChunkRuns::split(spec_.layout.block(block), spec_.chunks);
  }

  // A send of `block` to `peer` (< 2n), after the block's last receive.
  void send(ProgramBuilder& b, uint32_t block, uint32_t peer, uint32_t step) {
    const std::array<Transfer, 2>& after = held_[block];
    for (const ChunkRun& run : runs(block)) b.send_run(wrap(peer), run, {step, 0}, after);
  }

  // A receive of `block` from `peer` (< 2n). Reduce-scatter adds it to the member's partial sum
  // after the block's previous receive, one child after another as NCCL's steps go.
  void receive(ProgramBuilder& b, uint32_t block, uint32_t peer, uint32_t step) {
    const std::array<Transfer, 2> previous = held_[block];
    const ChunkRuns block_runs = runs(block);
    for (uint32_t r = 0; r < block_runs.size(); ++r) {
      held_[block][r] = b.recv_run(wrap(peer), block_runs[r], {step, 0}, !gather_, previous);
    }
  }

  const ResolvedSpec& spec_;
  uint32_t n_;
  uint32_t steps_;
  bool gather_;
  // Per block, the runs of its last receive (kept between members for their storage).
  std::vector<std::array<Transfer, 2>> held_;
};

}  // namespace

std::unique_ptr<Emitter> make_pat_emitter(const ResolvedSpec& spec) {
  return std::make_unique<PatEmitter>(spec);
}

}  // namespace etwire::collectives
