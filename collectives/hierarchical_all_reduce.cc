// NVLS and NVLS-tree all-reduce: NCCL's NVLink SHARP algorithms. Inside a server the NVSwitch
// reduces: every GPU hands each slice of its buffer to the slice's owner on the server, which
// ends with the server's sum of it (here: direct transfers over the host's interconnect, added
// on arrival, where the switch adds in flight). Between servers the owners of a slice, one per
// server and (on fully populated servers) all on one rail, all-reduce it over the network: on a
// ring (nvls) or on a double binary tree (nvls-tree). Inside the server again, the owner hands
// the result to every other GPU (the switch's multicast). So each GPU's NIC carries only its own
// slice, 1/S of the buffer for S GPUs per server.
//
// Slices: S = the most members any host has; on a host of s members, slice j belongs to its
// member j mod s in local-index order. Every slice moves as chunk runs (chunk_run.h); a send
// lists as dependencies every transfer that wrote its slice before it (the builder keeps those
// whose bytes it overlaps). Pairs meet in the same order on both sides: phase by phase, slice by
// slice, step by step.
#include <array>
#include <vector>

#include "collectives/binary_tree.h"
#include "collectives/emitter.h"
#include "collectives/hosts.h"

namespace etwire::collectives {

namespace {

constexpr uint32_t kScatterStep = 0;  // phase 1; phase 2 uses steps 1..; phase 3 the last

class NvlsEmitter final : public Emitter {
 public:
  explicit NvlsEmitter(const ResolvedSpec& spec)
      : spec_(spec),
        hosts_(group_hosts(spec.ranks, HostGrouping{spec.ranks_per_host})),
        tree_(spec.algorithm == Algorithm::kNvlsTree),
        runs_(ChunkRuns::split({0, spec.layout.full_bytes()}, spec.chunks)) {
    for (const std::vector<uint32_t>& members : hosts_.members) {
      slices_ = std::max(slices_, static_cast<uint32_t>(members.size()));
    }
    if (tree_) {
      trees_[0] = in_order_tree(hosts_.count());
      trees_[1] = complementary_tree(trees_[0]);
    }
    const uint32_t h = hosts_.count();
    gather_step_ = 1 + (tree_ ? 2 : 2 * (h - 1));
  }

  void emit(uint32_t p, ProgramBuilder& b) override {
    b.set_buffer_bytes(spec_.layout.full_bytes());
    if (spec_.members() == 1) return;
    const uint32_t host = hosts_.host_of[p];
    const std::vector<uint32_t>& local = hosts_.members[host];
    const auto s = static_cast<uint32_t>(local.size());
    // Phase 1: each slice to its owner, which adds the others' into its own.
    reduced_.clear();
    reduced_begin_.assign(slices_ + 1, 0);
    for (uint32_t j = 0; j < slices_; ++j) {
      const uint32_t owner = local[j % s];
      reduced_begin_[j] = static_cast<uint32_t>(reduced_.size());
      for (const ChunkRun& run : slices(j)) {
        if (owner != p) {
          b.send_run(owner, run, {kScatterStep, 0});
          continue;
        }
        for (uint32_t q : local) {
          if (q != p) reduced_.push_back(b.recv_run(q, run, {kScatterStep, 0}, true));
        }
      }
    }
    reduced_begin_[slices_] = static_cast<uint32_t>(reduced_.size());
    for (uint32_t j = 0; j < slices_; ++j) {
      const uint32_t owner = local[j % s];
      if (owner == p) {
        // Phase 2: the owners of the slice, one per host, all-reduce it over the network;
        // `result_` gathers every transfer that wrote into it.
        result_.assign(reduced_.begin() + reduced_begin_[j],
                       reduced_.begin() + reduced_begin_[j + 1]);
        if (hosts_.count() > 1 && tree_) tree_all_reduce(host, j, b);
        if (hosts_.count() > 1 && !tree_) ring_all_reduce(host, j, b);
      }
      // Phase 3: the owner hands the result to the host's other members.
      for (const ChunkRun& run : slices(j)) {
        if (owner != p) {
          b.recv_run(owner, run, {gather_step_, 0}, false);
          continue;
        }
        for (uint32_t q : local) {
          if (q != p) b.send_run(q, run, {gather_step_, 0}, result_);
        }
      }
    }
  }

 private:
  ChunkRuns slices(uint32_t j) const { return runs_.part(slices_, j); }
  // The owner of slice j on host `host`.
  uint32_t owner(uint32_t host, uint32_t j) const {
    const std::vector<uint32_t>& members = hosts_.members[host];
    return members[j % members.size()];
  }

  // Ring all-reduce of slice j over the hosts in order, as ring.cc does it: at ring index k,
  // reduce-scatter step t sends block k-t-1 and adds block k-t-2, all-gather step u sends block
  // k-u and takes block k-u-1. Each send waits for the previous step's receive and the slice's
  // phase-1 sum.
  void ring_all_reduce(uint32_t k, uint32_t j, ProgramBuilder& b) {
    const uint32_t h = hosts_.count();
    const uint32_t next = owner((k + 1) % h, j);
    const uint32_t previous = owner((k + h - 1) % h, j);
    const ChunkRuns runs = slices(j);
    const size_t summed = result_.size();
    std::array<Transfer, 2> last{};
    for (uint32_t t = 0; t < 2 * (h - 1); ++t) {
      const bool reduce = t < h - 1;
      const uint32_t back = reduce ? t + 1 : t - (h - 1);
      const uint32_t sent = (k + 2 * h - back) % h;
      const uint32_t received = (sent + h - 1) % h;
      const StepTag tag{1 + t, 0};
      for (uint32_t r = 0; r < runs.size(); ++r) {
        after_.assign(result_.begin(), result_.begin() + static_cast<std::ptrdiff_t>(summed));
        after_.push_back(last[r]);
        b.send_run(next, runs[r].part(h, sent), tag, after_);
      }
      for (uint32_t r = 0; r < runs.size(); ++r) {
        last[r] = b.recv_run(previous, runs[r].part(h, received), tag, reduce);
        result_.push_back(last[r]);
      }
    }
  }

  // Double binary tree all-reduce of slice j over the hosts: half t reduced up tree t to its
  // root and broadcast back down, on channel t.
  void tree_all_reduce(uint32_t host, uint32_t j, ProgramBuilder& b) {
    for (uint32_t t = 0; t < 2; ++t) {
      const BinaryTree& tree = trees_[t];
      for (const ChunkRun& run : slices(j)) {
        const ChunkRun half = run.part(2, t);
        for (uint32_t child : tree.children[host]) {
          if (child != kNoMember)
            result_.push_back(b.recv_run(owner(child, j), half, {1, t}, true));
        }
        if (tree.parent[host] != kNoMember) {
          b.send_run(owner(tree.parent[host], j), half, {1, t}, result_);
        }
      }
    }
    for (uint32_t t = 0; t < 2; ++t) {
      const BinaryTree& tree = trees_[t];
      for (const ChunkRun& run : slices(j)) {
        const ChunkRun half = run.part(2, t);
        if (tree.parent[host] != kNoMember) {
          result_.push_back(b.recv_run(owner(tree.parent[host], j), half, {2, t}, false));
        }
        for (uint32_t child : tree.children[host]) {
          if (child != kNoMember) b.send_run(owner(child, j), half, {2, t}, result_);
        }
      }
    }
  }

  const ResolvedSpec& spec_;
  GroupHosts hosts_;
  bool tree_;
  ChunkRuns runs_;
  uint32_t slices_ = 1;
  std::array<BinaryTree, 2> trees_;
  uint32_t gather_step_ = 1;
  // This member's phase-1 receives, where each slice's begin in them, every transfer that wrote
  // into the slice at hand, and a send's dependencies (kept between members for their storage).
  std::vector<Transfer> reduced_;
  std::vector<uint32_t> reduced_begin_;
  std::vector<Transfer> result_;
  std::vector<Transfer> after_;
};

}  // namespace

std::unique_ptr<Emitter> make_nvls_emitter(const ResolvedSpec& spec) {
  return std::make_unique<NvlsEmitter>(spec);
}

}  // namespace etwire::collectives
