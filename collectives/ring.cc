// Ring reduce-scatter, all-gather and all-reduce (= reduce-scatter then all-gather), one or two
// directions.
//
// Members sit on a ring; at ring index k, reduce-scatter step t sends block k-t-1 to the successor
// and reduces block k-t-2 from the predecessor, so after n-1 steps index k holds block k reduced
// over every member. All-gather step t sends block k-t (its own first) and copies block k-t-1.
// Each step's send forwards what the previous step received, hence its only dependency.
//
// Chunks pipeline: every chunk does the same thing at every step, so one operation per step, QP
// piece and chunk run covers all chunks (chunk_run.h); its chunks are posted in order and chunk c
// of a send waits only for chunk c of the previous step's receive, so chunk c moves on as soon as
// its own previous step arrived. The bidirectional ring runs half of every chunk clockwise and
// half counter-clockwise, on separate channels.
#include <array>

#include "collectives/emitter.h"

namespace etwire::collectives {

namespace {

using trace::CollectiveType;

class RingEmitter final : public Emitter {
 public:
  explicit RingEmitter(const ResolvedSpec& spec)
      : spec_(spec),
        n_(spec.members()),
        directions_(spec.algorithm == Algorithm::kBidirectionalRing ? 2 : 1),
        whole_(spec.layout.shape() == BufferShape::kWhole) {
    const bool all_reduce = spec.is(CollectiveType::kAllReduce);
    reduce_steps_ = all_reduce || !spec.is(CollectiveType::kAllGather) ? n_ - 1 : 0;
    gather_steps_ = all_reduce || spec.is(CollectiveType::kAllGather) ? n_ - 1 : 0;
    // Every range is a few additions and multiplications away from these: no division per
    // operation.
    const ChunkRuns chunks = ChunkRuns::split({0, spec.layout.full_bytes()}, spec.chunks);
    for (uint32_t d = 0; d < directions_; ++d) {
      slices_[d] = directions_ == 2 ? chunks.part(2, d) : chunks;
      for (uint32_t r = 0; r < slices_[d].size(); ++r) {
        slice_blocks_[d][r] = Partition(slices_[d][r].first.length, n_);
      }
    }
    const uint64_t short_block = spec.layout.blocks().size(n_ - 1);
    short_block_chunks_ = ChunkRuns::split({0, short_block}, spec.chunks);
    long_block_chunks_ = ChunkRuns::split({0, short_block + 1}, spec.chunks);
    short_block_ = short_block;
  }

  void emit(uint32_t position, ProgramBuilder& builder) override {
    builder.set_buffer_bytes(spec_.layout.full_bytes());
    if (n_ == 1) return;
    std::array<std::array<Transfer, 2>, 2> previous{};  // per direction: the last receive's runs
    const uint32_t steps = reduce_steps_ + gather_steps_;
    for (uint32_t t = 0; t < steps; ++t) {
      for (uint32_t d = 0; d < directions_; ++d) {
        const uint32_t k = ring_index(position, d);
        const bool reduce = t < reduce_steps_;
        // Reduce-scatter: send k-t-1, receive k-t-2; all-gather (u = t - reduce steps): send
        // k-u, receive k-u-1 (ring indices, mod n).
        const uint32_t back = reduce ? t + 1 : t - reduce_steps_;
        const uint32_t send_block = wrap(k + 2 * n_ - back);
        const uint32_t recv_block = wrap(k + 2 * n_ - back - 1);
        const StepTag tag{t, d};
        // The send's block is the one the previous step received, so its runs are that
        // receive's runs and each depends on exactly one of them.
        const std::span<const Transfer> after =
            t > 0 ? std::span<const Transfer>(previous[d]) : std::span<const Transfer>();
        for (const ChunkRun& run : region(d, send_block)) {
          builder.send_run(successor(position, d), run, tag, after);
        }
        previous[d] = {};
        const ChunkRuns received = region(d, recv_block);
        for (uint32_t r = 0; r < received.size(); ++r) {
          previous[d][r] = builder.recv_run(successor(position, 1 - d), received[r], tag, reduce);
        }
      }
    }
  }

 private:
  // Direction 0 walks positions upwards, direction 1 downwards; the map is its own inverse.
  uint32_t ring_index(uint32_t position, uint32_t direction) const {
    return direction == 0 ? position : wrap(n_ - position);
  }
  uint32_t successor(uint32_t position, uint32_t direction) const {
    return direction == 0 ? wrap(position + 1) : wrap(position + n_ - 1);
  }
  // x mod n for x < 3n, without a division.
  uint32_t wrap(uint32_t x) const {
    if (x >= n_) x -= n_;
    if (x >= n_) x -= n_;
    return x;
  }
  // Bytes of the block at ring index `index` in direction `direction`, in every chunk. Block
  // structured collectives use the semantic block of the member at that ring index, so the member
  // ends with its own block; all-reduce cuts each chunk (half) into n anonymous blocks.
  ChunkRuns region(uint32_t direction, uint32_t index) const {
    const uint32_t block = ring_index(index, direction);
    if (whole_) {
      ChunkRuns out;
      const ChunkRuns& slices = slices_[direction];
      for (uint32_t r = 0; r < slices.size(); ++r) {
        out.push_back(slices[r].part(slice_blocks_[direction][r], block));
      }
      return out;
    }
    const ByteRange whole_block = spec_.layout.block(block);
    const ChunkRuns& chunks =
        whole_block.length > short_block_ ? long_block_chunks_ : short_block_chunks_;
    const ChunkRuns pieces = chunks.shifted(whole_block.offset);
    return directions_ == 2 ? pieces.part(2, direction) : pieces;
  }

  const ResolvedSpec& spec_;
  uint32_t n_;
  uint32_t directions_;
  bool whole_;
  uint32_t reduce_steps_ = 0;
  uint32_t gather_steps_ = 0;
  // All-reduce, per direction: the chunk (half) runs and, per run, its cut into n blocks.
  std::array<ChunkRuns, 2> slices_;
  std::array<std::array<Partition, 2>, 2> slice_blocks_{
      {{Partition(0, 1), Partition(0, 1)}, {Partition(0, 1), Partition(0, 1)}}};
  uint64_t short_block_ = 0;      // floor(F/n): blocks are this long or one byte longer
  ChunkRuns short_block_chunks_;  // a short block at offset 0 cut into chunks
  ChunkRuns long_block_chunks_;   // a block of one byte more
};

}  // namespace

std::unique_ptr<Emitter> make_ring_emitter(const ResolvedSpec& spec) {
  return std::make_unique<RingEmitter>(spec);
}

}  // namespace etwire::collectives
