#include "cli/synth_rank_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "common/text_table.h"
#include "common/units.h"
#include "trace/node.h"

namespace etwire::cli {

namespace {

std::string cell(const synth::OpCount& op) {
  if (op.count == 0) return "-";
  return fmt::format("{} / {}", op.count, format_bytes(op.bytes));
}

}  // namespace

std::string rank_ranges(const std::vector<int32_t>& ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!text.empty()) text += ",";
    text += j == i ? fmt::format("{}", ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
    i = j + 1;
  }
  return text;
}

std::string rank_ops_table(const std::vector<synth::RankOpStats>& ranks) {
  // Rows in order of their first rank; identical traces (by counts and bytes) share a row.
  std::vector<std::pair<synth::RankOpStats, std::vector<int32_t>>> rows;
  for (size_t r = 0; r < ranks.size(); ++r) {
    auto it = std::find_if(rows.begin(), rows.end(),
                           [&](const auto& row) { return row.first == ranks[r]; });
    if (it == rows.end()) {
      rows.push_back({ranks[r], {static_cast<int32_t>(r)}});
    } else {
      it->second.push_back(static_cast<int32_t>(r));
    }
  }
  std::vector<size_t> types;
  for (size_t t = 0; t < static_cast<size_t>(trace::kCollectiveTypeCount); ++t) {
    for (const auto& stats : ranks) {
      if (stats.collectives[t].count > 0) {
        types.push_back(t);
        break;
      }
    }
  }
  std::vector<std::string> headers = {"ranks", "nodes", "compute", "compute time"};
  for (size_t t : types) {
    std::string name(trace::collective_type_name(static_cast<trace::CollectiveType>(t)));
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    headers.push_back(name);
  }
  headers.push_back("send");
  headers.push_back("recv");
  TextTable table(headers);
  for (const auto& [stats, members] : rows) {
    std::vector<std::string> cells = {rank_ranges(members), std::to_string(stats.nodes),
                                      std::to_string(stats.compute_nodes),
                                      format_micros(static_cast<double>(stats.compute_us))};
    for (size_t t : types) cells.push_back(cell(stats.collectives[t]));
    cells.push_back(cell(stats.sends));
    cells.push_back(cell(stats.recvs));
    table.add_row(std::move(cells));
  }
  return table.render();
}

}  // namespace etwire::cli
