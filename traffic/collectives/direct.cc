// Direct algorithms: every piece of data goes straight from the member that has it to the member
// that needs it, in one step. Members address their peers in staggered order (member p first
// talks to p+1, then p+2, ...), as NCCL posts its grouped sends, so no member is every sender's
// first destination. All-to-all includes each member's block for itself as a local transfer
// (peer = itself), so the program accounts for every byte of the result.
#include <vector>

#include "traffic/collectives/emitter.h"

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
    auto slice = [&](uint32_t c) { return Partition::piece({0, layout.full_bytes()}, chunks, c); };
    auto block = [&](uint32_t member, uint32_t c) {
      return Partition::piece(layout.block(member), chunks, c);
    };
    // Peers k places above and below p (k < n), without a division.
    auto up = [&](uint32_t k) { return p + k < n_ ? p + k : p + k - n_; };
    auto down = [&](uint32_t k) { return p >= k ? p - k : p + n_ - k; };

    if (!spec_.collective) {  // send/recv: member 0 to member 1
      if (n_ < 2) return;
      for (uint32_t c = 0; c < chunks; ++c) {
        if (p == 0) b.send(1, slice(c), {c, 0, 0});
        if (p == 1) b.recv(0, slice(c), {c, 0, 0}, false);
      }
      return;
    }
    switch (*spec_.collective) {
      case CollectiveType::kBroadcast:
        for (uint32_t c = 0; c < chunks; ++c) {
          if (p != root) {
            b.recv(root, slice(c), {c, 0, 0}, false);
            continue;
          }
          for (uint32_t k = 1; k < n_; ++k) b.send(up(k), slice(c), {c, 0, 0});
        }
        return;
      case CollectiveType::kReduce:
        for (uint32_t c = 0; c < chunks; ++c) {
          if (p != root) {
            b.send(root, slice(c), {c, 0, 0});
            continue;
          }
          for (uint32_t k = 1; k < n_; ++k) b.recv(down(k), slice(c), {c, 0, 0}, true);
        }
        return;
      case CollectiveType::kGather:
        for (uint32_t c = 0; c < chunks; ++c) {
          if (p != root) {
            b.send(root, block(p, c), {c, 0, 0});
            continue;
          }
          for (uint32_t k = 1; k < n_; ++k) b.recv(down(k), block(down(k), c), {c, 0, 0}, false);
        }
        return;
      case CollectiveType::kScatter:
        for (uint32_t c = 0; c < chunks; ++c) {
          if (p != root) {
            b.recv(root, block(p, c), {c, 0, 0}, false);
            continue;
          }
          for (uint32_t k = 1; k < n_; ++k) b.send(up(k), block(up(k), c), {c, 0, 0});
        }
        return;
      case CollectiveType::kAllGather:
        for (uint32_t c = 0; c < chunks; ++c) {
          for (uint32_t k = 1; k < n_; ++k) {
            b.send(up(k), block(p, c), {c, 0, 0});
            b.recv(down(k), block(down(k), c), {c, 0, 0}, false);
          }
        }
        return;
      case CollectiveType::kReduceScatter:
      case CollectiveType::kReduceScatterBlock:
        for (uint32_t c = 0; c < chunks; ++c) {
          for (uint32_t k = 1; k < n_; ++k) {
            b.send(up(k), block(up(k), c), {c, 0, 0});
            b.recv(down(k), block(p, c), {c, 0, 0}, true);
          }
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
    for (uint32_t c = 0; c < spec_.chunks; ++c) {
      for (uint32_t k = 0; k < n_; ++k) {
        const uint32_t dst = p + k < n_ ? p + k : p + k - n_;
        const uint32_t src = p >= k ? p - k : p + n_ - k;
        b.send(dst,
               Partition::piece({send_offsets_[dst], layout.pair_bytes(p, dst)}, spec_.chunks, c),
               {c, 0, 0});
        b.recv(src,
               Partition::piece({recv_base + recv_offsets_[src], layout.pair_bytes(src, p)},
                                spec_.chunks, c),
               {c, 0, 0}, false);
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
