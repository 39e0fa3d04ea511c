// Direct algorithms: every piece of data goes straight from the member that has it to the member
// that needs it, in one step. Members address their peers in staggered order (member p first
// talks to p+1, then p+2, ...), as NCCL posts its grouped sends, so no member is every sender's
// first destination. All-to-all includes each member's block for itself as a local transfer
// (peer = itself), so the program accounts for every byte of the result.
//
// Every chunk goes the same way and nothing depends on anything, so each transfer is one
// operation per QP piece for a whole chunk run (chunk_run.h). Between two members there is one
// transfer per chunk, so posting each transfer's chunks in order keeps every QP's order.
#include <vector>

#include "collectives/emitter.h"

namespace etwire::collectives {

namespace {

using trace::CollectiveType;

class DirectEmitter final : public Emitter {
 public:
  explicit DirectEmitter(const ResolvedSpec& spec) : spec_(spec), n_(spec.members()) {}

  void emit(uint32_t p, ProgramBuilder& b) override {
    const DataLayout& layout = spec_.layout;
    const uint32_t chunks = spec_.chunks;
    const uint32_t root = spec_.root;
    b.set_buffer_bytes(layout.full_bytes());
    auto slice = [&]() { return ChunkRuns::split({0, layout.full_bytes()}, chunks); };
    auto block = [&](uint32_t member) { return ChunkRuns::split(layout.block(member), chunks); };
    // Peers k places above and below p (k < n), without a division.
    auto up = [&](uint32_t k) { return p + k < n_ ? p + k : p + k - n_; };
    auto down = [&](uint32_t k) { return p >= k ? p - k : p + n_ - k; };
    constexpr StepTag kTag{0, 0};

    if (!spec_.collective) {  // send/recv: member 0 to member 1
      if (n_ < 2) return;
      for (const ChunkRun& run : slice()) {
        if (p == 0) b.send_run(1, run, kTag);
        if (p == 1) b.recv_run(0, run, kTag, false);
      }
      return;
    }
    switch (*spec_.collective) {
      case CollectiveType::kBroadcast:
        if (p != root) {
          for (const ChunkRun& run : slice()) b.recv_run(root, run, kTag, false);
          return;
        }
        for (uint32_t k = 1; k < n_; ++k) {
          for (const ChunkRun& run : slice()) b.send_run(up(k), run, kTag);
        }
        return;
      case CollectiveType::kReduce:
        if (p != root) {
          for (const ChunkRun& run : slice()) b.send_run(root, run, kTag);
          return;
        }
        for (uint32_t k = 1; k < n_; ++k) {
          for (const ChunkRun& run : slice()) b.recv_run(down(k), run, kTag, true);
        }
        return;
      case CollectiveType::kGather:
        if (p != root) {
          for (const ChunkRun& run : block(p)) b.send_run(root, run, kTag);
          return;
        }
        for (uint32_t k = 1; k < n_; ++k) {
          for (const ChunkRun& run : block(down(k))) b.recv_run(down(k), run, kTag, false);
        }
        return;
      case CollectiveType::kScatter:
        if (p != root) {
          for (const ChunkRun& run : block(p)) b.recv_run(root, run, kTag, false);
          return;
        }
        for (uint32_t k = 1; k < n_; ++k) {
          for (const ChunkRun& run : block(up(k))) b.send_run(up(k), run, kTag);
        }
        return;
      case CollectiveType::kAllGather:
        for (uint32_t k = 1; k < n_; ++k) {
          for (const ChunkRun& run : block(p)) b.send_run(up(k), run, kTag);
          for (const ChunkRun& run : block(down(k))) b.recv_run(down(k), run, kTag, false);
        }
        return;
      case CollectiveType::kReduceScatter:
      case CollectiveType::kReduceScatterBlock:
        for (uint32_t k = 1; k < n_; ++k) {
          for (const ChunkRun& run : block(up(k))) b.send_run(up(k), run, kTag);
          for (const ChunkRun& run : block(p)) b.recv_run(down(k), run, kTag, true);
        }
        return;
      case CollectiveType::kAllToAll:
        emit_all_to_all(p, b);
        return;
      case CollectiveType::kAllReduce:
      case CollectiveType::kBarrier:
        return;  // not applicable (rejected by resolve)
    }
  }

 private:
  void emit_all_to_all(uint32_t p, ProgramBuilder& b) {
    const DataLayout& layout = spec_.layout;
    layout.send_offsets(p, send_offsets_);
    layout.recv_offsets(p, recv_offsets_);
    const uint64_t recv_base = send_offsets_[n_];
    b.set_buffer_bytes(recv_base + recv_offsets_[n_]);
    const uint32_t chunks = spec_.chunks;
    for (uint32_t k = 0; k < n_; ++k) {
      const uint32_t dst = p + k < n_ ? p + k : p + k - n_;
      const uint32_t src = p >= k ? p - k : p + n_ - k;
      for (const ChunkRun& run :
           ChunkRuns::split({send_offsets_[dst], layout.pair_bytes(p, dst)}, chunks)) {
        b.send_run(dst, run, {0, 0});
      }
      for (const ChunkRun& run :
           ChunkRuns::split({recv_base + recv_offsets_[src], layout.pair_bytes(src, p)}, chunks)) {
        b.recv_run(src, run, {0, 0}, false);
      }
    }
  }

  const ResolvedSpec& spec_;
  uint32_t n_;
  std::vector<uint64_t> send_offsets_;
  std::vector<uint64_t> recv_offsets_;
};

}  // namespace

std::unique_ptr<Emitter> make_direct_emitter(const ResolvedSpec& spec) {
  return std::make_unique<DirectEmitter>(spec);
}

}  // namespace etwire::collectives
