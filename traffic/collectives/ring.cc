// Ring reduce-scatter, all-gather and all-reduce (= reduce-scatter then all-gather), one or two
// directions.
//
// Members sit on a ring; at ring index k, reduce-scatter step t sends block k-t-1 to the successor
// and reduces block k-t-2 from the predecessor, so after n-1 steps index k holds block k reduced
// over every member. All-gather step t sends block k-t (its own first) and copies block k-t-1.
// Each step's send forwards what the previous step received, hence its only dependency.
//
// Chunks pipeline: the program is step-major (step t of every chunk before step t+1), so chunk c
// moves on as soon as its own previous step arrived. The bidirectional ring runs half of every
// chunk clockwise and half counter-clockwise, on separate channels.
#include <vector>

#include "traffic/collectives/emitter.h"

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
    // Every range is a few multiplications away from these: no division per operation.
    const uint64_t full = spec.layout.full_bytes();
    for (uint32_t c = 0; c < spec.chunks; ++c) {
      for (uint32_t d = 0; d < directions_; ++d) {
        ByteRange slice = Partition::piece({0, full}, spec.chunks, c);
        if (directions_ == 2) slice = Partition::piece(slice, 2, d);
        slices_.push_back({slice.offset, Partition(slice.length, n_)});
      }
    }
    short_block_ = spec.layout.blocks().size(n_ - 1);
    short_block_chunks_ = Partition(short_block_, spec.chunks);
    long_block_chunks_ = Partition(short_block_ + 1, spec.chunks);
  }

  void emit(uint32_t position, ProgramBuilder& builder) override {
    builder.set_buffer_bytes(spec_.layout.full_bytes());
    if (n_ == 1) return;
    const uint32_t chunks = spec_.chunks;
    previous_.assign(static_cast<size_t>(directions_) * chunks, Transfer{});
    const uint32_t steps = reduce_steps_ + gather_steps_;
    for (uint32_t t = 0; t < steps; ++t) {
      for (uint32_t c = 0; c < chunks; ++c) {
        for (uint32_t d = 0; d < directions_; ++d) {
          const uint32_t k = ring_index(position, d);
          const bool reduce = t < reduce_steps_;
          // Reduce-scatter: send k-t-1, receive k-t-2; all-gather (u = t - reduce steps): send
          // k-u, receive k-u-1 (ring indices, mod n).
          const uint32_t back = reduce ? t + 1 : t - reduce_steps_;
          const uint32_t send_block = wrap(k + 2 * n_ - back);
          const uint32_t recv_block = wrap(k + 2 * n_ - back - 1);
          Transfer& previous = previous_[static_cast<size_t>(d) * chunks + c];
          const OpTag tag{c, t, d};
          builder.send(
              successor(position, d), region(d, c, send_block), tag,
              t > 0 ? std::span<const Transfer>(&previous, 1) : std::span<const Transfer>());
          previous =
              builder.recv(successor(position, 1 - d), region(d, c, recv_block), tag, reduce);
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
  // Bytes of the block at ring index `index` in chunk `chunk`, direction `direction`. Block
  // structured collectives use the semantic block of the member at that ring index, so the member
  // ends with its own block; all-reduce cuts each chunk (half) into n anonymous blocks.
  ByteRange region(uint32_t direction, uint32_t chunk, uint32_t index) const {
    const uint32_t block = ring_index(index, direction);
    if (whole_) {
      const Slice& slice = slices_[static_cast<size_t>(chunk) * directions_ + direction];
      return slice.blocks.range_at(slice.offset, block);
    }
    const ByteRange whole_block = spec_.layout.block(block);
    const Partition& chunks =
        whole_block.length > short_block_ ? long_block_chunks_ : short_block_chunks_;
    const ByteRange piece = chunks.range_at(whole_block.offset, chunk);
    return directions_ == 2 ? Partition::piece(piece, 2, direction) : piece;
  }
  struct Slice {
    uint64_t offset;
    Partition blocks;  // the chunk (half) cut into n blocks
  };

  const ResolvedSpec& spec_;
  uint32_t n_;
  uint32_t directions_;
  bool whole_;
  uint32_t reduce_steps_ = 0;
  uint32_t gather_steps_ = 0;
  std::vector<Slice> slices_;           // all-reduce: per chunk and direction
  uint64_t short_block_ = 0;            // floor(F/n): blocks are this long or one byte longer
  Partition short_block_chunks_{0, 1};  // a short block cut into chunks
  Partition long_block_chunks_{0, 1};   // blocks of one byte more
  std::vector<Transfer> previous_;      // per direction and chunk: the last receive
};

}  // namespace

std::unique_ptr<Emitter> make_ring_emitter(const ResolvedSpec& spec) {
  return std::make_unique<RingEmitter>(spec);
}

}  // namespace etwire::collectives
