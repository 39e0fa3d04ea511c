// Broadcast and reduce on a ring: a pipelined chain. Broadcast starts at the root and walks the
// group upwards from it; reduce starts at the member after the root and ends at the root, each
// member adding its data before passing the chunk on. A member forwards chunk c as soon as it has
// received chunk c, so all chunks are in flight along the chain at once: one receive and one send
// per chunk run (chunk_run.h), the send's chunk c waiting for the receive's chunk c.
#include "collectives/emitter.h"

namespace etwire::collectives {

namespace {

class ChainEmitter final : public Emitter {
 public:
  explicit ChainEmitter(const ResolvedSpec& spec)
      : spec_(spec), n_(spec.members()), reduce_(spec.is(trace::CollectiveType::kReduce)) {}

  void emit(uint32_t position, ProgramBuilder& builder) override {
    builder.set_buffer_bytes(spec_.layout.full_bytes());
    if (n_ == 1) return;
    const uint32_t root = spec_.root;
    const uint32_t index =
        reduce_ ? (position + 2 * n_ - root - 1) % n_ : (position + n_ - root) % n_;
    auto at = [&](uint32_t i) { return reduce_ ? (root + 1 + i) % n_ : (root + i) % n_; };
    for (const ChunkRun& run : ChunkRuns::split({0, spec_.layout.full_bytes()}, spec_.chunks)) {
      Transfer received;
      if (index > 0) received = builder.recv_run(at(index - 1), run, {index - 1, 0}, reduce_);
      if (index + 1 < n_) {
        builder.send_run(
            at(index + 1), run, {index, 0},
            index > 0 ? std::span<const Transfer>(&received, 1) : std::span<const Transfer>());
      }
    }
  }

 private:
  const ResolvedSpec& spec_;
  uint32_t n_;
  bool reduce_;
};

}  // namespace

std::unique_ptr<Emitter> make_chain_emitter(const ResolvedSpec& spec) {
  return std::make_unique<ChainEmitter>(spec);
}

}  // namespace etwire::collectives
