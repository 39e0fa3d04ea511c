#include "collectives/emitter.h"

namespace etwire::collectives {

std::unique_ptr<Emitter> make_emitter(const ResolvedSpec& spec) {
  switch (spec.algorithm) {
    case Algorithm::kRing:
      // Broadcast and reduce have no blocks to rotate: their ring is a pipelined chain.
      if (spec.is(trace::CollectiveType::kBroadcast) || spec.is(trace::CollectiveType::kReduce)) {
        return make_chain_emitter(spec);
      }
      return make_ring_emitter(spec);
    case Algorithm::kBidirectionalRing:
      return make_ring_emitter(spec);
    case Algorithm::kHalvingDoubling:
      return make_halving_doubling_emitter(spec);
    case Algorithm::kDoubleBinaryTree:
    case Algorithm::kTree:
      return make_tree_all_reduce_emitter(spec);
    case Algorithm::kDirect:
      return make_direct_emitter(spec);
    case Algorithm::kPxn:
      return make_pxn_emitter(spec);
    case Algorithm::kDissemination:
      return make_dissemination_emitter(spec);
    case Algorithm::kPat:
      return make_pat_emitter(spec);
    case Algorithm::kNvls:
    case Algorithm::kNvlsTree:
    case Algorithm::kHierarchical:
    case Algorithm::kCollNet:
      return make_hierarchical_emitter(spec);
  }
  return nullptr;
}

}  // namespace etwire::collectives
