#include "control/plan/traffic_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "collectives/collective_spec.h"
#include "collectives/generate.h"
#include "collectives/traffic_stats.h"
#include "control/plan/collective_choice.h"
#include "control/plan/run_plan.h"
#include "nic/port_frame_format.h"
#include "twin/layout/configured_layout.h"

namespace etwire::control {

namespace {

// The QP ids a connection uses. Ids below 64 (every setting up to 32 QPs per peer) are kept
// exactly, so the two directions of a connection are united; beyond that only a count is kept and
// the larger direction's count stands for both.
struct QpIds {
  uint64_t low = 0;
  uint32_t high = 0;

  void add(uint16_t id) {
    if (id < 64) {
      low |= uint64_t{1} << id;
    } else {
      ++high;
    }
  }
  void merge(const QpIds& other) {
    low |= other.low;
    high = std::max(high, other.high);
  }
  uint32_t count() const { return static_cast<uint32_t>(std::popcount(low)) + high; }
};

// Items gathered as they come, sorted and folded (each run of equal keys into its first,
// `Fold::fold`) whenever they have doubled since the last fold. A tree or hash node per
// connection took 50-70 bytes; an all-to-all of 4096 ranks has 16.8 M directed connections, and
// the plan kept 3.2 GB.
template <typename T, typename Fold>
class FoldedItems {
 public:
  void add(const T& item) {
    items_.push_back(item);
    if (items_.size() >= 2 * std::max<size_t>(folded_, 1 << 16)) fold();
  }
  // Every distinct key once, in key order.
  const std::vector<T>& folded() {
    fold();
    return items_;
  }
  std::vector<T> take() {
    fold();
    return std::move(items_);
  }

 private:
  void fold() {
    std::sort(items_.begin(), items_.end(),
              [](const T& a, const T& b) { return Fold::key(a) < Fold::key(b); });
    size_t kept = 0;
    for (size_t i = 0; i < items_.size(); ++i) {
      if (kept > 0 && Fold::key(items_[kept - 1]) == Fold::key(items_[i])) {
        Fold::fold(items_[kept - 1], items_[i]);
      } else {
        items_[kept++] = items_[i];
      }
    }
    items_.resize(kept);
    folded_ = kept;
  }
  std::vector<T> items_;
  size_t folded_ = 0;
};

// What one member sends to one other member in a program: bytes and the QP ids used.
struct PeerShare {
  uint32_t dst = 0;  // member position
  uint64_t bytes = 0;
  QpIds qps;
  std::vector<uint16_t> high_ids;  // the ids of 64 and over, every one (`qps` holds the rest)
};

// A generated program reduced to what the plan needs: by source position (the members, then any
// aggregation nodes), its shares.
using SharesBySource = std::vector<std::vector<PeerShare>>;

// Generated one member at a time, so that memory holds one member's program, not every
// member's (a ring's grow with the group: some 4 GB at 4096 ranks all at once); a ring member's
// sends are summed without its program (Emitter::summarize).
SharesBySource shares_of(const collectives::CollectiveSpec& spec) {
  const collectives::ProgramGenerator generator(spec);
  const uint32_t participants = generator.spec().participants();
  SharesBySource by_source(participants);
  collectives::CollectiveProgram program;
  std::vector<collectives::Flow> flows;
  for (uint32_t p = 0; p < participants; ++p) {
    generator.member_flows(p, program, flows);
    auto& shares = by_source[p];
    for (const auto& flow : flows) {
      if (flow.src == flow.dst) continue;  // local copy
      if (shares.empty() || shares.back().dst != flow.dst) shares.push_back({flow.dst, 0, {}, {}});
      shares.back().bytes += flow.bytes;  // flows are per (src, dst, qp), sorted
      shares.back().qps.add(flow.qp);
      if (flow.qp >= 64) shares.back().high_ids.push_back(flow.qp);
    }
  }
  return by_source;
}

// Accumulates one job's traffic.
class JobPlanner {
 public:
  JobPlanner(const RunPlan& loaded, size_t job, TrafficPlan& plan, Diagnostics& out)
      : loaded_(loaded),
        config_(loaded.config),
        job_(job),
        facts_(*loaded.traces[job]),
        placement_(*loaded.placements[job]),
        plan_(plan),
        out_(out),
        base_(base_collective_spec(config_, job)) {
    plan_.jobs[job].resize(static_cast<size_t>(facts_.world_size));
  }

  void run() {
    for (int32_t rank = 0; rank < facts_.world_size; ++rank) {
      const RankComm& comm = facts_.ranks[static_cast<size_t>(rank)];
      for (const auto& [call, count] : comm.collectives) collective(rank, call, count);
      for (const auto& [transfer, count] : comm.sends) send(rank, transfer, count);
    }
    auto& ranks = plan_.jobs[job_];
    for (const auto& [pair, ids] : connections_.folded()) {
      uint32_t qps = ids.count();
      for (int32_t end : {static_cast<int32_t>(pair >> 32), static_cast<int32_t>(pair)}) {
        if (placement_.is_aggregator(end)) continue;  // no rank: its ranks' peer
        ++ranks[static_cast<size_t>(end)].peers;
        ranks[static_cast<size_t>(end)].qps += qps;
      }
      plan_.max_qps_per_peer = std::max(plan_.max_qps_per_peer, qps);
    }
    auto& directed = plan_.connections[job_];
    directed = directed_.take();
  }

 private:
  void collective(int32_t rank, const CollectiveCall& call, uint64_t count) {
    const auto& group = facts_.groups.at(call.group_id);
    if (std::find(group.begin(), group.end(), rank) == group.end()) return;  // validation's
    // By dimension, the part of the group the rank is in (as the run does it).
    const GroupPart part = config_.collectives.hierarchy == config::Hierarchy::kInvolvedDim
                               ? group_part(group, call.scope, rank, base_.ranks_per_host)
                               : GroupPart{group, 0};
    const std::vector<int32_t>& members = part.members;
    auto position =
        static_cast<uint32_t>(std::find(members.begin(), members.end(), rank) - members.begin());
    const PlannedProgram& planned = program(call, part);
    if (!planned.shares) return;
    const SharesBySource& shares = *planned.shares;
    for (const auto& share : shares[position]) {
      exchange(rank, participant(members, share.dst), share.bytes * count, share.qps,
               share.high_ids, planned.protocol);
    }
    // CollNet's aggregation nodes send once per collective: counted with its first member's.
    if (position != 0) return;
    for (auto node = static_cast<uint32_t>(members.size()); node < shares.size(); ++node) {
      for (const auto& share : shares[node]) {
        exchange(participant(members, node), participant(members, share.dst), share.bytes * count,
                 share.qps, share.high_ids, planned.protocol);
      }
    }
  }

  // The participant at a program position: a member's rank, or aggregation node k's participant
  // rank (JobPlacement::aggregator_ports) after the members.
  int32_t participant(const std::vector<int32_t>& members, uint32_t position) const {
    return position < members.size()
               ? members[position]
               : facts_.world_size + static_cast<int32_t>(position - members.size());
  }

  void send(int32_t rank, const PeerTransfer& transfer, uint64_t count) {
    if (transfer.peer == rank) return;  // a send to itself never leaves the rank
    auto it = p2p_.find(transfer.bytes);
    if (it == p2p_.end()) {
      collectives::CollectiveSpec spec = base_;
      spec.collective = std::nullopt;
      spec.ranks = {0, 1};
      spec.ranks_per_host = 1;  // only the QP split matters here; hosts are applied below
      spec.bytes = transfer.bytes;
      it = p2p_.emplace(transfer.bytes, generate(spec, "send/recv", transfer.bytes)).first;
    }
    if (!it->second) return;
    // Point-to-point under `auto`: Simple, as the run sends it.
    const config::ProtocolConfig& protocol = config_.collectives.protocol;
    for (const auto& share : (*it->second)[0]) {
      exchange(rank, transfer.peer, share.bytes * count, share.qps, share.high_ids,
               protocol.automatic ? config::Protocol::kSimple : protocol.protocol);
    }
  }

  // A collective's program as the plan keeps it: its shares and the protocol it runs.
  struct PlannedProgram {
    std::optional<SharesBySource> shares;
    config::Protocol protocol = config::Protocol::kSimple;
  };

  const PlannedProgram& program(const CollectiveCall& call, const GroupPart& part) {
    const std::vector<int32_t>& members = part.members;
    auto key = std::make_tuple(call.type, call.group_id, call.bytes, call.scope, part.index);
    auto it = programs_.find(key);
    if (it == programs_.end()) {
      collectives::CollectiveSpec spec = base_;
      spec.collective = call.type;
      spec.ranks = members;
      spec.bytes = call.bytes;
      const CollectiveChoice choice =
          apply_collective_choices(config_.collectives, call.scope,
                                   tuner_links(config_, job_, placement_, members.front()), spec);
      const auto algorithm =
          spec.algorithm.value_or(collectives::default_algorithm(spec.collective));
      // The parts of a group that runs by dimension (each host's, each rail's) are alike: one
      // row for all of them.
      if ((config_.collectives.protocol.automatic || choice.algorithm_tuned) &&
          listed_
              .emplace(call.type, call.group_id, call.bytes, members.size(), algorithm,
                       spec.protocol)
              .second) {
        plan_.tuner_choices.push_back({job_, call.type, call.group_id,
                                       static_cast<uint32_t>(members.size()), call.bytes, algorithm,
                                       choice});
      }
      std::string what = fmt::format("{} on {} ({} ranks)", trace::collective_type_name(call.type),
                                     group_label(call.group_id), members.size());
      it = programs_.emplace(key, PlannedProgram{generate(spec, what, call.bytes), spec.protocol})
               .first;
    }
    return it->second;
  }

  std::optional<SharesBySource> generate(const collectives::CollectiveSpec& spec,
                                         const std::string& what, uint64_t bytes) {
    try {
      ++plan_.programs_generated;
      return shares_of(spec);
    } catch (const std::exception& e) {
      const config::JobConfig& job = config_.workload.jobs[job_];
      out_.add(loaded_.source_map.make(Severity::kError, Problem::kBadValue, "collectives",
                                       fmt::format("job \"{}\": cannot generate {} of {} bytes: {}",
                                                   job.name, what, bytes, e.what())));
      return std::nullopt;
    }
  }

  // `data` bytes from src to dst, on the wire in the protocol's lines (the run pads each
  // message to whole lines: at most a line more per message than this).
  void exchange(int32_t src, int32_t dst, uint64_t data, const QpIds& qps,
                const std::vector<uint16_t>& high_ids, config::Protocol protocol) {
    const uint64_t bytes = config::protocol_wire_bytes(protocol, data);
    if (placement_.same_host(src, dst)) {
      plan_.jobs[job_][static_cast<size_t>(src)].scale_up_bytes_sent += bytes;
    } else {
      for (uint64_t low = qps.low; low != 0; low &= low - 1) {
        directed_.add({src, dst, static_cast<uint16_t>(std::countr_zero(low))});
      }
      for (uint16_t qp : high_ids) directed_.add({src, dst, qp});
      // An aggregation node is no rank and its twin host no run port.
      if (placement_.is_aggregator(src)) {
        aggregation_host(src).bytes_sent += bytes;
      } else {
        plan_.jobs[job_][static_cast<size_t>(src)].network_bytes_sent += bytes;
        plan_.ports[placement_.port(src)].bytes_sent += bytes;
      }
      if (placement_.is_aggregator(dst)) {
        aggregation_host(dst).bytes_received += bytes;
      } else {
        plan_.jobs[job_][static_cast<size_t>(dst)].network_bytes_received += bytes;
        plan_.ports[placement_.port(dst)].bytes_received += bytes;
      }
    }
    // An RC connection serves both directions: its QPs are the QP ids either side sends on.
    auto low = static_cast<uint32_t>(std::min(src, dst));
    auto high = static_cast<uint32_t>(std::max(src, dst));
    connections_.add({(uint64_t{low} << 32) | high, qps});
  }

  AggregationHostTraffic& aggregation_host(int32_t node) {
    return plan_.aggregation_hosts[placement_.port(node) - config_.ports.size()];
  }

  const RunPlan& loaded_;
  const config::RunConfig& config_;
  size_t job_;
  const TraceFacts& facts_;
  const JobPlacement& placement_;
  TrafficPlan& plan_;
  Diagnostics& out_;
  collectives::CollectiveSpec base_;
  std::map<std::tuple<trace::CollectiveType, int64_t, uint64_t, DimensionScope, uint32_t>,
           PlannedProgram>
      programs_;
  std::set<std::tuple<trace::CollectiveType, int64_t, uint64_t, size_t, collectives::Algorithm,
                      config::Protocol>>
      listed_;  // the tuner's picks in plan_.tuner_choices
  std::map<uint64_t, std::optional<SharesBySource>> p2p_;
  // (lower rank << 32 | higher rank, ids): an RC connection's QPs serve both ways.
  using Pair = std::pair<uint64_t, QpIds>;
  struct MergeIds {
    static uint64_t key(const Pair& p) { return p.first; }
    static void fold(Pair& kept, const Pair& other) { kept.second.merge(other.second); }
  };
  struct Distinct {
    static const PlannedConnection& key(const PlannedConnection& c) { return c; }
    static void fold(PlannedConnection&, const PlannedConnection&) {}
  };
  FoldedItems<Pair, MergeIds> connections_;
  FoldedItems<PlannedConnection, Distinct> directed_;
};

uint64_t ceil_div(uint64_t a, uint64_t b) {
  return b == 0 ? 0 : (a + b - 1) / b;
}

}  // namespace

collectives::CollectiveSpec base_collective_spec(const config::RunConfig& config, size_t job) {
  const config::CollectivesConfig& c = config.collectives;
  collectives::CollectiveSpec spec;
  spec.chunks = c.chunks;
  spec.chunk_bytes = c.chunk_bytes;
  spec.qps = c.qps_per_peer;
  spec.qp_alignment = c.qp_alignment;
  spec.size_convention = config.workload.comm_size;
  spec.ranks_per_host = config.mapping.jobs[job].hosts.ranks_per_host;
  spec.barrier_bytes = c.barrier_bytes;
  return spec;
}

namespace {

// On the fabric twin, each rank's longest path (the switches its network messages cross), and
// each job's connections between planes, which have none.
void add_path_lengths(const RunPlan& loaded, TrafficPlan& plan) {
  const std::optional<twin::FabricLayout>& layout = loaded.twin.layout;
  if (!layout) return;
  for (size_t j = 0; j < plan.connections.size(); ++j) {
    if (j >= loaded.placements.size() || !loaded.placements[j]) continue;
    const auto& placement = *loaded.placements[j];
    auto& ranks = plan.jobs[j];
    for (const PlannedConnection& c : plan.connections[j]) {
      const uint32_t src = placement.port(c.src);
      const uint32_t dst = placement.port(c.dst);
      const uint32_t switches = layout->switches_between(src, dst);
      for (int32_t rank : {c.src, c.dst}) {
        if (placement.is_aggregator(rank)) continue;
        uint32_t& longest = ranks[static_cast<size_t>(rank)].max_switches;
        longest = std::max(longest, switches);
      }
      if (switches != 0) continue;
      std::optional<PlaneCrossing>& crossing = plan.plane_crossings[j];
      if (!crossing) crossing = PlaneCrossing{c, layout->plane_of(src), layout->plane_of(dst), 0};
      ++crossing->connections;
    }
  }
}

}  // namespace

TrafficPlan plan_traffic(const RunPlan& loaded, Diagnostics& out) {
  const config::RunConfig& config = loaded.config;
  TrafficPlan plan;
  plan.jobs.resize(config.workload.jobs.size());
  plan.connections.resize(config.workload.jobs.size());
  plan.ports.resize(config.ports.size());
  plan.aggregation_hosts.resize(twin::aggregation_hosts(config));
  plan.plane_crossings.resize(config.workload.jobs.size());
  for (size_t j = 0; j < config.workload.jobs.size(); ++j) {
    if (j >= loaded.traces.size() || !loaded.traces[j] || j >= loaded.placements.size() ||
        !loaded.placements[j]) {
      continue;
    }
    for (size_t port : loaded.placements[j]->port_of_rank) ++plan.ports[port].ranks;
    JobPlanner(loaded, j, plan, out).run();
  }
  add_path_lengths(loaded, plan);
  uint64_t busiest = 0;
  for (size_t p = 0; p < plan.ports.size(); ++p) {
    PortTrafficPlan& port = plan.ports[p];
    const config::PortConfig& settings = config.ports[p];
    uint64_t bytes = std::max(port.bytes_sent, port.bytes_received);
    uint64_t packets = ceil_div(bytes, config.transport.pmtu);
    uint64_t wire_bits =
        (bytes + packets * nic::data_packet_overhead(nic::frame_format(config, settings))) * 8;
    long double seconds = static_cast<long double>(wire_bits) / settings.speed_bps;
    port.line_time_ns = static_cast<uint64_t>(std::ceil(seconds * 1e9L));
    if (bytes > busiest) {
      busiest = bytes;
      plan.busiest_port = p;
    }
  }
  return plan;
}

void check_plane_crossings(const RunPlan& loaded, Diagnostics& out) {
  const config::RunConfig& config = loaded.config;
  if (config.fabric.rails.planes <= 1 || !loaded.traffic) return;
  const TrafficPlan& plan = *loaded.traffic;
  for (size_t j = 0; j < plan.plane_crossings.size(); ++j) {
    if (!plan.plane_crossings[j]) continue;
    const PlaneCrossing& crossing = *plan.plane_crossings[j];
    const auto& placement = *loaded.placements[j];
    const size_t more = crossing.connections - 1;
    out.add(loaded.source_map.make(
        Severity::kError, Problem::kInconsistent, "fabric.rails.planes",
        fmt::format("job \"{}\": rank {} on port \"{}\" (plane {}) sends to rank {} on port "
                    "\"{}\" (plane {}){}: the planes are separate networks with no path "
                    "between them; place the job so that its traffic stays within a plane",
                    config.workload.jobs[j].name, crossing.first.src,
                    config.ports[placement.port(crossing.first.src)].name, crossing.src_plane,
                    crossing.first.dst, config.ports[placement.port(crossing.first.dst)].name,
                    crossing.dst_plane,
                    more > 0 ? fmt::format(", as {} more connections do", more) : "")));
  }
}

}  // namespace etwire::control
