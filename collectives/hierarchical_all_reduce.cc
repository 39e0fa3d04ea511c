// All-reduce in three phases over the hosts: inside every host the buffer's slices are reduced
// to their owners, the owners of a slice (one per host) all-reduce it between the hosts, and
// inside every host the owners hand the results back.
//
//  - NVLS and NVLS-tree (NCCL's NVLink SHARP): inside the server the NVSwitch reduces and
//    multicasts; here every member sends each slice straight to its owner, which adds them in,
//    and the owner sends the result straight back to every member. Between the servers: a ring
//    (nvls) or a double binary tree (nvls-tree) over the hosts.
//  - CollNet (NCCL's in-network reduction, SHARP): inside the server as NVLS; between the servers
//    each slice's owners send it to the aggregation node of the switch their NIC hangs off, the
//    nodes add what their children sent and pass the sum up to the lowest node above every
//    owner, and the result comes back down the same way (aggregation_tree.h). The nodes are
//    participants after the members.
//  - Hierarchical: ring reduce-scatter inside the host, ring all-reduce between the hosts, ring
//    all-gather inside the host, as a trace's involved_dim asks of a collective over both
//    dimensions.
//
// Slices: S = the most members any host has; on a host of s members, slice j belongs to its
// member j mod s in local-index order (the ring's block b is the slices j = b mod s). On fully
// populated hosts the owners of a slice share a local index, hence a rail: each NIC carries its
// own slice. Every slice moves as chunk runs (chunk_run.h); a send lists as dependencies the
// transfers that wrote its slice before it (the builder keeps those whose bytes it overlaps).
// Pairs meet in the same order on both sides: phase by phase, slice by slice, step by step.
#include <array>
#include <vector>

#include "collectives/aggregation_tree.h"
#include "collectives/binary_tree.h"
#include "collectives/emitter.h"
#include "collectives/hosts.h"

namespace etwire::collectives {

namespace {

class HierarchicalEmitter final : public Emitter {
 public:
  explicit HierarchicalEmitter(const ResolvedSpec& spec)
      : spec_(spec),
        hosts_(group_hosts(spec.ranks, HostGrouping{spec.ranks_per_host})),
        inter_tree_(spec.algorithm == Algorithm::kNvlsTree),
        collnet_(spec.algorithm == Algorithm::kCollNet),
        intra_ring_(spec.algorithm == Algorithm::kHierarchical),
        runs_(ChunkRuns::split({0, spec.layout.full_bytes()}, spec.chunks)) {
    for (const std::vector<uint32_t>& members : hosts_.members) {
      slices_ = std::max(slices_, static_cast<uint32_t>(members.size()));
    }
    if (inter_tree_) {
      trees_[0] = in_order_tree(hosts_.count());
      trees_[1] = complementary_tree(trees_[0]);
    }
    // Steps: phase 1 takes 0 .. intra_steps_-1, phase 2 the next ones, phase 3 the rest.
    intra_steps_ = intra_ring_ ? slices_ - 1 : 1;
    const uint32_t h = hosts_.count();
    gather_step_ = intra_steps_ + (inter_tree_ || collnet_ ? 2 : 2 * (h - 1));
    if (collnet_ && h > 1) reduce_slices();
  }

  void emit(uint32_t p, ProgramBuilder& b) override {
    b.set_buffer_bytes(spec_.layout.full_bytes());
    if (p >= spec_.members()) {
      emit_aggregator(p - spec_.members(), b);
      return;
    }
    if (spec_.members() == 1) return;
    const uint32_t host = hosts_.host_of[p];
    const std::vector<uint32_t>& local = hosts_.members[host];
    // Phase 1: the slices reduced to their owners.
    reduced_.clear();
    if (intra_ring_) {
      intra_ring(p, local, true, b);
    } else {
      scatter_direct(p, local, b);
    }
    // Phase 2: the owners of each slice, one per host, all-reduce it over the network.
    final_ = reduced_;
    for (uint32_t j = 0; j < slices_ && hosts_.count() > 1; ++j) {
      if (local[j % local.size()] != p) continue;
      if (inter_tree_) {
        inter_tree(host, j, b);
      } else if (collnet_) {
        inter_collnet(p, j, b);
      } else {
        inter_ring(host, j, b);
      }
    }
    // Phase 3: the results back to every member of the host.
    if (intra_ring_) {
      intra_ring(p, local, false, b);
    } else {
      gather_direct(p, local, b);
    }
  }

 private:
  ChunkRuns slices(uint32_t j) const { return runs_.part(slices_, j); }
  // The owner of slice j on host `host`.
  uint32_t owner(uint32_t host, uint32_t j) const {
    const std::vector<uint32_t>& members = hosts_.members[host];
    return members[j % members.size()];
  }

  void scatter_direct(uint32_t p, const std::vector<uint32_t>& local, ProgramBuilder& b) {
    for (uint32_t j = 0; j < slices_; ++j) {
      const uint32_t owner = local[j % local.size()];
      for (const ChunkRun& run : slices(j)) {
        if (owner != p) {
          b.send_run(owner, run, {0, 0});
          continue;
        }
        for (uint32_t q : local) {
          if (q != p) reduced_.push_back(b.recv_run(q, run, {0, 0}, true));
        }
      }
    }
  }

  void gather_direct(uint32_t p, const std::vector<uint32_t>& local, ProgramBuilder& b) {
    for (uint32_t j = 0; j < slices_; ++j) {
      const uint32_t owner = local[j % local.size()];
      for (const ChunkRun& run : slices(j)) {
        if (owner != p) {
          b.recv_run(owner, run, {gather_step_, 0}, false);
          continue;
        }
        for (uint32_t q : local) {
          if (q != p) b.send_run(q, run, {gather_step_, 0}, final_);
        }
      }
    }
  }

  // A ring over the host's members in local-index order; block b is the slices j = b mod s.
  // Reduce-scatter (phase 1) step t sends block a-t-1 and adds block a-t-2, leaving member a with
  // block a reduced over the host; all-gather (phase 3) step u sends block a-u and takes block
  // a-u-1, the first send after the member's phase-2 results.
  void intra_ring(uint32_t p, const std::vector<uint32_t>& local, bool reduce, ProgramBuilder& b) {
    const auto s = static_cast<uint32_t>(local.size());
    if (s == 1) return;
    uint32_t a = 0;
    while (local[a] != p) ++a;
    const uint32_t next = local[(a + 1) % s];
    const uint32_t previous = local[(a + s - 1) % s];
    previous_.clear();
    for (uint32_t t = 0; t + 1 < s; ++t) {
      const uint32_t sent = (a + 2 * s - t - (reduce ? 1 : 0)) % s;
      const uint32_t received = (sent + s - 1) % s;
      const StepTag tag{reduce ? t : gather_step_ + t, 0};
      const std::vector<Transfer>& after = t > 0 ? previous_ : (reduce ? none_ : final_);
      for (uint32_t j = sent; j < slices_; j += s) {
        for (const ChunkRun& run : slices(j)) b.send_run(next, run, tag, after);
      }
      step_.clear();
      for (uint32_t j = received; j < slices_; j += s) {
        for (const ChunkRun& run : slices(j)) {
          step_.push_back(b.recv_run(previous, run, tag, reduce));
          if (reduce) reduced_.push_back(step_.back());
        }
      }
      previous_.swap(step_);
    }
  }

  // Ring all-reduce of slice j over the hosts in order, as ring.cc does it: at ring index k,
  // reduce-scatter step t sends block k-t-1 and adds block k-t-2, all-gather step u sends block
  // k-u and takes block k-u-1. Each send waits for the previous step's receive and the slice's
  // phase-1 sum.
  void inter_ring(uint32_t k, uint32_t j, ProgramBuilder& b) {
    const uint32_t h = hosts_.count();
    const uint32_t next = owner((k + 1) % h, j);
    const uint32_t previous = owner((k + h - 1) % h, j);
    const ChunkRuns runs = slices(j);
    std::array<Transfer, 2> last{};
    for (uint32_t t = 0; t < 2 * (h - 1); ++t) {
      const bool reduce = t < h - 1;
      const uint32_t back = reduce ? t + 1 : t - (h - 1);
      const uint32_t sent = (k + 2 * h - back) % h;
      const uint32_t received = (sent + h - 1) % h;
      const StepTag tag{intra_steps_ + t, 0};
      for (uint32_t r = 0; r < runs.size(); ++r) {
        after_.assign(reduced_.begin(), reduced_.end());
        after_.push_back(last[r]);
        b.send_run(next, runs[r].part(h, sent), tag, after_);
      }
      for (uint32_t r = 0; r < runs.size(); ++r) {
        last[r] = b.recv_run(previous, runs[r].part(h, received), tag, reduce);
        final_.push_back(last[r]);
      }
    }
  }

  // Double binary tree all-reduce of slice j over the hosts: half t reduced up tree t to its
  // root and broadcast back down, on channel t.
  void inter_tree(uint32_t host, uint32_t j, ProgramBuilder& b) {
    const StepTag up{intra_steps_, 0};
    const StepTag down{intra_steps_ + 1, 0};
    for (uint32_t t = 0; t < 2; ++t) {
      const BinaryTree& tree = trees_[t];
      for (const ChunkRun& run : slices(j)) {
        const ChunkRun half = run.part(2, t);
        for (uint32_t child : tree.children[host]) {
          if (child == kNoMember) continue;
          final_.push_back(b.recv_run(owner(child, j), half, {up.step, t}, true));
        }
        if (tree.parent[host] != kNoMember) {
          b.send_run(owner(tree.parent[host], j), half, {up.step, t}, final_);
        }
      }
    }
    for (uint32_t t = 0; t < 2; ++t) {
      const BinaryTree& tree = trees_[t];
      for (const ChunkRun& run : slices(j)) {
        const ChunkRun half = run.part(2, t);
        if (tree.parent[host] != kNoMember) {
          final_.push_back(b.recv_run(owner(tree.parent[host], j), half, {down.step, t}, false));
        }
        for (uint32_t child : tree.children[host]) {
          if (child != kNoMember) b.send_run(owner(child, j), half, {down.step, t}, final_);
        }
      }
    }
  }

  // CollNet: how each slice is reduced between its owners, one per host.
  void reduce_slices() {
    std::vector<uint32_t> owners(hosts_.count());
    for (uint32_t j = 0; j < slices_; ++j) {
      for (uint32_t host = 0; host < hosts_.count(); ++host) owners[host] = owner(host, j);
      reductions_.push_back(reduce_slice(*spec_.aggregation, spec_.ranks, owners));
    }
  }

  // The owner `p` of slice j sends it up to its leaf node and takes the result back from it.
  void inter_collnet(uint32_t p, uint32_t j, ProgramBuilder& b) {
    const uint32_t node = spec_.members() + spec_.aggregation->leaf_of_rank[spec_.ranks[p]];
    for (const ChunkRun& run : slices(j)) b.send_run(node, run, {intra_steps_, 0}, reduced_);
    for (const ChunkRun& run : slices(j)) {
      final_.push_back(b.recv_run(node, run, {intra_steps_ + 1, 0}, false));
    }
  }

  // Aggregation node k, slice by slice: the first child's bytes copied in, the others' added,
  // the sum passed up unless k is the slice's root, and the result sent down to every child.
  void emit_aggregator(uint32_t k, ProgramBuilder& b) {
    const StepTag up{intra_steps_, 0};
    const StepTag down{intra_steps_ + 1, 0};
    const uint32_t n = spec_.members();
    for (uint32_t j = 0; j < reductions_.size(); ++j) {
      const SliceReduction& slice = reductions_[j];
      if (!slice.takes_part(k)) continue;
      children_.assign(slice.member_children[k].begin(), slice.member_children[k].end());
      for (uint32_t child : slice.node_children[k]) children_.push_back(n + child);
      for (const ChunkRun& run : slices(j)) {
        step_.clear();
        for (uint32_t child : children_) {
          const bool first = step_.empty();
          step_.push_back(
              b.recv_run(child, run, up, !first,
                         first ? std::span<const Transfer>{} : std::span(step_).first(1)));
        }
        if (slice.root != k) {
          const uint32_t parent = n + spec_.aggregation->parent[k];
          b.send_run(parent, run, up, step_);
          step_.assign(1, b.recv_run(parent, run, down, false));
        }
        for (uint32_t child : children_) b.send_run(child, run, down, step_);
      }
    }
  }

  const ResolvedSpec& spec_;
  GroupHosts hosts_;
  bool inter_tree_;
  bool collnet_;
  bool intra_ring_;
  ChunkRuns runs_;
  uint32_t slices_ = 1;
  std::array<BinaryTree, 2> trees_;
  uint32_t intra_steps_ = 1;
  uint32_t gather_step_ = 1;
  // This member's phase-1 receives, every transfer that wrote into its slices so far, a ring
  // step's receives and the previous step's, and a send's dependencies (kept between members for
  // their storage).
  std::vector<Transfer> reduced_;
  std::vector<Transfer> final_;
  std::vector<Transfer> step_;
  std::vector<Transfer> previous_;
  std::vector<Transfer> after_;
  const std::vector<Transfer> none_;
  std::vector<SliceReduction> reductions_;  // CollNet, by slice
  std::vector<uint32_t> children_;          // an aggregation node's, members then nodes
};

}  // namespace

std::unique_ptr<Emitter> make_hierarchical_emitter(const ResolvedSpec& spec) {
  return std::make_unique<HierarchicalEmitter>(spec);
}

}  // namespace etwire::collectives
