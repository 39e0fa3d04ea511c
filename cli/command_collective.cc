// `etwire collective`: what a collective puts on the wire. Generates the step program of every
// member for one collective and prints the steps per rank, the flows per (src, dst, QP), the
// bytes each rank sends and the busbw factor, so lab engineers see the traffic before a run.
// Programs store an operation per chunk run; steps are printed per chunk (each row one chunk of
// an operation, numbered by its operation), as the transport moves them.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "collectives/bandwidth.h"
#include "collectives/generate.h"
#include "collectives/hosts.h"
#include "collectives/traffic_stats.h"
#include "collectives/verify.h"
#include "common/text_table.h"
#include "common/units.h"
#include "runner/exit_codes.h"

namespace etwire::cli {

namespace {

namespace coll = etwire::collectives;

struct CollectiveOptions {
  std::string type;
  int32_t ranks = 0;
  std::string group;
  std::string bytes;
  std::string algo;
  uint32_t chunks = 1;
  std::string chunk_size;
  uint32_t qps = 1;
  std::string qp_alignment = "128";
  int32_t root = -1;
  uint32_t ranks_per_host = 1;
  // Unset: a channel per rank of a host (a NIC per GPU) where the algorithm takes channels and
  // hosts hold several ranks, as a run's default; 0: one ring in group order (or two trees).
  std::optional<uint32_t> channels;
  std::string size_convention = "input";
  std::string peer_bytes;
  std::string barrier_bytes = "8";
  int32_t only_rank = -1;
  bool summary = false;
  bool json = false;
  bool verify = false;
};

// Total executor cells (one per buffer byte) --verify accepts: it runs the program on real data.
constexpr uint64_t kMaxVerifyCells = uint64_t{1} << 26;

class BadInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

uint64_t bytes_option(const std::string& name, const std::string& text) {
  auto value = parse_bytes(text);
  if (!value) {
    throw BadInput(fmt::format("{}: \"{}\" is not a byte size (e.g. 4096, 64KiB)", name, text));
  }
  return *value;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) items.push_back(item);
  return items;
}

coll::CollectiveSpec make_spec(const CollectiveOptions& o) {
  coll::CollectiveSpec spec;
  bool variable = false;
  std::string type;
  for (char c : o.type) {
    type += c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (type == "send_recv" || type == "sendrecv" || type == "p2p") {
    spec.collective.reset();
  } else if (type == "all_to_all_v" || type == "alltoallv") {
    spec.collective = trace::CollectiveType::kAllToAll;
    variable = true;
  } else if (auto parsed = trace::parse_collective_type(o.type)) {
    spec.collective = *parsed;
  } else {
    throw BadInput(fmt::format(
        "unknown collective \"{}\" (all_reduce, reduce_scatter, reduce_scatter_block, "
        "all_gather, all_to_all, all_to_all_v, broadcast, reduce, gather, scatter, barrier, "
        "send_recv)",
        o.type));
  }

  if (!o.group.empty()) {
    for (const std::string& item : split_list(o.group)) {
      try {
        size_t used = 0;
        const int value = std::stoi(item, &used);
        if (used != item.size()) throw std::invalid_argument(item);
        spec.ranks.push_back(value);
      } catch (const std::exception&) {
        throw BadInput(fmt::format("--group: \"{}\" is not a rank", item));
      }
    }
  } else {
    if (o.ranks < 1) throw BadInput("--ranks: give the group size (or --group with the ranks)");
    for (int32_t r = 0; r < o.ranks; ++r) spec.ranks.push_back(r);
  }
  const auto n = static_cast<uint32_t>(spec.ranks.size());

  if (!o.bytes.empty()) spec.bytes = bytes_option("--bytes", o.bytes);
  if (variable) {
    if (o.peer_bytes.empty()) {
      throw BadInput("all_to_all_v needs --peer-bytes (n values, or n x n)");
    }
    std::vector<uint64_t> values;
    for (const std::string& item : split_list(o.peer_bytes)) {
      values.push_back(bytes_option("--peer-bytes", item));
    }
    if (values.size() == n) {  // one row: every sender sends values[dst] to dst
      std::vector<uint64_t> matrix;
      for (uint32_t src = 0; src < n; ++src)
        matrix.insert(matrix.end(), values.begin(), values.end());
      values = std::move(matrix);
    }
    spec.peer_bytes = std::move(values);
  } else if (!o.peer_bytes.empty()) {
    throw BadInput("--peer-bytes: only all_to_all_v takes per-peer sizes");
  } else if (o.bytes.empty() && spec.collective != trace::CollectiveType::kBarrier) {
    throw BadInput("--bytes: give the collective's comm_size (e.g. 1MiB)");
  }

  if (o.algo == "auto") {
    throw BadInput(
        "--algo: auto is the tuner's pick for a run's links (collectives.algorithms in a run "
        "configuration; `etwire plan` prints it); name an algorithm here: " +
        coll::algorithm_names());
  }
  if (!o.algo.empty()) {
    auto algorithm = coll::parse_algorithm(o.algo);
    if (!algorithm) {
      throw BadInput(
          fmt::format("--algo: unknown algorithm \"{}\" ({})", o.algo, coll::algorithm_names()));
    }
    spec.algorithm = *algorithm;
  }
  spec.chunks = o.chunks;
  if (!o.chunk_size.empty()) spec.chunk_bytes = bytes_option("--chunk-size", o.chunk_size);
  spec.qps = o.qps;
  spec.qp_alignment = bytes_option("--qp-alignment", o.qp_alignment);
  if (o.root >= 0) spec.root = o.root;
  spec.ranks_per_host = o.ranks_per_host;
  if (o.channels) {
    if (*o.channels > 0) spec.channels = *o.channels;
  } else if (o.ranks_per_host > 1 && coll::takes_channels(spec)) {
    spec.channels = std::min(o.ranks_per_host, coll::kMaxChannels);
  }
  auto convention = coll::parse_size_convention(o.size_convention);
  if (!convention) throw BadInput("--size-convention: input or output");
  spec.size_convention = *convention;
  spec.barrier_bytes = bytes_option("--barrier-bytes", o.barrier_bytes);
  return spec;
}

// A participant by position: its global rank, or "aggN" for CollNet's aggregation node N.
std::string label(const coll::ResolvedSpec& spec, uint32_t position) {
  if (position < spec.members()) return std::to_string(spec.ranks[position]);
  return fmt::format("agg{}", position - spec.members());
}

nlohmann::ordered_json label_json(const coll::ResolvedSpec& spec, uint32_t position) {
  if (position < spec.members()) return spec.ranks[position];
  return label(spec, position);
}

std::string flow_kind(const coll::ResolvedSpec& spec, uint32_t src, uint32_t dst) {
  if (src == dst) return "local";
  // An aggregation node sits in a switch.
  if (src >= spec.members() || dst >= spec.members()) return "network";
  const coll::HostGrouping hosts{spec.ranks_per_host};
  return hosts.same_host(spec.ranks[src], spec.ranks[dst]) ? "host" : "network";
}

std::string deps_text(const coll::ChunkOpView& op) {
  if (op.deps.empty()) return "-";
  std::string out;
  for (uint32_t d : op.deps) out += fmt::format("{}{}", out.empty() ? "#" : ",#", d);
  return out;
}

bool shown(const CollectiveOptions& o, const coll::ResolvedSpec& spec, uint32_t position) {
  if (o.only_rank < 0) return true;
  return position < spec.members() && spec.ranks[position] == o.only_rank;
}

void print_text(const CollectiveOptions& o, const coll::ResolvedSpec& spec,
                const coll::CollectiveProgram& program,
                const std::vector<coll::MemberTraffic>& traffic, const std::string& verified) {
  const uint32_t n = spec.members();
  const uint64_t full = spec.layout.full_bytes();
  std::cout << fmt::format("{} over {} rank{}, comm_size {} ({} convention), algorithm {}\n",
                           coll::collective_kind_name(spec.collective), n, n == 1 ? "" : "s",
                           format_bytes(spec.trace_bytes),
                           coll::size_convention_name(spec.size_convention),
                           coll::algorithm_name(spec.algorithm));
  std::cout << fmt::format(
      "full buffer {} ({} bytes), {} chunk{}, {} QP{} per peer (alignment {} B), {} rank{} per "
      "host{}\n",
      format_bytes(full), full, spec.chunks, spec.chunks == 1 ? "" : "s", spec.qps,
      spec.qps == 1 ? "" : "s", spec.qp_alignment, spec.ranks_per_host,
      spec.ranks_per_host == 1 ? "" : "s",
      spec.rail_rings() ? fmt::format(", {} channels laid rail by rail", spec.given_channels) : "");
  std::cout << fmt::format("busbw factor {:.4f} = {} (nccl-tests; algbw counts {} per iteration)\n",
                           coll::busbw_factor(spec.collective, n),
                           coll::busbw_formula(spec.collective), format_bytes(full));
  std::cout << fmt::format("{} operations ({} chunk operations), {} dependencies\n", program.ops(),
                           program.chunk_ops(), program.dependencies());
  if (spec.aggregators() > 0) {
    std::cout << fmt::format(
        "{} aggregation node{} (agg0..): one switch under every rank, as a run's single-switch "
        "twin has it\n",
        spec.aggregators(), spec.aggregators() == 1 ? "" : "s");
  }
  if (!verified.empty()) std::cout << verified << "\n";

  std::cout << "\nBytes on the wire per rank\n";
  TextTable per_rank(
      {"rank", "sends", "recvs", "bytes sent", "network bytes", "received", "sent/full"});
  for (uint32_t p = 0; p < spec.participants(); ++p) {
    if (!shown(o, spec, p)) continue;
    const auto& t = traffic[p];
    per_rank.add_row(
        {label(spec, p), std::to_string(t.sends), std::to_string(t.recvs),
         std::to_string(t.bytes_sent), std::to_string(t.network_bytes_sent),
         std::to_string(t.bytes_received),
         full == 0 ? "-" : fmt::format("{:.4f}", double(t.bytes_sent) / double(full))});
  }
  std::cout << per_rank.render();
  if (o.summary) return;

  std::cout << "\nFlows (per source, destination and QP)\n";
  TextTable flow_table({"src", "dst", "qp", "kind", "transfers", "bytes"});
  for (const coll::Flow& f : coll::flows(program)) {
    if (!shown(o, spec, f.src) && !shown(o, spec, f.dst)) continue;
    flow_table.add_row({label(spec, f.src), label(spec, f.dst), std::to_string(f.qp),
                        flow_kind(spec, f.src, f.dst), std::to_string(f.operations),
                        std::to_string(f.bytes)});
  }
  std::cout << flow_table.render();

  std::cout << "\nSteps: one row per chunk of each operation #i; \"after #j\" waits for the same "
               "chunk of operation #j\n";
  for (uint32_t p = 0; p < spec.participants(); ++p) {
    if (!shown(o, spec, p)) continue;
    std::cout << fmt::format(
        "\nSteps of {} {} ({} operations, {} chunk operations, buffer {} bytes)\n",
        p < n ? "rank" : "aggregation node", label(spec, p), program.ops(p), program.chunk_ops(p),
        program.buffer_bytes(p));
    TextTable steps({"#", "step", "chunk", "op", "peer", "qp", "offset", "bytes", "after"});
    coll::for_each_chunk_op(program, p, [&](uint32_t index, const coll::ChunkOpView& op) {
      steps.add_row({fmt::format("#{}", index), std::to_string(op.step), std::to_string(op.chunk),
                     std::string(coll::op_kind_name(op.kind)), label(spec, op.peer),
                     std::to_string(op.qp), std::to_string(op.range.offset),
                     std::to_string(op.range.length), deps_text(op)});
    });
    std::cout << steps.render();
  }
}

void print_json(const CollectiveOptions& o, const coll::ResolvedSpec& spec,
                const coll::CollectiveProgram& program,
                const std::vector<coll::MemberTraffic>& traffic, bool verified) {
  const uint32_t n = spec.members();
  nlohmann::ordered_json out;
  out["collective"] = coll::collective_kind_name(spec.collective);
  out["algorithm"] = coll::algorithm_name(spec.algorithm);
  out["ranks"] = spec.ranks;
  out["comm_size"] = spec.trace_bytes;
  out["size_convention"] = coll::size_convention_name(spec.size_convention);
  out["full_bytes"] = spec.layout.full_bytes();
  out["chunks"] = spec.chunks;
  out["qps"] = spec.qps;
  out["qp_alignment"] = spec.qp_alignment;
  out["ranks_per_host"] = spec.ranks_per_host;
  out["channels"] = spec.channels();
  if (spec.collective && spec.collective != trace::CollectiveType::kAllReduce &&
      spec.collective != trace::CollectiveType::kAllToAll) {
    out["root"] = spec.ranks[spec.root];
  }
  out["busbw_factor"] = coll::busbw_factor(spec.collective, n);
  out["busbw_formula"] = coll::busbw_formula(spec.collective);
  out["operations"] = program.ops();
  out["chunk_operations"] = program.chunk_ops();
  out["dependencies"] = program.dependencies();
  if (o.verify) out["verified"] = verified;
  // CollNet's aggregation nodes follow the members, their "rank" an "aggN" label.
  out["aggregation_nodes"] = spec.aggregators();
  auto& members = out["members"] = nlohmann::ordered_json::array();
  for (uint32_t p = 0; p < spec.participants(); ++p) {
    if (!shown(o, spec, p)) continue;
    const auto& t = traffic[p];
    nlohmann::ordered_json m;
    m["rank"] = label_json(spec, p);
    m["position"] = p;
    m["sends"] = t.sends;
    m["recvs"] = t.recvs;
    m["bytes_sent"] = t.bytes_sent;
    m["network_bytes_sent"] = t.network_bytes_sent;
    m["bytes_received"] = t.bytes_received;
    m["buffer_bytes"] = program.buffer_bytes(p);
    m["operations"] = program.ops(p);
    m["chunk_operations"] = program.chunk_ops(p);
    if (!o.summary) {
      // One entry per chunk of each operation; "deps" are operation indexes, whose same chunk
      // this one waits for.
      auto& steps = m["steps"] = nlohmann::ordered_json::array();
      coll::for_each_chunk_op(program, p, [&](uint32_t index, const coll::ChunkOpView& op) {
        steps.push_back({{"index", index},
                         {"op", coll::op_kind_name(op.kind)},
                         {"peer", label_json(spec, op.peer)},
                         {"offset", op.range.offset},
                         {"length", op.range.length},
                         {"chunk", op.chunk},
                         {"step", op.step},
                         {"qp", op.qp},
                         {"deps", std::vector<uint32_t>(op.deps.begin(), op.deps.end())}});
      });
    }
    members.push_back(std::move(m));
  }
  if (!o.summary) {
    auto& flows = out["flows"] = nlohmann::ordered_json::array();
    for (const coll::Flow& f : coll::flows(program)) {
      if (!shown(o, spec, f.src) && !shown(o, spec, f.dst)) continue;
      flows.push_back({{"src", label_json(spec, f.src)},
                       {"dst", label_json(spec, f.dst)},
                       {"qp", f.qp},
                       {"kind", flow_kind(spec, f.src, f.dst)},
                       {"transfers", f.operations},
                       {"bytes", f.bytes}});
    }
  }
  std::cout << out.dump(2) << "\n";
}

int run(const CollectiveOptions& o) {
  coll::CollectiveSpec spec;
  std::unique_ptr<coll::ProgramGenerator> generator;
  try {
    spec = make_spec(o);
    generator = std::make_unique<coll::ProgramGenerator>(spec);
  } catch (const BadInput& e) {
    std::cerr << "error: " << e.what() << "\n";
    return runner::kExitBadInput;
  } catch (const coll::SpecError& e) {
    std::cerr << "error: --" << e.what() << "\n";
    return runner::kExitBadInput;
  }
  const coll::ResolvedSpec& resolved = generator->spec();
  if (o.only_rank >= 0 && std::find(resolved.ranks.begin(), resolved.ranks.end(), o.only_rank) ==
                              resolved.ranks.end()) {
    std::cerr << fmt::format("error: --rank: rank {} is not in the process group\n", o.only_rank);
    return runner::kExitBadInput;
  }
  const coll::CollectiveProgram program = generator->generate();
  const auto traffic = coll::member_traffic(program, resolved.ranks_per_host);

  std::string verified;
  if (o.verify) {
    uint64_t cells = 0;
    for (size_t p = 0; p < program.programs(); ++p) cells += program.buffer_bytes(p);
    if (cells > kMaxVerifyCells) {
      std::cerr << fmt::format(
          "error: --verify: the members' buffers total {} bytes; the data executor takes at most "
          "{} (use a smaller --bytes)\n",
          cells, kMaxVerifyCells);
      return runner::kExitBadInput;
    }
    const std::string error = coll::verify(resolved, program);
    if (!error.empty()) {
      std::cerr << "error: verification failed: " << error << "\n";
      return runner::kExitFailure;
    }
    verified = fmt::format("verified: every rank ends with the {} result (data executor)",
                           coll::collective_kind_name(resolved.collective));
  }
  if (o.json) {
    print_json(o, resolved, program, traffic, o.verify);
  } else {
    print_text(o, resolved, program, traffic, verified);
  }
  return runner::kExitOk;
}

}  // namespace

CommandAction add_collective_command(CLI::App& app) {
  auto opts = std::make_shared<CollectiveOptions>();
  auto* cmd = app.add_subcommand(
      "collective",
      "Show the traffic of one collective: steps per rank, flows, bytes on the wire, busbw factor");
  cmd->add_option("type", opts->type,
                  "all_reduce, reduce_scatter, reduce_scatter_block, all_gather, all_to_all, "
                  "all_to_all_v, broadcast, reduce, gather, scatter, barrier, send_recv")
      ->required();
  auto* ranks = cmd->add_option("-n,--ranks", opts->ranks, "Group size: ranks 0..N-1")
                    ->check(CLI::Range(1, 1 << 20));
  auto* group = cmd->add_option("--group", opts->group,
                                "Global ranks of the group in group order, e.g. 8,3,12,5");
  ranks->excludes(group);
  cmd->add_option("-b,--bytes", opts->bytes, "comm_size as the trace states it, e.g. 1MiB");
  cmd->add_option("-a,--algo", opts->algo, coll::algorithm_names() + " (default: per collective)");
  auto* chunks =
      cmd->add_option("-k,--chunks", opts->chunks, "Chunks pipelined through the algorithm")
          ->check(CLI::Range(1u, coll::kMaxChunks));
  auto* chunk_size = cmd->add_option("--chunk-size", opts->chunk_size,
                                     "Chunk the full buffer into pieces of at most this size");
  chunks->excludes(chunk_size);
  cmd->add_option("-q,--qps", opts->qps, "QPs per peer; each transfer is split evenly over them")
      ->check(CLI::Range(1u, coll::kMaxQps))
      ->capture_default_str();
  cmd->add_option("--qp-alignment", opts->qp_alignment,
                  "Each QP's share is rounded up to this many bytes (NCCL: 128)")
      ->capture_default_str();
  cmd->add_option("-r,--root", opts->root,
                  "Root rank of broadcast, reduce, gather, scatter (default: first rank)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-H,--ranks-per-host", opts->ranks_per_host,
                  "Consecutive global ranks per host (PXN, the ring channels, tree and NVLS lay "
                  "themselves over hosts)")
      ->check(CLI::Range(1u, 1u << 16))
      ->capture_default_str();
  cmd->add_option("-c,--channels", opts->channels,
                  "Ring all-reduce, reduce-scatter, all-gather: split the data over this many "
                  "rings (NCCL's channels), laid rail by rail over the hosts, hops between hosts "
                  "relayed onto the receiver's rail. Tree all-reduce: this many trees, tree c "
                  "entering every host on rail c. Default: one per rank of a host (a NIC per "
                  "GPU) with --ranks-per-host above 1, as a run has one per NIC of a server; 0, "
                  "or one rank per host: one ring in group order, or two trees")
      ->check(CLI::Range(0u, coll::kMaxChannels));
  cmd->add_option("--size-convention", opts->size_convention,
                  "What comm_size counts for all-gather/gather and reduce-scatter/scatter: input "
                  "(each rank's input buffer) or output (each rank's output buffer)")
      ->check(CLI::IsMember({"input", "output"}))
      ->capture_default_str();
  cmd->add_option("--peer-bytes", opts->peer_bytes,
                  "all_to_all_v sizes: n values (bytes to each destination, for every sender) or "
                  "n x n row-major (row = sender)");
  cmd->add_option("--barrier-bytes", opts->barrier_bytes, "Size of each barrier message")
      ->capture_default_str();
  cmd->add_option("--rank", opts->only_rank, "Show the steps and flows of this rank only")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--summary", opts->summary, "Only the totals and the bytes per rank");
  cmd->add_flag("--verify", opts->verify,
                "Also run the program on real buffers and check every rank's result");
  cmd->add_flag("--json", opts->json, "Print JSON instead of tables");
  return [opts]() { return run(*opts); };
}

}  // namespace etwire::cli
