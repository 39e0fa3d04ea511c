#include "collectives/traffic_stats.h"

#include <algorithm>
#include <tuple>

#include "collectives/hosts.h"

namespace etwire::collectives {

std::vector<MemberTraffic> member_traffic(const CollectiveProgram& program,
                                          uint32_t ranks_per_host) {
  const HostGrouping hosts{ranks_per_host};
  const auto& ranks = program.ranks();
  std::vector<MemberTraffic> out(program.programs());
  for (size_t m = 0; m < program.programs(); ++m) {
    const uint32_t self = program.position(m);
    MemberTraffic& t = out[m];
    for (uint32_t i = 0; i < program.ops(m); ++i) {
      const OpView op = program.op(m, i);
      const bool local = op.peer == self;
      const uint64_t bytes = op.bytes();  // every chunk of the run
      if (op.is_send()) {
        t.sends += op.chunks.chunk_count;
        if (local) continue;
        t.bytes_sent += bytes;
        // An aggregation node (CollNet) sits in a switch: every byte to or from it is network.
        const bool network = !program.is_member(self) || !program.is_member(op.peer) ||
                             !hosts.same_host(ranks[self], ranks[op.peer]);
        if (network) t.network_bytes_sent += bytes;
      } else {
        t.recvs += op.chunks.chunk_count;
        if (!local) t.bytes_received += bytes;
      }
    }
  }
  return out;
}

std::vector<Flow> flows(const CollectiveProgram& program) {
  // A member sends to few (destination, QP) pairs over and over (a ring's 2(n-1) steps to one
  // neighbour): each send first looks among the member's last few pairs, so that mostly
  // distinct pairs are sorted.
  constexpr size_t kRecent = 8;
  std::vector<Flow> all;
  for (size_t m = 0; m < program.programs(); ++m) {
    const uint32_t self = program.position(m);
    const size_t member_begin = all.size();
    for (uint32_t i = 0; i < program.ops(m); ++i) {
      const OpView op = program.op(m, i);
      if (!op.is_send()) continue;
      bool found = false;
      for (size_t k = all.size(); k > member_begin && k + kRecent > all.size(); --k) {
        Flow& flow = all[k - 1];
        if (flow.dst == op.peer && flow.qp == op.qp) {
          flow.operations += op.chunks.chunk_count;
          flow.bytes += op.bytes();
          found = true;
          break;
        }
      }
      if (!found) all.push_back({self, op.peer, op.qp, op.chunks.chunk_count, op.bytes()});
    }
  }
  merge_flows(all);
  return all;
}

void merge_flows(std::vector<Flow>& flows) {
  auto key = [](const Flow& f) { return std::tuple(f.src, f.dst, f.qp); };
  std::sort(flows.begin(), flows.end(),
            [&](const Flow& a, const Flow& b) { return key(a) < key(b); });
  size_t kept = 0;
  for (const Flow& f : flows) {
    if (kept > 0 && key(flows[kept - 1]) == key(f)) {
      flows[kept - 1].operations += f.operations;
      flows[kept - 1].bytes += f.bytes;
    } else {
      flows[kept++] = f;
    }
  }
  flows.resize(kept);
}

}  // namespace etwire::collectives
