#include "trace/synth/rank_trace_builder.h"

#include <algorithm>
#include <cmath>

#include "trace/synth/node_builder.h"

namespace etwire::synth {

using trace::NodeType;

void RankTraceBuilder::set_deps(const std::vector<uint64_t>& deps) {
  for (uint64_t dep : deps) {
    if (dep == 0) continue;
    if (std::find(node_.data_deps.begin(), node_.data_deps.end(), dep) != node_.data_deps.end()) {
      continue;
    }
    node_.data_deps.push_back(dep);
  }
}

uint64_t RankTraceBuilder::emit() {
  writer_.write(node_);
  ++stats_.nodes;
  return node_.id;
}

uint64_t RankTraceBuilder::compute(const std::string& name, uint64_t duration_us, double flops,
                                   const std::vector<uint64_t>& deps) {
  start_node(node_, next_id_++, NodeType::kComp, name);
  node_.duration_us = duration_us;
  if (flops > 0) add_int64_attr(node_, "num_ops", static_cast<int64_t>(std::llround(flops)));
  set_deps(deps);
  ++stats_.compute_nodes;
  stats_.compute_us += duration_us;
  return emit();
}

uint64_t RankTraceBuilder::collective(const std::string& name, trace::CollectiveType type,
                                      uint64_t bytes, int64_t group,
                                      const std::vector<uint64_t>& deps) {
  start_node(node_, next_id_++, NodeType::kCommColl, name);
  make_collective(node_, type, bytes, std::to_string(group));
  set_deps(deps);
  uint64_t& previous = last_on_group_[group];
  set_deps({previous});
  previous = node_.id;
  stats_.collectives[static_cast<size_t>(type)].add(bytes);
  return emit();
}

uint64_t RankTraceBuilder::send(const std::string& name, int32_t peer, uint64_t bytes, int32_t tag,
                                const std::vector<uint64_t>& deps) {
  start_node(node_, next_id_++, NodeType::kCommSend, name);
  make_send(node_, rank_, peer, bytes, tag);
  set_deps(deps);
  stats_.sends.add(bytes);
  return emit();
}

uint64_t RankTraceBuilder::recv(const std::string& name, int32_t peer, uint64_t bytes, int32_t tag,
                                const std::vector<uint64_t>& deps) {
  start_node(node_, next_id_++, NodeType::kCommRecv, name);
  make_recv(node_, rank_, peer, bytes, tag);
  set_deps(deps);
  stats_.recvs.add(bytes);
  return emit();
}

}  // namespace etwire::synth
