// `etwire synth model`: transformer training steps as per-rank Chakra traces, with the
// comm-group file they name, and a summary of what was written.
#include <fmt/format.h>

#include <functional>
#include <iostream>
#include <memory>

#include "cli/synth_output.h"
#include "cli/synth_rank_table.h"
#include "cli/synth_subcommands.h"
#include "common/units.h"
#include "runner/exit_codes.h"
#include "trace/synth/gpu_presets.h"
#include "trace/synth/model_writer.h"

namespace etwire::cli {

namespace {

using synth::ModelSpec;

// A flag the user gave on the command line is applied after the preset, so it wins over it.
struct Override {
  CLI::Option* option;
  std::function<void(ModelSpec&)> apply;
};

struct ModelOptions {
  SynthOutput output;
  std::string preset;
  std::string dtype = "bf16";
  std::string bucket = "25MiB";
  std::vector<Override> overrides;
  CLI::Option* dtype_option = nullptr;
  CLI::Option* bucket_option = nullptr;
};

template <typename T>
void add_value(CLI::App* cmd, ModelOptions& opts, const std::string& name, T ModelSpec::*field,
               const std::string& help) {
  auto value = std::make_shared<T>(ModelSpec{}.*field);
  CLI::Option* option = cmd->add_option(name, *value, help)->capture_default_str();
  opts.overrides.push_back({option, [value, field](ModelSpec& s) { s.*field = *value; }});
}

void add_switch(CLI::App* cmd, ModelOptions& opts, const std::string& name, bool ModelSpec::*field,
                const std::string& help) {
  auto value = std::make_shared<bool>(false);
  CLI::Option* option = cmd->add_flag(name, *value, help);
  opts.overrides.push_back({option, [value, field](ModelSpec& s) { s.*field = *value; }});
}

std::string preset_help() {
  std::string text = "Named model shape; flags given explicitly override it:";
  for (const auto& preset : synth::model_presets()) {
    text += fmt::format("\n  {}: {}", preset.name, preset.description);
  }
  return text;
}

std::string gpu_help() {
  std::string text = "GPU whose dense peak TFLOPS for --dtype sets compute times:";
  for (const auto& gpu : synth::gpu_presets()) {
    text += fmt::format("\n  {}: fp32 (TF32) {}, bf16/fp16 {}, fp8 {}", gpu.name, gpu.fp32_tflops,
                        gpu.bf16_tflops, gpu.fp8_tflops);
  }
  return text;
}

int bad(const std::string& flag, const std::string& message) {
  std::cerr << fmt::format("error: --{}: {}\n", flag, message);
  return runner::kExitBadInput;
}

std::string params_text(uint64_t params) {
  return format_si(static_cast<double>(params));
}

std::string describe_groups(const std::vector<synth::ModelGroup>& groups) {
  std::string text;
  for (auto kind : {synth::GroupKind::kTensor, synth::GroupKind::kData, synth::GroupKind::kExpert,
                    synth::GroupKind::kExpertData}) {
    int64_t first = 0, last = 0, count = 0;
    size_t size = 0;
    for (const auto& g : groups) {
      if (g.kind != kind) continue;
      if (count++ == 0) first = g.id;
      last = g.id;
      size = g.ranks.size();
    }
    if (count == 0) continue;
    text += fmt::format("\n  {:<3} {} group{} of {} ranks (ids {})", group_kind_name(kind), count,
                        count == 1 ? "" : "s", size,
                        first == last ? std::to_string(first) : fmt::format("{}-{}", first, last));
  }
  return text.empty() ? " none (one rank per group everywhere)" : text;
}

void print_summary(const ModelSpec& spec, const synth::ModelSummary& s) {
  const auto& c = s.costs;
  std::cout << synth_files_line(s.paths);
  std::cout << fmt::format("wrote comm groups: {} ({} group{})\n", s.comm_groups_path,
                           s.groups.size(), s.groups.size() == 1 ? "" : "s");
  std::cout << fmt::format(
      "model: {} parameters in {} {} layer{} (embeddings left out); {} rank{} = tp {} x dp {} x "
      "pp {}{}; {} layer{} per stage; {} micro-batch{} of {} x {} tokens per step; {} "
      "iteration{}\n",
      params_text(s.params), spec.layers, spec.moe() ? "MoE" : "dense", spec.layers == 1 ? "" : "s",
      spec.ranks(), spec.ranks() == 1 ? "" : "s", spec.tp, spec.dp, spec.pp,
      spec.ep > 1 ? fmt::format(", ep {}", spec.ep) : "", spec.layers_per_stage(),
      spec.layers_per_stage() == 1 ? "" : "s", s.micro_batches, s.micro_batches == 1 ? "" : "es",
      spec.micro_batch, spec.seq_len, spec.iterations, spec.iterations == 1 ? "" : "s");
  std::cout << "groups:" << describe_groups(s.groups) << "\n";
  std::cout << fmt::format(
      "per layer, micro-batch and rank: activation {}{}{}; parameters {} ({}){}\n",
      format_bytes(c.activation),
      spec.sp && spec.tp > 1 ? fmt::format(", SP shard {}", format_bytes(c.tp_shard)) : "",
      spec.pp > 1 ? fmt::format(", pipeline message {}", format_bytes(c.pp_message)) : "",
      params_text(c.dense_params), format_bytes(c.dense_bytes),
      spec.moe() ? fmt::format(" + experts {} ({}); all-to-all {} ({} token slots)",
                               params_text(c.expert_params), format_bytes(c.expert_bytes),
                               format_bytes(c.alltoall), c.capacity)
                 : "");
  auto times = [](const char* name, const synth::BlockCost& b) {
    return fmt::format("{} {}/{} us", name, b.forward_us, b.backward_us);
  };
  std::cout << fmt::format("compute per block, forward/backward, at {} TFLOPS x {}: {}, {}\n",
                           c.peak_tflops, spec.efficiency, times("attention", c.attention),
                           spec.moe()
                               ? times("router", c.router) + ", " + times("experts", c.experts)
                               : times("mlp", c.mlp));
  std::cout << "ops per rank trace (count / bytes):\n" << rank_ops_table(s.ranks);
}

}  // namespace

CommandAction add_synth_model_command(CLI::App& synth) {
  auto opts = std::make_shared<ModelOptions>();
  auto* cmd = synth.add_subcommand(
      "model",
      "Transformer training steps under tensor (+sequence), data (or FSDP), pipeline (1F1B) and "
      "expert parallelism: one trace per rank and PREFIX.comm_groups.json "
      "(docs/synthetic-workloads.md)");
  add_synth_output_options(cmd, opts->output);
  cmd->add_option("--preset", opts->preset, preset_help());
  auto& o = *opts;
  add_value(cmd, o, "--dp", &ModelSpec::dp, "Data-parallel ranks");
  add_value(cmd, o, "--tp", &ModelSpec::tp, "Tensor-parallel ranks");
  add_value(cmd, o, "--pp", &ModelSpec::pp, "Pipeline stages");
  add_value(cmd, o, "--ep", &ModelSpec::ep,
            "Expert-parallel ranks, carved from the dp x tp ranks of a stage; > 1 makes every "
            "layer a mixture of experts");
  add_value(cmd, o, "--layers", &ModelSpec::layers, "Transformer layers (split over --pp)");
  add_value(cmd, o, "--hidden", &ModelSpec::hidden, "Hidden size");
  add_value(cmd, o, "--ffn-hidden", &ModelSpec::ffn_hidden, "MLP (expert) width; 0 = 4 x hidden");
  cmd->add_flag_function(
      "--gated-mlp,!--no-gated-mlp",
      [opts](int64_t count) {
        opts->overrides.push_back({nullptr, [count](ModelSpec& s) { s.gated_mlp = count > 0; }});
      },
      "SwiGLU MLP: three matrices instead of two");
  add_value(cmd, o, "--heads", &ModelSpec::heads,
            "Attention heads (only kv-heads / heads matters); 0 = multi-head attention");
  add_value(cmd, o, "--kv-heads", &ModelSpec::kv_heads,
            "Key/value heads (grouped-query attention); 0 = --heads");
  add_value(cmd, o, "--seq-len", &ModelSpec::seq_len, "Sequence length in tokens");
  add_value(cmd, o, "--micro-batch", &ModelSpec::micro_batch, "Sequences per micro-batch");
  add_value(cmd, o, "--global-batch", &ModelSpec::global_batch,
            "Sequences per step; micro-batches per step = global / (micro-batch x dp); "
            "0 = one micro-batch");
  opts->dtype_option = cmd->add_option("--dtype", opts->dtype,
                                       "Element type of activations, parameters and gradients: "
                                       "fp32, bf16, fp16 or fp8")
                           ->check(CLI::IsMember({"fp32", "bf16", "fp16", "fp8"}))
                           ->capture_default_str();
  add_switch(cmd, o, "--sp", &ModelSpec::sp,
             "Sequence parallelism: TP all-gather + reduce-scatter instead of all-reduce");
  add_value(cmd, o, "--experts", &ModelSpec::experts,
            "Experts per MoE layer; 0 = dense, or --ep experts when --ep > 1");
  add_value(cmd, o, "--top-k", &ModelSpec::top_k, "Experts each token visits");
  add_value(cmd, o, "--capacity-factor", &ModelSpec::capacity_factor,
            "Expert capacity over the balanced share: token slots sent = ceil(tokens x top-k x "
            "factor)");
  add_switch(cmd, o, "--fsdp", &ModelSpec::fsdp,
             "Fully sharded data parallelism: per layer, parameter all-gathers and gradient "
             "reduce-scatters instead of bucketed gradient all-reduces");
  opts->bucket_option =
      cmd->add_option("--bucket", opts->bucket, "DP gradient bucket size, e.g. 25MiB")
          ->capture_default_str();
  add_value(cmd, o, "-i,--iterations", &ModelSpec::iterations, "Training steps per trace");
  add_value(cmd, o, "--gpu", &ModelSpec::gpu, gpu_help());
  auto peak = std::make_shared<double>(0);
  opts->overrides.push_back(
      {cmd->add_option("--peak-tflops", *peak, "Peak TFLOPS, instead of the --gpu's"),
       [peak](ModelSpec& s) { s.peak_tflops = *peak; }});
  add_value(cmd, o, "--efficiency", &ModelSpec::efficiency,
            "Fraction of the peak the compute achieves");

  return [opts]() -> int {
    ModelSpec spec;
    if (!opts->preset.empty()) {
      const synth::ModelPreset* preset = synth::find_model_preset(opts->preset);
      if (preset == nullptr) {
        std::string names;
        for (const auto& p : synth::model_presets()) names += (names.empty() ? "" : ", ") + p.name;
        return bad("preset", fmt::format("unknown preset \"{}\" (known: {})", opts->preset, names));
      }
      preset->apply(spec);
    }
    for (const auto& o : opts->overrides) {
      if (o.option == nullptr || o.option->count() > 0) o.apply(spec);
    }
    if (opts->dtype_option->count() > 0) spec.dtype = *synth::parse_dtype(opts->dtype);
    if (opts->bucket_option->count() > 0) {
      auto bytes = parse_bytes(opts->bucket);
      if (!bytes) {
        return bad("bucket", fmt::format("\"{}\" is not a byte size (e.g. 25MiB)", opts->bucket));
      }
      spec.bucket_bytes = *bytes;
    }
    if (auto problem = synth::validate(spec)) return bad(problem->flag, problem->message);
    SynthStaging staging(opts->output.prefix);
    auto summary =
        synth::write_model(spec, staging.prefix(), synth_write_format(opts->output.format));
    staging.commit();
    for (std::string& path : summary.paths) path = staging.final_path(path);
    summary.comm_groups_path = staging.final_path(summary.comm_groups_path);
    print_summary(spec, summary);
    return runner::kExitOk;
  };
}

}  // namespace etwire::cli
