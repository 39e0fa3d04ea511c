// `etwire feed`: a dry run of the dependency-aware replay. Every rank's feeder issues its nodes
// in dependency order with up to --in-flight nodes outstanding (completed oldest first), without
// a network. Validates the graph, shows what a partial-replay filter keeps, and can write the
// issue order.
#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <deque>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli/commands.h"
#include "cli/trace_options.h"
#include "common/text_table.h"
#include "common/units.h"
#include "outputs/output_file.h"
#include "runner/exit_codes.h"

namespace etwire::cli {

namespace {

struct FeedOptions {
  uint32_t in_flight = 1;
  bool comm_only = false;
  std::string id_range;
  std::vector<std::string> process_groups;
  std::string order_file;
  bool json = false;
};

// "A:B", "A:" or ":B", inclusive.
bool parse_id_range(const std::string& text, uint64_t& lo, uint64_t& hi) {
  size_t colon = text.find(':');
  if (colon == std::string::npos) return false;
  auto parse = [](std::string_view s, uint64_t& out) {
    if (s.empty()) return true;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
  };
  std::string_view all(text);
  return parse(all.substr(0, colon), lo) && parse(all.substr(colon + 1), hi) && lo <= hi;
}

// Feeds every rank of the trace set and prints what the feeder did.
int run_feed(const TraceOptions& trace_opts, const FeedOptions& opts) {
  auto set = trace_opts.load_set();
  auto feeder_options = trace_opts.feeder_options();
  if (opts.comm_only) feeder_options.filter.types = feeder::NodeFilter::comm_only().types;
  if (!opts.id_range.empty() &&
      !parse_id_range(opts.id_range, feeder_options.filter.min_id, feeder_options.filter.max_id)) {
    std::cerr << fmt::format("error: --ids: \"{}\" is not a range A:B with A <= B\n",
                             opts.id_range);
    return runner::kExitBadInput;
  }
  feeder_options.filter.process_groups.insert(opts.process_groups.begin(),
                                              opts.process_groups.end());

  // Through a temporary file renamed into place when whole; a write error (a full disk,
  // /dev/full) is kept and reported by close(), not lost as an ofstream's would be.
  std::optional<outputs::StreamedFile> order;
  if (!opts.order_file.empty()) {
    try {
      order.emplace(opts.order_file, outputs::StreamedFile::Mode::kReplaceAtClose);
    } catch (const std::runtime_error& e) {
      std::cerr << fmt::format("error: --order: {}\n", e.what());
      return runner::kExitFailure;
    }
    order->buffer() += "rank,seq,node_id,type,name\n";
  }

  TextTable table(
      {"rank", "read", "issued", "filtered", "peak window", "peak unresolved", "time", "nodes/s"});
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  uint64_t total_nodes = 0;
  double total_seconds = 0;
  for (const auto& file : set.files()) {
    feeder::Feeder feeder(set.open(file.rank), feeder_options);
    std::deque<feeder::IssuedNode> outstanding;
    uint64_t seq = 0;
    auto start = std::chrono::steady_clock::now();
    while (!feeder.done()) {
      while (outstanding.size() < opts.in_flight) {
        auto issued = feeder.next();
        if (!issued) break;
        if (order) {
          const auto& n = *issued->node;
          order->buffer() += fmt::format("{},{},{},{},\"{}\"\n", file.rank, seq, n.id,
                                         trace::node_type_name(n.type), n.name);
          order->appended();
        }
        ++seq;
        outstanding.push_back(*issued);
      }
      if (outstanding.empty()) break;
      feeder.complete(outstanding.front());
      outstanding.pop_front();
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto& s = feeder.stats();
    total_nodes += s.nodes_read;
    total_seconds += seconds;
    double rate = seconds > 0 ? static_cast<double>(s.nodes_read) / seconds : 0;
    table.add_row({std::to_string(file.rank), std::to_string(s.nodes_read),
                   std::to_string(s.nodes_issued), std::to_string(s.nodes_filtered),
                   std::to_string(s.peak_live_nodes), std::to_string(s.peak_unresolved),
                   format_micros(seconds * 1e6), format_si(rate)});
    json.push_back({{"rank", file.rank},
                    {"file", file.path},
                    {"nodes_read", s.nodes_read},
                    {"nodes_issued", s.nodes_issued},
                    {"nodes_filtered", s.nodes_filtered},
                    {"peak_live_nodes", s.peak_live_nodes},
                    {"peak_unresolved", s.peak_unresolved},
                    {"ctrl_self_refs_dropped", s.ctrl_self_refs_dropped},
                    {"ctrl_dangling_dropped", s.ctrl_dangling_dropped},
                    {"seconds", seconds}});
  }
  if (order) {
    try {
      order->close();
    } catch (const std::runtime_error& e) {
      std::cerr << fmt::format("error: --order: {}\n", e.what());
      return runner::kExitFailure;
    }
  }
  if (opts.json) {
    std::cout << json.dump(2) << "\n";
    return runner::kExitOk;
  }
  std::cout << fmt::format("Fed {} ({} rank{}) with policy {}, window {}, {} in flight{}\n\n",
                           set.spec(), set.world_size(), set.world_size() == 1 ? "" : "s",
                           trace_opts.policy, trace_opts.window, opts.in_flight,
                           feeder_options.filter.keeps_everything()
                               ? ""
                               : ", filtered (filtered nodes complete at once)");
  std::cout << table.render();
  std::cout << fmt::format("\n{} nodes in {}: every node issued once, in dependency order\n",
                           total_nodes, format_micros(total_seconds * 1e6));
  if (!opts.order_file.empty()) std::cout << "issue order written to " << opts.order_file << "\n";
  return runner::kExitOk;
}

}  // namespace

CommandAction add_feed_command(CLI::App& app) {
  auto trace_opts = std::make_shared<TraceOptions>();
  auto opts = std::make_shared<FeedOptions>();
  auto* cmd = app.add_subcommand(
      "feed",
      "Walk every rank's dependency graph through the feeder, as a replay would but without a "
      "network: validates the graph and reports issue counts, window use and feeder speed");
  add_trace_options(cmd, trace_opts, /*with_feeder=*/true);
  cmd->add_option("--in-flight", opts->in_flight,
                  "Nodes outstanding per rank before the oldest is completed")
      ->check(CLI::Range(1u, 1u << 20))
      ->capture_default_str();
  cmd->add_flag("--comm-only", opts->comm_only,
                "Issue only SEND/RECV/COLL nodes; the others complete at once");
  cmd->add_option("--ids", opts->id_range, "Issue only node ids in A:B (inclusive; A: or :B)");
  cmd->add_option("--pg", opts->process_groups,
                  "Issue only comm nodes whose pg_name is one of these (\"\" = no pg_name)");
  cmd->add_option("--order", opts->order_file,
                  "Write the issue order as CSV (rank,seq,node_id,type,name)");
  cmd->add_flag("--json", opts->json, "Print JSON instead of a table");

  return [trace_opts, opts]() -> int { return run_feed(*trace_opts, *opts); };
}

}  // namespace etwire::cli
