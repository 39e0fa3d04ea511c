#include "tests/collectives/per_chunk_reference.h"

#include <vector>

#include "collectives/program_builder.h"
#include "collectives/tree_layout.h"

namespace etwire::collectives::testing {

namespace {

using trace::CollectiveType;

ByteRange chunk_of(const ResolvedSpec& s, uint32_t c) {
  return Partition::piece({0, s.layout.full_bytes()}, s.chunks, c);
}
ByteRange block_chunk(const ResolvedSpec& s, uint32_t member, uint32_t c) {
  return Partition::piece(s.layout.block(member), s.chunks, c);
}

void ring(const ResolvedSpec& s, uint32_t p, ProgramBuilder& b) {
  const uint32_t n = s.members();
  if (n == 1) return;
  const uint32_t directions = s.algorithm == Algorithm::kBidirectionalRing ? 2 : 1;
  const bool all_reduce = s.is(CollectiveType::kAllReduce);
  const uint32_t reduce_steps = all_reduce || !s.is(CollectiveType::kAllGather) ? n - 1 : 0;
  const uint32_t gather_steps = all_reduce || s.is(CollectiveType::kAllGather) ? n - 1 : 0;
  auto ring_index = [&](uint32_t position, uint32_t d) {
    return d == 0 ? position : (n - position) % n;
  };
  auto successor = [&](uint32_t position, uint32_t d) {
    return d == 0 ? (position + 1) % n : (position + n - 1) % n;
  };
  auto region = [&](uint32_t d, uint32_t c, uint32_t index) {
    const uint32_t block = ring_index(index, d);
    if (s.layout.shape() == BufferShape::kWhole) {
      ByteRange slice = chunk_of(s, c);
      if (directions == 2) slice = Partition::piece(slice, 2, d);
      return Partition::piece(slice, n, block);
    }
    const ByteRange piece = block_chunk(s, block, c);
    return directions == 2 ? Partition::piece(piece, 2, d) : piece;
  };
  std::vector<Transfer> previous(static_cast<size_t>(directions) * s.chunks);
  for (uint32_t t = 0; t < reduce_steps + gather_steps; ++t) {
    for (uint32_t c = 0; c < s.chunks; ++c) {
      for (uint32_t d = 0; d < directions; ++d) {
        const uint32_t k = ring_index(p, d);
        const bool reduce = t < reduce_steps;
        const uint32_t back = reduce ? t + 1 : t - reduce_steps;
        const uint32_t send_block = (k + 2 * n - back) % n;
        const uint32_t recv_block = (k + 2 * n - back - 1) % n;
        Transfer& last = previous[static_cast<size_t>(d) * s.chunks + c];
        std::vector<Transfer> after;
        if (t > 0) after.push_back(last);
        b.send(successor(p, d), region(d, c, send_block), {c, t, d}, after);
        last = b.recv(successor(p, 1 - d), region(d, c, recv_block), {c, t, d}, reduce);
      }
    }
  }
}

void chain(const ResolvedSpec& s, uint32_t p, ProgramBuilder& b) {
  const uint32_t n = s.members();
  if (n == 1) return;
  const bool reduce = s.is(CollectiveType::kReduce);
  const uint32_t root = s.root;
  const uint32_t index = reduce ? (p + 2 * n - root - 1) % n : (p + n - root) % n;
  auto at = [&](uint32_t i) { return reduce ? (root + 1 + i) % n : (root + i) % n; };
  for (uint32_t c = 0; c < s.chunks; ++c) {
    std::vector<Transfer> received;
    if (index > 0)
      received.push_back(b.recv(at(index - 1), chunk_of(s, c), {c, index - 1, 0}, reduce));
    if (index + 1 < n) b.send(at(index + 1), chunk_of(s, c), {c, index, 0}, received);
  }
}

void tree_all_reduce(const ResolvedSpec& s, uint32_t p, ProgramBuilder& b) {
  const uint32_t n = s.members();
  if (n == 1) return;
  const std::vector<Tree> trees = all_reduce_trees(s);
  const auto shares = static_cast<uint32_t>(trees.size());
  auto share = [&](uint32_t c, uint32_t t) { return Partition::piece(chunk_of(s, c), shares, t); };
  std::vector<std::vector<Transfer>> from_children(static_cast<size_t>(s.chunks) * shares);
  for (uint32_t c = 0; c < s.chunks; ++c) {  // up: reduce towards each tree's root
    for (uint32_t t = 0; t < shares; ++t) {
      auto& received = from_children[c * shares + t];
      for (uint32_t child : trees[t].children[p]) {
        if (child != kNoMember) received.push_back(b.recv(child, share(c, t), {c, 0, t}, true));
      }
      if (trees[t].parent[p] != kNoMember)
        b.send(trees[t].parent[p], share(c, t), {c, 0, t}, received);
    }
  }
  for (uint32_t c = 0; c < s.chunks; ++c) {  // down: broadcast the result back
    for (uint32_t t = 0; t < shares; ++t) {
      std::vector<Transfer> ready = from_children[c * shares + t];
      if (trees[t].parent[p] != kNoMember) {
        ready = {b.recv(trees[t].parent[p], share(c, t), {c, 1, t}, false)};
      }
      for (uint32_t child : trees[t].children[p]) {
        if (child != kNoMember) b.send(child, share(c, t), {c, 1, t}, ready);
      }
    }
  }
}

// PAT chunk by chunk: member x's block b sits at offset k = (x - b) mod n; at distance 2^d the
// offsets that are multiples of 2^(d+1) pass it to offset k + 2^d, all-gather from the largest
// distance down, reduce-scatter backwards from distance 1 up.
void pat(const ResolvedSpec& s, uint32_t x, ProgramBuilder& b) {
  const uint32_t n = s.members();
  uint32_t steps = 0;
  while ((1u << steps) < n) ++steps;
  const bool gather = s.is(CollectiveType::kAllGather);
  // Per block and chunk, the last receive.
  std::vector<Transfer> held(static_cast<size_t>(n) * s.chunks);
  for (uint32_t t = 0; t < steps; ++t) {
    const uint32_t distance = 1u << (gather ? steps - 1 - t : t);
    // Parent side first, then child side, each by ascending offset, as the emitter posts them.
    for (int side = 0; side < 2; ++side) {
      for (uint32_t k = side == 0 ? 0 : distance; k < n; k += 2 * distance) {
        if (side == 0 && k + distance >= n) break;
        const uint32_t block = (x + n - k) % n;
        const uint32_t peer = side == 0 ? (x + distance) % n : (x + n - distance) % n;
        for (uint32_t c = 0; c < s.chunks; ++c) {
          Transfer& last = held[static_cast<size_t>(block) * s.chunks + c];
          const ByteRange range = block_chunk(s, block, c);
          if ((side == 0) == gather) {
            b.send(peer, range, {c, t, 0}, {&last, 1});
          } else {
            last = b.recv(peer, range, {c, t, 0}, !gather, {&last, 1});
          }
        }
      }
    }
  }
}

void direct(const ResolvedSpec& s, uint32_t p, ProgramBuilder& b) {
  const uint32_t n = s.members();
  const uint32_t root = s.root;
  auto up = [&](uint32_t k) { return (p + k) % n; };
  auto down = [&](uint32_t k) { return (p + n - k) % n; };
  if (!s.collective) {
    for (uint32_t c = 0; c < s.chunks && n >= 2; ++c) {
      if (p == 0) b.send(1, chunk_of(s, c), {c, 0, 0});
      if (p == 1) b.recv(0, chunk_of(s, c), {c, 0, 0}, false);
    }
    return;
  }
  for (uint32_t c = 0; c < s.chunks; ++c) {
    const OpTag tag{c, 0, 0};
    switch (*s.collective) {
      case CollectiveType::kBroadcast:
        if (p != root) b.recv(root, chunk_of(s, c), tag, false);
        for (uint32_t k = 1; k < n && p == root; ++k) b.send(up(k), chunk_of(s, c), tag);
        break;
      case CollectiveType::kReduce:
        if (p != root) b.send(root, chunk_of(s, c), tag);
        for (uint32_t k = 1; k < n && p == root; ++k) b.recv(down(k), chunk_of(s, c), tag, true);
        break;
      case CollectiveType::kGather:
        if (p != root) b.send(root, block_chunk(s, p, c), tag);
        for (uint32_t k = 1; k < n && p == root; ++k) {
          b.recv(down(k), block_chunk(s, down(k), c), tag, false);
        }
        break;
      case CollectiveType::kScatter:
        if (p != root) b.recv(root, block_chunk(s, p, c), tag, false);
        for (uint32_t k = 1; k < n && p == root; ++k) b.send(up(k), block_chunk(s, up(k), c), tag);
        break;
      case CollectiveType::kAllGather:
        for (uint32_t k = 1; k < n; ++k) {
          b.send(up(k), block_chunk(s, p, c), tag);
          b.recv(down(k), block_chunk(s, down(k), c), tag, false);
        }
        break;
      case CollectiveType::kReduceScatter:
      case CollectiveType::kReduceScatterBlock:
        for (uint32_t k = 1; k < n; ++k) {
          b.send(up(k), block_chunk(s, up(k), c), tag);
          b.recv(down(k), block_chunk(s, p, c), tag, true);
        }
        break;
      case CollectiveType::kAllToAll: {
        std::vector<uint64_t> send_at;
        std::vector<uint64_t> recv_at;
        s.layout.send_offsets(p, send_at);
        s.layout.recv_offsets(p, recv_at);
        for (uint32_t k = 0; k < n; ++k) {
          const uint32_t dst = up(k);
          const uint32_t src = down(k);
          b.send(dst, Partition::piece({send_at[dst], s.layout.pair_bytes(p, dst)}, s.chunks, c),
                 tag);
          b.recv(src,
                 Partition::piece({send_at[n] + recv_at[src], s.layout.pair_bytes(src, p)},
                                  s.chunks, c),
                 tag, false);
        }
        break;
      }
      case CollectiveType::kAllReduce:
      case CollectiveType::kBarrier:
        break;
    }
  }
}

}  // namespace

std::optional<CollectiveProgram> per_chunk_reference(const ResolvedSpec& spec) {
  void (*emit)(const ResolvedSpec&, uint32_t, ProgramBuilder&) = nullptr;
  const bool rooted = spec.is(CollectiveType::kBroadcast) || spec.is(CollectiveType::kReduce);
  switch (spec.algorithm) {
    case Algorithm::kRing:
      emit = rooted ? chain : ring;
      break;
    case Algorithm::kBidirectionalRing:
      emit = ring;
      break;
    case Algorithm::kDoubleBinaryTree:
    case Algorithm::kTree:
      emit = tree_all_reduce;
      break;
    case Algorithm::kPat:
      emit = pat;
      break;
    case Algorithm::kDirect:
      emit = direct;
      break;
    default:
      return std::nullopt;
  }
  CollectiveProgram program;
  ProgramBuilder builder(program, spec.ranks, spec.qps, spec.qp_alignment);
  for (uint32_t p = 0; p < spec.members(); ++p) {
    builder.begin_member(p);
    uint64_t buffer = spec.layout.full_bytes();
    if (spec.is(CollectiveType::kAllToAll)) {
      std::vector<uint64_t> send_at;
      std::vector<uint64_t> recv_at;
      spec.layout.send_offsets(p, send_at);
      spec.layout.recv_offsets(p, recv_at);
      buffer = send_at[spec.members()] + recv_at[spec.members()];
    }
    builder.set_buffer_bytes(buffer);
    emit(spec, p, builder);
    builder.end_member();
  }
  return program;
}

}  // namespace etwire::collectives::testing
