// Recursive halving (reduce-scatter), recursive doubling (all-gather) and both in sequence
// (Rabenseifner's all-reduce), for any group size.
//
// Non-powers of two: with n = 2^L + r, the first 2r members pair up (2i keeps, 2i+1 is folded
// in). Step 0 folds every odd member's data into its even partner; the 2^L remaining members run
// the power-of-two algorithm as virtual ranks v (keeper 2i is v = i, member p >= 2r is v = p - r);
// the last step unfolds the result back to the odd members. Virtual rank v owns a contiguous run
// of blocks (keepers own their partner's block too), so every exchange is one contiguous range
// when a chunk spans whole blocks.
//
// Reduce-scatter exchanges halves with the partner at distance 2^(L-1) first, then 2^(L-2), ...;
// all-gather doubles from distance 1. A send depends on every earlier receive that wrote any of
// its bytes (a TransferLedger per chunk), because reduced ranges collect several receives.
#include <bit>
#include <vector>

#include "collectives/emitter.h"
#include "collectives/transfer_ledger.h"

namespace etwire::collectives {

namespace {

using trace::CollectiveType;

class HalvingDoublingEmitter final : public Emitter {
 public:
  explicit HalvingDoublingEmitter(const ResolvedSpec& spec)
      : spec_(spec),
        n_(spec.members()),
        pow2_(std::bit_floor(spec.members())),
        extras_(spec.members() - std::bit_floor(spec.members())),
        levels_(static_cast<uint32_t>(std::countr_zero(std::bit_floor(spec.members())))),
        whole_(spec.layout.shape() == BufferShape::kWhole),
        per_block_(!whole_ && spec.chunks > 1),
        reduce_(!spec.is(CollectiveType::kAllGather)),
        gather_(spec.is(CollectiveType::kAllGather) || spec.is(CollectiveType::kAllReduce)) {}

  void emit(uint32_t p, ProgramBuilder& b) override {
    b.set_buffer_bytes(spec_.layout.full_bytes());
    if (n_ == 1) return;
    builder_ = &b;
    const uint32_t chunks = spec_.chunks;
    ledger_.reset(per_block_ ? static_cast<size_t>(chunks) * n_ : chunks);
    const bool paired = p < 2 * extras_;
    const bool extra = paired && p % 2 == 1;
    const uint32_t v = paired ? p / 2 : p - extras_;
    const uint32_t blocks = whole_ ? pow2_ : n_;

    uint32_t step = 0;
    if (extras_ > 0) {
      for (uint32_t c = 0; c < chunks; ++c) {
        if (extra) {
          if (reduce_) send_blocks(p - 1, c, 0, blocks, step);
          if (!reduce_) send_blocks(p - 1, c, p, p + 1, step);
        } else if (paired) {
          if (reduce_) recv_blocks(p + 1, c, 0, blocks, step, true);
          if (!reduce_) recv_blocks(p + 1, c, p + 1, p + 2, step, false);
        }
      }
      ++step;
    }

    if (reduce_) {
      uint32_t lo = 0;
      uint32_t hi = pow2_;
      for (uint32_t k = 0; k < levels_; ++k, ++step) {
        const uint32_t mid = lo + (pow2_ >> (k + 1));
        const bool lower = v < mid;
        const uint32_t partner = position_of(lower ? v + (mid - lo) : v - (mid - lo));
        if (extra) continue;
        for (uint32_t c = 0; c < chunks; ++c) {
          send_blocks(partner, c, unit_begin(lower ? mid : lo), unit_begin(lower ? hi : mid), step);
          recv_blocks(partner, c, unit_begin(lower ? lo : mid), unit_begin(lower ? mid : hi), step,
                      true);
        }
        (lower ? hi : lo) = mid;
      }
    }
    if (gather_) {
      for (uint32_t k = 0; k < levels_; ++k, ++step) {
        if (extra) continue;
        const uint32_t distance = 1u << k;
        const uint32_t own = v & ~(distance - 1);
        const uint32_t theirs = (v ^ distance) & ~(distance - 1);
        const uint32_t partner = position_of(v ^ distance);
        for (uint32_t c = 0; c < chunks; ++c) {
          send_blocks(partner, c, unit_begin(own), unit_begin(own + distance), step);
          recv_blocks(partner, c, unit_begin(theirs), unit_begin(theirs + distance), step, false);
        }
      }
    }

    if (extras_ > 0 && paired) {
      // Unfold: all-reduce returns the whole result, reduce-scatter the odd member's block,
      // all-gather every block but the one the odd member had.
      for (uint32_t c = 0; c < chunks; ++c) {
        if (spec_.is(CollectiveType::kAllReduce)) {
          transfer(extra, p, c, 0, blocks, step);
        } else if (reduce_) {
          transfer(extra, p, c, extra ? p : p + 1, extra ? p + 1 : p + 2, step);
        } else {
          const uint32_t odd = extra ? p : p + 1;
          transfer(extra, p, c, 0, odd, step);
          transfer(extra, p, c, odd + 1, blocks, step);
        }
      }
    }
  }

 private:
  // Unfold direction: the keeper sends, the odd member receives (copy).
  void transfer(bool extra, uint32_t p, uint32_t c, uint32_t first, uint32_t end, uint32_t step) {
    if (extra) {
      recv_blocks(p - 1, c, first, end, step, false);
    } else {
      send_blocks(p + 1, c, first, end, step);
    }
  }

  uint32_t position_of(uint32_t v) const { return v < extras_ ? 2 * v : v + extras_; }
  // First block of virtual rank v (v == pow2_ gives the end). All-reduce cuts each chunk into
  // pow2_ anonymous blocks, one per virtual rank.
  uint32_t unit_begin(uint32_t v) const {
    if (whole_) return v;
    return v < extras_ ? 2 * v : v + extras_;
  }

  // Calls fn(range, ledger slot) for the bytes of blocks [first, end) in chunk c: one range when
  // they are contiguous, else one per block.
  template <typename Fn>
  void for_ranges(uint32_t c, uint32_t first, uint32_t end, Fn&& fn) {
    if (first >= end) return;
    const uint32_t chunks = spec_.chunks;
    if (whole_) {
      const ByteRange slice = Partition::piece({0, spec_.layout.full_bytes()}, chunks, c);
      const Partition units(slice.length, pow2_);
      fn(ByteRange{slice.offset + units.offset(first), units.offset(end) - units.offset(first)}, c);
    } else if (!per_block_) {
      const uint64_t begin = spec_.layout.block(first).offset;
      fn(ByteRange{begin, spec_.layout.block(end - 1).end() - begin}, 0);
    } else {
      for (uint32_t block = first; block < end; ++block) {
        fn(Partition::piece(spec_.layout.block(block), chunks, c),
           static_cast<size_t>(c) * n_ + block);
      }
    }
  }
  void send_blocks(uint32_t peer, uint32_t c, uint32_t first, uint32_t end, uint32_t step) {
    for_ranges(c, first, end, [&](ByteRange range, size_t slot) {
      builder_->send(peer, range, {c, step, 0}, ledger_.writers(slot));
    });
  }
  void recv_blocks(uint32_t peer, uint32_t c, uint32_t first, uint32_t end, uint32_t step,
                   bool reduce) {
    for_ranges(c, first, end, [&](ByteRange range, size_t slot) {
      ledger_.add(slot, builder_->recv(peer, range, {c, step, 0}, reduce));
    });
  }

  const ResolvedSpec& spec_;
  uint32_t n_;
  uint32_t pow2_;
  uint32_t extras_;
  uint32_t levels_;
  bool whole_;
  bool per_block_;  // chunks cut every block, so a run of blocks is not one contiguous range
  bool reduce_;
  bool gather_;
  ProgramBuilder* builder_ = nullptr;
  TransferLedger ledger_;
};

}  // namespace

std::unique_ptr<Emitter> make_halving_doubling_emitter(const ResolvedSpec& spec) {
  return std::make_unique<HalvingDoublingEmitter>(spec);
}

}  // namespace etwire::collectives
