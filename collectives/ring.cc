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
// half counter-clockwise, on separate channels; with C channels each chunk is cut in C shares,
// each running on a ring of its own (ring_layout.h), hops between hosts relayed onto one rail.
#include <algorithm>
#include <array>
#include <vector>

#include "collectives/emitter.h"
#include "collectives/ring_layout.h"

namespace etwire::collectives {

namespace {

using trace::CollectiveType;

class RingEmitter final : public Emitter {
 public:
  explicit RingEmitter(const ResolvedSpec& spec)
      : spec_(spec),
        n_(spec.members()),
        rings_(spec),
        pipelines_(rings_.pipelines()),
        whole_(spec.layout.shape() == BufferShape::kWhole) {
    const bool all_reduce = spec.is(CollectiveType::kAllReduce);
    reduce_steps_ = all_reduce || !spec.is(CollectiveType::kAllGather) ? n_ - 1 : 0;
    gather_steps_ = all_reduce || spec.is(CollectiveType::kAllGather) ? n_ - 1 : 0;
    // Every range is a few additions and multiplications away from these: no division per
    // operation.
    const ChunkRuns chunks = ChunkRuns::split({0, spec.layout.full_bytes()}, spec.chunks);
    slices_.resize(pipelines_);
    slice_blocks_.assign(pipelines_, {Partition(0, 1), Partition(0, 1)});
    for (uint32_t d = 0; d < pipelines_; ++d) {
      slices_[d] = pipelines_ > 1 ? chunks.part(pipelines_, d) : chunks;
      for (uint32_t r = 0; r < slices_[d].size(); ++r) {
        slice_blocks_[d][r] = Partition(slices_[d][r].first.length, n_);
      }
    }
    const uint64_t short_block = spec.layout.blocks().size(n_ - 1);
    short_block_chunks_ = ChunkRuns::split({0, short_block}, spec.chunks);
    long_block_chunks_ = ChunkRuns::split({0, short_block + 1}, spec.chunks);
    short_block_ = short_block;
    // A relay stages each step's block of each pipeline in a slot of its own after the buffer.
    if (rings_.has_relays()) {
      for (uint32_t d = 0; d < pipelines_; ++d) {
        for (uint32_t i = 0; i < n_; ++i) slot_bytes_ = std::max(slot_bytes_, bytes(region(d, i)));
      }
    }
  }

  void emit(uint32_t position, ProgramBuilder& builder) override {
    begin(position, builder);
    if (n_ == 1) return;
    std::vector<Transfer>& previous = previous_;  // the last receive's runs
    previous.assign(pipelines_ * 2, {});
    for (uint32_t t = 0; t < steps(); ++t) emit_step(position, t, previous, builder);
  }

  // Whole steps: a step's sends depend on the receive of the step before it, and its relays on
  // their own receives, as Emitter::emit_part asks of parts.
  void emit_part(EmitCursor& cursor, uint64_t target_ops, ProgramBuilder& builder) override {
    if (cursor.next_step == 0) {
      begin(cursor.position, builder);
      cursor.carry.assign(pipelines_ * 2, {});
    }
    uint32_t t = cursor.next_step;
    if (n_ > 1) {
      do {
        emit_step(cursor.position, t++, cursor.carry, builder);
      } while (t < steps() && builder.member_ops() < target_ops);
    }
    cursor.next_step = t;
    cursor.done = n_ == 1 || t == steps();
  }

  // Over its steps a member at ring index k sends every block but k (reduce-scatter) and every
  // block but k+1 (all-gather) to one neighbour, and a relay of hop h every block but h and h+1
  // to the hop's receiver: each is the pipeline's total less one block.
  bool summarize(uint32_t position, std::vector<Flow>& out) override {
    out.clear();
    if (n_ == 1) return true;
    if (totals_.empty()) sum_blocks();
    for (uint32_t d = 0; d < pipelines_; ++d) {
      const uint32_t k = rings_.index_of(d, position);
      const uint32_t next_hop = rings_.relay_of_hop(d, k);
      send_all_but(d, k, next_hop != RingLayout::kNone ? next_hop : member(d, k + 1), position,
                   out);
      const uint32_t hop = rings_.hop_relayed_by(d, position);
      if (hop != RingLayout::kNone) send_all_but(d, hop, member(d, hop + 1), position, out);
    }
    // A relay may send to the member its own sends go to (two hosts): one flow per QP.
    merge_flows(out);
    return true;
  }

 private:
  uint32_t steps() const { return reduce_steps_ + gather_steps_; }

  void begin(uint32_t position, ProgramBuilder& builder) const {
    bool relays = false;
    for (uint32_t d = 0; d < pipelines_; ++d) {
      relays = relays || rings_.hop_relayed_by(d, position) != RingLayout::kNone;
    }
    builder.set_buffer_bytes(spec_.layout.full_bytes() +
                             (relays ? uint64_t{pipelines_} * steps() * slot_bytes_ : 0));
  }

  // Step t of every pipeline. previous[2d], previous[2d + 1]: the runs of pipeline d's last
  // receive, replaced by this step's.
  void emit_step(uint32_t position, uint32_t t, std::vector<Transfer>& previous,
                 ProgramBuilder& builder) {
    for (uint32_t d = 0; d < pipelines_; ++d) {
      const uint32_t k = rings_.index_of(d, position);
      const StepTag tag{t, d};
      // The send's block is the one the previous step received, so its runs are that
      // receive's runs and each depends on exactly one of them.
      const std::span<const Transfer> after =
          t > 0 ? std::span<const Transfer>(&previous[2 * d], 2) : std::span<const Transfer>();
      const uint32_t next_hop = rings_.relay_of_hop(d, k);
      const uint32_t to = next_hop != RingLayout::kNone ? next_hop : member(d, k + 1);
      for (const ChunkRun& run : region(d, send_block(k, t))) {
        builder.send_run(to, run, tag, after);
      }
      previous[2 * d] = previous[2 * d + 1] = {};
      const uint32_t back_hop = rings_.relay_of_hop(d, wrap(k + n_ - 1));
      const uint32_t from = back_hop != RingLayout::kNone ? back_hop : member(d, k + n_ - 1);
      const ChunkRuns received = region(d, wrap(send_block(k, t) + n_ - 1));
      for (uint32_t r = 0; r < received.size(); ++r) {
        previous[2 * d + r] = builder.recv_run(from, received[r], tag, t < reduce_steps_);
      }
      relay(position, d, t, builder);
    }
  }

  // Ring index of the block the member at ring index k sends at step t. Reduce-scatter: k-t-1
  // (and it receives k-t-2); all-gather (u = t - reduce steps): k-u (receiving k-u-1).
  uint32_t send_block(uint32_t k, uint32_t t) const {
    const uint32_t back = t < reduce_steps_ ? t + 1 : t - reduce_steps_;
    return wrap(k + 2 * n_ - back);
  }
  // The member at ring index `index` (< 3n) of pipeline d.
  uint32_t member(uint32_t d, uint32_t index) const { return rings_.member_at(d, wrap(index)); }
  // x mod n for x < 3n, without a division.
  uint32_t wrap(uint32_t x) const {
    if (x >= n_) x -= n_;
    if (x >= n_) x -= n_;
    return x;
  }
  static uint64_t bytes(const ChunkRuns& runs) {
    uint64_t total = 0;
    for (const ChunkRun& run : runs) total += run.first.length * run.chunk_count;
    return total;
  }

  // Where `position` relays a hop of pipeline d: what the hop's sender sends at step t arrives in
  // a staging slot of its own and leaves again for the hop's receiver, each chunk as soon as it
  // is in.
  void relay(uint32_t position, uint32_t d, uint32_t t, ProgramBuilder& builder) {
    const uint32_t hop = rings_.hop_relayed_by(d, position);
    if (hop == RingLayout::kNone) return;
    const ChunkRuns sent = region(d, send_block(hop, t));
    uint64_t offset = spec_.layout.full_bytes() + (uint64_t{d} * steps() + t) * slot_bytes_;
    const StepTag tag{t, d};
    for (const ChunkRun& run : sent) {
      const ChunkRun staged{
          run.chunk_begin, run.chunk_count, {offset, run.first.length}, run.first.length};
      offset += run.first.length * run.chunk_count;
      const Transfer in = builder.recv_run(member(d, hop), staged, tag, false);
      builder.send_run(member(d, hop + 1), staged, tag, std::span<const Transfer>(&in, 1));
    }
  }

  // Per QP piece of a pipeline: the bytes and chunk operations of a set of sends.
  struct PieceTally {
    std::vector<uint64_t> bytes;
    std::vector<uint64_t> operations;
  };
  // Adds the sends of block `index` of pipeline d, as the builder splits them over the QPs.
  void tally(uint32_t d, uint32_t index, PieceTally& into) const {
    for (const ChunkRun& run : region(d, index)) {
      if (run.first.empty()) continue;
      const QpSplit split = split_over_qps(run.first.length, spec_.qps, spec_.qp_alignment);
      for (uint32_t i = 0; i < split.pieces; ++i) {
        const uint64_t begin = i * split.piece_bytes;
        const uint64_t end = std::min(run.first.length, begin + split.piece_bytes);
        into.bytes[i] += (end - begin) * run.chunk_count;
        into.operations[i] += run.chunk_count;
      }
    }
  }
  // Every block of every pipeline, once per emitter.
  void sum_blocks() {
    totals_.assign(pipelines_,
                   PieceTally{std::vector<uint64_t>(spec_.qps), std::vector<uint64_t>(spec_.qps)});
    for (uint32_t d = 0; d < pipelines_; ++d) {
      for (uint32_t i = 0; i < n_; ++i) tally(d, i, totals_[d]);
    }
  }
  // What the sender at ring index k of pipeline d sends to `to` over every step: its
  // reduce-scatter sends skip block k, its all-gather sends skip block k+1.
  void send_all_but(uint32_t d, uint32_t k, uint32_t to, uint32_t from, std::vector<Flow>& out) {
    PieceTally& sent = scratch_[0];
    PieceTally& skipped = scratch_[1];
    for (PieceTally* t : {&sent, &skipped}) {
      t->bytes.assign(spec_.qps, 0);
      t->operations.assign(spec_.qps, 0);
    }
    const std::array<std::pair<uint32_t, uint32_t>, 2> phases{
        {{reduce_steps_, k}, {gather_steps_, wrap(k + 1)}}};
    for (const auto& [steps, skip] : phases) {
      if (steps == 0) continue;
      for (uint32_t i = 0; i < spec_.qps; ++i) {
        sent.bytes[i] += totals_[d].bytes[i];
        sent.operations[i] += totals_[d].operations[i];
      }
      tally(d, skip, skipped);
    }
    for (uint32_t i = 0; i < spec_.qps; ++i) {
      const uint64_t operations = sent.operations[i] - skipped.operations[i];
      if (operations == 0) continue;
      out.push_back(Flow{from, to, static_cast<uint16_t>(d * spec_.qps + i), operations,
                         sent.bytes[i] - skipped.bytes[i]});
    }
  }

  // Bytes of the block at ring index `index` of pipeline d, in every chunk. Block structured
  // collectives use the semantic block of the member at that ring index, so the member ends with
  // its own block; all-reduce cuts each chunk's share of the pipeline into n anonymous blocks.
  ChunkRuns region(uint32_t d, uint32_t index) const {
    const uint32_t block = rings_.member_at(d, index);
    if (whole_) {
      ChunkRuns out;
      const ChunkRuns& slices = slices_[d];
      for (uint32_t r = 0; r < slices.size(); ++r) {
        out.push_back(slices[r].part(slice_blocks_[d][r], block));
      }
      return out;
    }
    const ByteRange whole_block = spec_.layout.block(block);
    const ChunkRuns& chunks =
        whole_block.length > short_block_ ? long_block_chunks_ : short_block_chunks_;
    const ChunkRuns pieces = chunks.shifted(whole_block.offset);
    return pipelines_ > 1 ? pieces.part(pipelines_, d) : pieces;
  }

  const ResolvedSpec& spec_;
  uint32_t n_;
  RingLayout rings_;
  uint32_t pipelines_;
  bool whole_;
  uint32_t reduce_steps_ = 0;
  uint32_t gather_steps_ = 0;
  // All-reduce, per pipeline: the chunk runs of its share and, per run, its cut into n blocks.
  std::vector<ChunkRuns> slices_;
  std::vector<std::array<Partition, 2>> slice_blocks_;
  uint64_t short_block_ = 0;      // floor(F/n): blocks are this long or one byte longer
  ChunkRuns short_block_chunks_;  // a short block at offset 0 cut into chunks
  ChunkRuns long_block_chunks_;   // a block of one byte more
  uint64_t slot_bytes_ = 0;       // a relay's staging slot: the largest block of any step
  // Per pipeline, the runs of the last receive (kept between members for its storage).
  std::vector<Transfer> previous_;
  // summarize(): per pipeline, the sends of all its blocks; and two tallies' storage.
  std::vector<PieceTally> totals_;
  std::array<PieceTally, 2> scratch_;
};

}  // namespace

std::unique_ptr<Emitter> make_ring_emitter(const ResolvedSpec& spec) {
  return std::make_unique<RingEmitter>(spec);
}

}  // namespace etwire::collectives
