// PXN all-to-all (rail-aligned relay): data for a member on another host first moves inside the
// source host to the member whose local index equals the destination's, which sends it over the
// network on the destination's own rail. Network bytes equal the direct algorithm's; what changes
// is that every network transfer stays on one rail. A pair goes direct when both are on one host,
// when the source is already on the destination's rail, or when the host has no member on that
// rail in this group.
//
// Step 0 moves data to the relays (and every direct pair); step 1 forwards from the relays. Each
// relay stages what it forwards in a region after its receive region, one slot per (source,
// destination), ordered by source then destination. Between any two members, transfers of a chunk
// and step are posted in ascending order of their final destination (step 0) or original source
// (step 1) at both ends, so the QP order matches.
#include <algorithm>
#include <unordered_map>
#include <vector>

#include "collectives/emitter.h"
#include "collectives/hosts.h"

namespace etwire::collectives {

namespace {

class PxnEmitter final : public Emitter {
 public:
  explicit PxnEmitter(const ResolvedSpec& spec)
      : spec_(spec), n_(spec.members()), hosts_{spec.ranks_per_host} {
    position_of_.reserve(n_);
    for (uint32_t p = 0; p < n_; ++p) {
      position_of_.emplace(spec.ranks[p], p);
      by_host_.push_back(p);
      by_rail_.push_back(p);
    }
    const auto& ranks = spec.ranks;
    std::sort(by_host_.begin(), by_host_.end(), [&](uint32_t a, uint32_t b) {
      return std::pair(hosts_.host(ranks[a]), a) < std::pair(hosts_.host(ranks[b]), b);
    });
    std::sort(by_rail_.begin(), by_rail_.end(), [&](uint32_t a, uint32_t b) {
      return std::pair(hosts_.local_index(ranks[a]), a) <
             std::pair(hosts_.local_index(ranks[b]), b);
    });
  }

  void emit(uint32_t p, ProgramBuilder& b) override {
    const DataLayout& layout = spec_.layout;
    const auto& ranks = spec_.ranks;
    const uint32_t chunks = spec_.chunks;
    layout.send_offsets(p, send_offsets_);
    layout.recv_offsets(p, recv_offsets_);
    const uint64_t recv_base = send_offsets_[n_];
    const auto host_members = members_of_host(hosts_.host(ranks[p]));
    const auto rail = members_of_rail(hosts_.local_index(ranks[p]));

    // Staging slots of this member as relay: (source on this host, destination on this rail on
    // another host), by source then destination.
    staged_.clear();
    uint64_t staging_end = recv_base + recv_offsets_[n_];
    for (uint32_t src : host_members) {
      if (src == p) continue;
      for (uint32_t dst : rail) {
        if (dst == p) continue;
        staged_.push_back({src, dst, {staging_end, layout.pair_bytes(src, dst)}, {}});
        staging_end += layout.pair_bytes(src, dst);
      }
    }
    b.set_buffer_bytes(staging_end);

    for (uint32_t c = 0; c < chunks; ++c) {
      const OpTag gather{c, 0, 0};
      const OpTag forward{c, 1, 0};
      auto piece = [&](ByteRange range) { return Partition::piece(range, chunks, c); };
      // Step 0, as source: straight to the destination or to its relay.
      for (uint32_t dst = 0; dst < n_; ++dst) {
        const uint32_t relay = relay_for(p, dst);
        b.send(relay == kNoRelay ? dst : relay,
               piece({send_offsets_[dst], layout.pair_bytes(p, dst)}), gather);
      }
      // Step 0, as receiver: direct data for this member, and data to relay.
      size_t slot = 0;
      for (uint32_t src = 0; src < n_; ++src) {
        const bool relays_for_src = src != p && hosts_.same_host(ranks[src], ranks[p]);
        if (!relays_for_src) {
          if (relay_for(src, p) == kNoRelay) {
            b.recv(src, piece({recv_base + recv_offsets_[src], layout.pair_bytes(src, p)}), gather,
                   false);
          }
          continue;
        }
        for (uint32_t dst : rail) {  // ascending; p itself is the direct (same-host) transfer
          if (dst == p) {
            b.recv(src, piece({recv_base + recv_offsets_[src], layout.pair_bytes(src, p)}), gather,
                   false);
          } else {
            Staged& staged = staged_[slot++];
            staged.received = b.recv(src, piece(staged.range), gather, false);
          }
        }
      }
      // Step 1, as relay: forward each staged slot to its destination.
      for (const Staged& staged : staged_) {
        b.send(staged.dst, piece(staged.range), forward, {&staged.received, 1});
      }
      // Step 1, as destination: data relayed from other hosts.
      for (uint32_t src = 0; src < n_; ++src) {
        const uint32_t relay = relay_for(src, p);
        if (relay == kNoRelay) continue;
        b.recv(relay, piece({recv_base + recv_offsets_[src], layout.pair_bytes(src, p)}), forward,
               false);
      }
    }
  }

 private:
  static constexpr uint32_t kNoRelay = UINT32_MAX;
  struct Staged {
    uint32_t src;
    uint32_t dst;
    ByteRange range;
    Transfer received;
  };

  uint32_t relay_for(uint32_t src, uint32_t dst) const {
    const int32_t s = spec_.ranks[src];
    const int32_t d = spec_.ranks[dst];
    if (hosts_.same_host(s, d)) return kNoRelay;
    const int64_t relay_rank =
        hosts_.host(s) * static_cast<int64_t>(hosts_.ranks_per_host) + hosts_.local_index(d);
    auto it = position_of_.find(static_cast<int32_t>(relay_rank));
    if (it == position_of_.end() || it->second == src) return kNoRelay;
    return it->second;
  }
  std::span<const uint32_t> members_of_host(int64_t host) const {
    auto key = [&](uint32_t p) { return hosts_.host(spec_.ranks[p]); };
    auto lo = std::partition_point(by_host_.begin(), by_host_.end(),
                                   [&](uint32_t p) { return key(p) < host; });
    auto hi = std::partition_point(lo, by_host_.end(), [&](uint32_t p) { return key(p) == host; });
    return {lo, hi};
  }
  std::span<const uint32_t> members_of_rail(uint32_t local) const {
    auto key = [&](uint32_t p) { return hosts_.local_index(spec_.ranks[p]); };
    auto lo = std::partition_point(by_rail_.begin(), by_rail_.end(),
                                   [&](uint32_t p) { return key(p) < local; });
    auto hi = std::partition_point(lo, by_rail_.end(), [&](uint32_t p) { return key(p) == local; });
    return {lo, hi};
  }

  const ResolvedSpec& spec_;
  uint32_t n_;
  HostGrouping hosts_;
  std::unordered_map<int32_t, uint32_t> position_of_;
  std::vector<uint32_t> by_host_;  // positions sorted by (host, position)
  std::vector<uint32_t> by_rail_;  // positions sorted by (local index, position)
  std::vector<uint64_t> send_offsets_;
  std::vector<uint64_t> recv_offsets_;
  std::vector<Staged> staged_;
};

}  // namespace

std::unique_ptr<Emitter> make_pxn_emitter(const ResolvedSpec& spec) {
  return std::make_unique<PxnEmitter>(spec);
}

}  // namespace etwire::collectives
