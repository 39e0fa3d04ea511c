#include "collectives/verify.h"

#include <fmt/format.h>

#include <vector>

namespace etwire::collectives {

namespace {

using trace::CollectiveType;

constexpr uint64_t kPoison = uint64_t{1} << 48;

class Checker {
 public:
  Checker(const ResolvedSpec& spec, const CollectiveProgram& program)
      : spec_(spec), program_(program), n_(spec.members()) {
    if (spec.layout.shape() == BufferShape::kExchange) {
      send_offsets_.resize(n_);
      recv_offsets_.resize(n_);
      for (uint32_t p = 0; p < n_; ++p) {
        spec.layout.send_offsets(p, send_offsets_[p]);
        spec.layout.recv_offsets(p, recv_offsets_[p]);
      }
    }
  }

  std::string run(ExecutionOptions options) {
    const uint32_t participants = spec_.participants();
    if (program_.programs() != participants) {
      return fmt::format("program holds {} of {} participants", program_.programs(), participants);
    }
    // Aggregation nodes (CollNet) start with nothing: every byte they pass on was received.
    std::vector<Cells> buffers(participants);
    for (uint32_t p = 0; p < participants; ++p) {
      buffers[p].assign(program_.buffer_bytes(p), kPoison);
      if (p >= n_) continue;
      for (const ByteRange& range : inputs(p)) {
        if (range.end() > buffers[p].size()) {
          return fmt::format("rank {}: buffer of {} bytes cannot hold its input [{}, {})", rank(p),
                             buffers[p].size(), range.offset, range.end());
        }
        for (uint64_t x = range.offset; x < range.end(); ++x)
          buffers[p][x] = input_value(rank(p), x);
      }
    }
    options.track_causality = spec_.is(CollectiveType::kBarrier);
    ExecutionResult result = execute(program_, std::move(buffers), options);
    if (!result.ok()) return result.error;
    return check(result);
  }

 private:
  int32_t rank(uint32_t p) const { return spec_.ranks[p]; }
  uint64_t full() const { return spec_.layout.full_bytes(); }
  uint64_t recv_base(uint32_t p) const { return send_offsets_[p][n_]; }

  std::vector<ByteRange> inputs(uint32_t p) const {
    const ByteRange whole{0, full()};
    if (!spec_.collective) return p == 0 ? std::vector{whole} : std::vector<ByteRange>{};
    switch (*spec_.collective) {
      case CollectiveType::kAllReduce:
      case CollectiveType::kReduce:
      case CollectiveType::kReduceScatter:
      case CollectiveType::kReduceScatterBlock:
        return {whole};
      case CollectiveType::kBroadcast:
      case CollectiveType::kScatter:
        return p == spec_.root ? std::vector{whole} : std::vector<ByteRange>{};
      case CollectiveType::kAllGather:
      case CollectiveType::kGather:
        return {spec_.layout.block(p)};
      case CollectiveType::kAllToAll:
        return {ByteRange{0, send_offsets_[p][n_]}};
      case CollectiveType::kBarrier:
        return {};
    }
    return {};
  }

  std::string check(const ExecutionResult& result) const {
    const auto& out = result.buffers;
    std::string error;
    // Expects member p's bytes [range) to equal expected(x) for each x.
    auto expect = [&](uint32_t p, ByteRange range, auto&& expected) {
      if (!error.empty()) return;
      if (range.end() > out[p].size()) {
        error = fmt::format("rank {}: result [{}, {}) lies outside its {}-byte buffer", rank(p),
                            range.offset, range.end(), out[p].size());
        return;
      }
      for (uint64_t x = range.offset; x < range.end(); ++x) {
        const uint64_t want = expected(x);
        if (out[p][x] != want) {
          error = fmt::format("rank {}: byte {} is {}, expected {}", rank(p), x,
                              out[p][x] >= kPoison ? "unwritten" : std::to_string(out[p][x]), want);
          return;
        }
      }
    };
    auto sum = [&](uint64_t x) {
      uint64_t total = 0;
      for (uint32_t q = 0; q < n_; ++q) total += input_value(rank(q), x);
      return total;
    };
    const ByteRange whole{0, full()};
    if (!spec_.collective) {
      if (n_ == 2) expect(1, whole, [&](uint64_t x) { return input_value(rank(0), x); });
      return error;
    }
    switch (*spec_.collective) {
      case CollectiveType::kAllReduce:
        for (uint32_t p = 0; p < n_; ++p) expect(p, whole, sum);
        break;
      case CollectiveType::kReduce:
        expect(spec_.root, whole, sum);
        break;
      case CollectiveType::kBroadcast:
        for (uint32_t p = 0; p < n_; ++p) {
          expect(p, whole, [&](uint64_t x) { return input_value(rank(spec_.root), x); });
        }
        break;
      case CollectiveType::kReduceScatter:
      case CollectiveType::kReduceScatterBlock:
        for (uint32_t p = 0; p < n_; ++p) expect(p, spec_.layout.block(p), sum);
        break;
      case CollectiveType::kAllGather:
      case CollectiveType::kGather:
        for (uint32_t p = 0; p < n_; ++p) {
          if (spec_.is(CollectiveType::kGather) && p != spec_.root) continue;
          for (uint32_t q = 0; q < n_; ++q) {
            expect(p, spec_.layout.block(q), [&](uint64_t x) { return input_value(rank(q), x); });
          }
        }
        break;
      case CollectiveType::kScatter:
        for (uint32_t p = 0; p < n_; ++p) {
          expect(p, spec_.layout.block(p),
                 [&](uint64_t x) { return input_value(rank(spec_.root), x); });
        }
        break;
      case CollectiveType::kAllToAll:
        for (uint32_t p = 0; p < n_; ++p) {
          for (uint32_t q = 0; q < n_; ++q) {
            const ByteRange from_q{recv_base(p) + recv_offsets_[p][q],
                                   spec_.layout.pair_bytes(q, p)};
            const uint64_t at_q = send_offsets_[q][p];
            expect(p, from_q,
                   [&](uint64_t x) { return input_value(rank(q), at_q + (x - from_q.offset)); });
          }
        }
        break;
      case CollectiveType::kBarrier:
        for (uint32_t p = 0; p < n_ && error.empty(); ++p) {
          for (uint32_t q = 0; q < n_; ++q) {
            if (!result.heard_from[p][q]) {
              error = fmt::format("rank {} can leave the barrier before rank {} arrives", rank(p),
                                  rank(q));
              break;
            }
          }
        }
        break;
    }
    return error;
  }

  const ResolvedSpec& spec_;
  const CollectiveProgram& program_;
  uint32_t n_;
  std::vector<std::vector<uint64_t>> send_offsets_;
  std::vector<std::vector<uint64_t>> recv_offsets_;
};

}  // namespace

uint64_t input_value(int32_t rank, uint64_t offset) {
  uint64_t h =
      static_cast<uint64_t>(rank) * 0x9E3779B97F4A7C15ull ^ (offset + 1) * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 29;
  return h % 997 + 1;
}

std::string verify(const ResolvedSpec& spec, const CollectiveProgram& program,
                   ExecutionOptions options) {
  return Checker(spec, program).run(options);
}

}  // namespace etwire::collectives
