// Dissemination barrier: in round k (k = 0 .. ceil(log2 n) - 1) member p sends a barrier message
// to p + 2^k and receives one from p - 2^k (mod n). Each send waits for every earlier receive of
// its member, so after the last round every member has heard, directly or through others, from
// every member: no member can finish before all have arrived.
#include <vector>

#include "collectives/emitter.h"

namespace etwire::collectives {

namespace {

class DisseminationEmitter final : public Emitter {
 public:
  explicit DisseminationEmitter(const ResolvedSpec& spec) : spec_(spec), n_(spec.members()) {}

  void emit(uint32_t p, ProgramBuilder& b) override {
    const ByteRange token{0, spec_.barrier_bytes};
    b.set_buffer_bytes(token.length);
    received_.clear();
    for (uint32_t k = 0; (uint64_t{1} << k) < n_; ++k) {
      const uint32_t distance = 1u << k;
      b.send((p + distance) % n_, token, {0, k, 0}, received_);
      received_.push_back(b.recv((p + n_ - distance) % n_, token, {0, k, 0}, false));
    }
  }

 private:
  const ResolvedSpec& spec_;
  uint32_t n_;
  std::vector<Transfer> received_;
};

}  // namespace

std::unique_ptr<Emitter> make_dissemination_emitter(const ResolvedSpec& spec) {
  return std::make_unique<DisseminationEmitter>(spec);
}

}  // namespace etwire::collectives
