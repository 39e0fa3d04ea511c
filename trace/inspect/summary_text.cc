// The human-readable rendering of a TraceSummary.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "common/text_table.h"
#include "common/units.h"
#include "trace/inspect/trace_summary.h"

namespace etwire::inspect {

namespace {

using trace::CollectiveType;
using trace::NodeType;

std::string range_text(uint64_t lo, uint64_t hi, bool bytes) {
  auto one = [bytes](uint64_t v) { return bytes ? format_bytes(v) : std::to_string(v); };
  return lo == hi ? one(lo) : one(lo) + " .. " + one(hi);
}

std::string members_text(const std::vector<int32_t>& members) {
  if (members.size() > 2) {
    bool contiguous = true;
    for (size_t i = 1; i < members.size(); ++i) contiguous &= members[i] == members[i - 1] + 1;
    if (contiguous) return fmt::format("{}..{}", members.front(), members.back());
  }
  return fmt::format("{}", fmt::join(members, ","));
}

}  // namespace

std::string to_text(const TraceSummary& summary) {
  std::string out = fmt::format("Trace set {}: {} rank{}", summary.spec, summary.world_size,
                                summary.world_size == 1 ? "" : "s");
  out += summary.comm_groups_file.empty() ? ", no comm-group file\n"
                                          : ", comm groups from " + summary.comm_groups_file + "\n";

  out += "\nPer rank\n";
  TextTable ranks({"rank", "nodes", "comp", "coll", "send", "recv", "mem", "other", "comm bytes",
                   "compute", "depth"});
  for (const auto& r : summary.ranks) {
    auto n = [&r](NodeType t) { return r.nodes_by_type[static_cast<size_t>(t)]; };
    uint64_t comm_bytes = r.bytes_by_type[static_cast<size_t>(NodeType::kCommColl)] +
                          r.bytes_by_type[static_cast<size_t>(NodeType::kCommSend)];
    uint64_t other = n(NodeType::kInvalid) + n(NodeType::kMetadata);
    ranks.add_row({std::to_string(r.rank), std::to_string(r.nodes),
                   std::to_string(n(NodeType::kComp)), std::to_string(n(NodeType::kCommColl)),
                   std::to_string(n(NodeType::kCommSend)), std::to_string(n(NodeType::kCommRecv)),
                   std::to_string(n(NodeType::kMemLoad) + n(NodeType::kMemStore)),
                   std::to_string(other), format_bytes(comm_bytes),
                   format_micros(static_cast<double>(r.compute_us)), std::to_string(r.depth)});
  }
  out += ranks.render();

  uint64_t bookkeeping = 0;
  for (const auto& r : summary.ranks) bookkeeping += r.bookkeeping_comm_nodes;
  if (bookkeeping > 0) {
    out += fmt::format(
        "({} comm node{} carry no comm_type/comm_size: CPU-side bookkeeping, no traffic)\n",
        bookkeeping, bookkeeping == 1 ? "" : "s");
  }

  out += "\nCollectives and point-to-point (per rank: min .. max)\n";
  TextTable colls({"type", "ranks", "count/rank", "avg size", "bytes/rank", "total bytes"});
  auto add_kind = [&](const std::string& name, auto get) {
    uint64_t lo = UINT64_MAX, hi = 0, blo = UINT64_MAX, bhi = 0, total = 0, ranks_with = 0;
    uint64_t each_lo = UINT64_MAX, each_hi = 0;
    for (const auto& r : summary.ranks) {
      const CountAndBytes& cb = get(r);
      lo = std::min(lo, cb.count);
      hi = std::max(hi, cb.count);
      blo = std::min(blo, cb.bytes);
      bhi = std::max(bhi, cb.bytes);
      total += cb.bytes;
      if (cb.count > 0) {
        ++ranks_with;
        each_lo = std::min(each_lo, cb.bytes / cb.count);
        each_hi = std::max(each_hi, cb.bytes / cb.count);
      }
    }
    if (ranks_with == 0) return;
    std::string each = range_text(each_lo, each_hi, true);
    colls.add_row({name, std::to_string(ranks_with), range_text(lo, hi, false), each,
                   range_text(blo, bhi, true), format_bytes(total)});
  };
  for (int c = 0; c < trace::kCollectiveTypeCount; ++c) {
    add_kind(std::string(trace::collective_type_name(static_cast<CollectiveType>(c))),
             [c](const RankSummary& r) -> const CountAndBytes& {
               return r.collectives[static_cast<size_t>(c)];
             });
  }
  add_kind("SEND", [](const RankSummary& r) -> const CountAndBytes& { return r.sends; });
  add_kind("RECV", [](const RankSummary& r) -> const CountAndBytes& { return r.recvs; });
  out += colls.rows() == 0 ? "(none)\n" : colls.render();

  out += "\nProcess groups\n";
  if (summary.groups.empty()) {
    out += "(no collectives)\n";
  } else {
    TextTable groups({"group", "defined by", "pg_name", "members", "size", "colls/member",
                      "bytes/member", "consistent"});
    for (const auto& g : summary.groups) {
      uint64_t lo = UINT64_MAX, hi = 0, blo = UINT64_MAX, bhi = 0;
      for (int32_t m : g.members) {
        auto it = g.per_member.find(m);
        uint64_t c = it == g.per_member.end() ? 0 : it->second.count;
        uint64_t b = it == g.per_member.end() ? 0 : it->second.bytes;
        lo = std::min(lo, c);
        hi = std::max(hi, c);
        blo = std::min(blo, b);
        bhi = std::max(bhi, b);
      }
      std::vector<std::string> names;
      for (const auto& n : g.pg_names) names.push_back(n.empty() ? "(none)" : "\"" + n + "\"");
      // "all" only for the implicit group: a group 0 the comm-group file defines is shown by its
      // number, with the members the file gives it.
      groups.add_row({g.from_file() ? std::to_string(g.id) : "all",
                      g.from_file() ? "file" : "implicit", fmt::format("{}", fmt::join(names, " ")),
                      members_text(g.members), std::to_string(g.members.size()),
                      range_text(lo, hi, false), range_text(blo, bhi, true),
                      g.consistent() ? "yes" : "NO"});
    }
    out += groups.render();
  }
  return out;
}

}  // namespace etwire::inspect
