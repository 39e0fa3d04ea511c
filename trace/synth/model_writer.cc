#include "trace/synth/model_writer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <stdexcept>

#include "trace/synth/model_rank_program.h"
#include "trace/synth/synth.h"

namespace etwire::synth {

namespace {

std::string describe(const ModelSpec& s) {
  std::string text = fmt::format(
      "model dp={} tp={} pp={} ep={} layers={} hidden={} ffn={}{} seq={} micro_batch={} "
      "micro_batches={} dtype={}",
      s.dp, s.tp, s.pp, s.ep, s.layers, s.hidden, s.ffn(), s.gated_mlp ? " gated" : "", s.seq_len,
      s.micro_batch, s.micro_batches(), dtype_name(s.dtype));
  if (s.sp) text += " sp";
  if (s.moe()) {
    text += fmt::format(" experts={} top_k={} capacity_factor={}", s.expert_count(), s.top_k,
                        s.capacity_factor);
  }
  text += s.fsdp ? " fsdp" : fmt::format(" bucket={}", s.bucket_bytes);
  text += fmt::format(" iterations={}", s.iterations);
  return text;
}

void write_comm_groups(const ModelLayout& layout, const std::string& path) {
  // One group per line, ids in numeric order, so that people can read the file.
  std::string text = "{";
  const auto& groups = layout.groups();
  for (size_t i = 0; i < groups.size(); ++i) {
    text += fmt::format("{}\n  \"{}\": [{}]", i == 0 ? "" : ",", groups[i].id,
                        fmt::join(groups[i].ranks, ", "));
  }
  text += groups.empty() ? "}\n" : "\n}\n";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error(fmt::format("{}: cannot write the comm-group file", path));
}

}  // namespace

std::string comm_groups_path(const std::string& prefix) {
  return prefix + ".comm_groups.json";
}

ModelSummary write_model(const ModelSpec& spec, const std::string& prefix,
                         trace::WriteFormat format) {
  if (auto problem = validate(spec)) {
    throw std::invalid_argument(fmt::format("--{}: {}", problem->flag, problem->message));
  }
  const ModelLayout layout(spec);
  ModelSummary summary;
  summary.costs = layer_costs(spec);
  summary.params = model_params(spec);
  summary.micro_batches = spec.micro_batches();
  summary.groups = layout.groups();
  const auto metadata = synth_metadata(describe(spec));
  for (int32_t rank = 0; rank < layout.ranks(); ++rank) {
    std::string path = rank_file_path(prefix, rank, format);
    auto writer = trace::open_trace_writer(path, format, metadata);
    RankTraceBuilder builder(*writer, rank);
    ModelRankProgram program(spec, layout, summary.costs, builder);
    for (uint32_t it = 0; it < spec.iterations; ++it) program.step(it);
    writer->close();
    summary.ranks.push_back(builder.stats());
    summary.paths.push_back(std::move(path));
  }
  summary.comm_groups_path = comm_groups_path(prefix);
  write_comm_groups(layout, summary.comm_groups_path);
  return summary;
}

}  // namespace etwire::synth
