#include "trace/synth/model_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "trace/synth/gpu_presets.h"

namespace etwire::synth {

std::optional<Dtype> parse_dtype(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "fp32") return Dtype::kFp32;
  if (lower == "bf16") return Dtype::kBf16;
  if (lower == "fp16") return Dtype::kFp16;
  if (lower == "fp8") return Dtype::kFp8;
  return std::nullopt;
}

std::string_view dtype_name(Dtype dtype) {
  switch (dtype) {
    case Dtype::kFp32:
      return "fp32";
    case Dtype::kBf16:
      return "bf16";
    case Dtype::kFp16:
      return "fp16";
    case Dtype::kFp8:
      return "fp8";
  }
  return "bf16";
}

uint64_t dtype_bytes(Dtype dtype) {
  switch (dtype) {
    case Dtype::kFp32:
      return 4;
    case Dtype::kBf16:
    case Dtype::kFp16:
      return 2;
    case Dtype::kFp8:
      return 1;
  }
  return 2;
}

uint64_t ModelSpec::micro_batches() const {
  const uint64_t per_step = micro_batch * static_cast<uint64_t>(dp);
  if (global_batch == 0 || per_step == 0) return 1;
  return std::max<uint64_t>(1, global_batch / per_step);
}

namespace {

std::optional<SpecProblem> problem(std::string flag, std::string message) {
  return SpecProblem{std::move(flag), std::move(message)};
}

// Past these a spec describes no model anyone trains (the largest published have some 100 layers,
// hidden sizes near 2^14, contexts near 2^20 tokens), and the byte and parameter counts below,
// held in 64 bits, would wrap or the traces outgrow any disk: each is refused at its flag.
std::optional<SpecProblem> past_a_limit(const ModelSpec& spec) {
  struct Limit {
    const char* flag;
    uint64_t value;
    uint64_t max;
  };
  for (const Limit& l : {Limit{"layers", static_cast<uint64_t>(spec.layers), uint64_t{1} << 16},
                         Limit{"hidden", spec.hidden, uint64_t{1} << 20},
                         Limit{"ffn-hidden", spec.ffn_hidden, uint64_t{1} << 22},
                         Limit{"seq-len", spec.seq_len, uint64_t{1} << 24},
                         Limit{"micro-batch", spec.micro_batch, uint64_t{1} << 16},
                         Limit{"experts", static_cast<uint64_t>(spec.experts), uint64_t{1} << 12},
                         Limit{"iterations", spec.iterations, uint64_t{1} << 20}}) {
    if (l.value > l.max) return problem(l.flag, fmt::format("{} is above {}", l.value, l.max));
  }
  if (!(spec.capacity_factor <= 1024)) return problem("capacity-factor", "must be at most 1024");
  // With every flag in range the products still reach past 2^64: counted here in 128 bits.
  using Wide = unsigned __int128;
  const Wide experts = static_cast<Wide>(std::max(spec.expert_count(), 1));
  const Wide mlp = Wide{3} * spec.hidden * spec.ffn();
  const Wide params = (Wide{4} * spec.hidden * spec.hidden + experts * (mlp + spec.hidden)) *
                      static_cast<Wide>(spec.layers);
  constexpr Wide kMaxParams = Wide{1} << 50;
  if (params > kMaxParams) {
    return problem("hidden", fmt::format("--layers {} x --hidden {} (--ffn-hidden {}, {} experts) "
                                         "makes {:.3g} parameters; at most 2^50",
                                         spec.layers, spec.hidden, spec.ffn(), spec.expert_count(),
                                         static_cast<double>(params)));
  }
  // The token slots a layer's all-to-all sends (model_costs.cc), in bytes; top-k is checked
  // against the experts later.
  if (spec.moe() && spec.top_k >= 1 && spec.top_k <= spec.expert_count()) {
    const double bytes = static_cast<double>(spec.micro_batch) * static_cast<double>(spec.seq_len) *
                         spec.top_k * spec.capacity_factor * static_cast<double>(spec.hidden) * 4;
    if (bytes > 0x1p60) {
      return problem("capacity-factor",
                     fmt::format("an all-to-all of {:.3g} bytes per layer (micro-batch x seq-len "
                                 "x top-k x factor x hidden); at most 2^60",
                                 bytes));
    }
  }
  return std::nullopt;
}

// The attention heads' and the experts' settings against the model's and the parallelism's.
std::optional<SpecProblem> heads_and_experts_problem(const ModelSpec& spec) {
  if (spec.heads > 0) {
    if (spec.hidden % static_cast<uint64_t>(spec.heads) != 0) {
      return problem("heads",
                     fmt::format("{} does not divide --hidden {}", spec.heads, spec.hidden));
    }
    const int32_t kv = spec.kv_heads > 0 ? spec.kv_heads : spec.heads;
    if (kv > spec.heads || spec.heads % kv != 0) {
      return problem("kv-heads", fmt::format("{} does not divide --heads {}", kv, spec.heads));
    }
  } else if (spec.kv_heads > 0) {
    return problem("kv-heads", "needs --heads");
  }
  if (spec.dp * spec.tp % spec.ep != 0) {
    return problem("ep", fmt::format("{} does not divide dp x tp = {} (expert-parallel groups are "
                                     "carved from the dp x tp ranks of a stage)",
                                     spec.ep, spec.dp * spec.tp));
  }
  if (spec.moe()) {
    const int32_t experts = spec.expert_count();
    if (experts % spec.ep != 0) {
      return problem("experts",
                     fmt::format("{} experts do not split evenly over --ep {}", experts, spec.ep));
    }
    if (spec.top_k < 1 || spec.top_k > experts) {
      return problem("top-k",
                     fmt::format("{} is not between 1 and the {} experts", spec.top_k, experts));
    }
    if (!(spec.capacity_factor > 0) || !std::isfinite(spec.capacity_factor)) {
      return problem("capacity-factor", "must be a number above 0");
    }
    // Megatron-LM refuses the same: with tensor parallelism each rank dispatches its own
    // sequence shard, which only exists with sequence parallelism.
    if (spec.tp > 1 && !spec.sp) {
      return problem("sp", "a mixture-of-experts model with --tp > 1 needs --sp");
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<SpecProblem> validate(const ModelSpec& spec) {
  // Zero (or negative) sizes first: every later rule divides by them.
  struct Positive {
    const char* flag;
    int64_t value;
  };
  for (const Positive& p :
       {Positive{"dp", spec.dp}, Positive{"tp", spec.tp}, Positive{"pp", spec.pp},
        Positive{"ep", spec.ep}, Positive{"layers", spec.layers},
        Positive{"hidden", static_cast<int64_t>(spec.hidden)},
        Positive{"seq-len", static_cast<int64_t>(spec.seq_len)},
        Positive{"micro-batch", static_cast<int64_t>(spec.micro_batch)},
        Positive{"iterations", static_cast<int64_t>(spec.iterations)},
        Positive{"bucket", static_cast<int64_t>(spec.bucket_bytes)}}) {
    if (p.value < 1) return problem(p.flag, "must be at least 1");
  }
  if (auto too_large = past_a_limit(spec)) return too_large;
  if (spec.heads < 0) return problem("heads", "must not be negative");
  if (spec.kv_heads < 0) return problem("kv-heads", "must not be negative");
  if (spec.experts < 0) return problem("experts", "must not be negative");
  // Ranks are ints in the traces and the comm-group file; keep well inside them.
  const int64_t ranks = int64_t{spec.dp} * spec.tp * spec.pp;
  if (ranks > (int64_t{1} << 20)) {
    return problem("dp", fmt::format("dp x tp x pp = {} ranks; at most 2^20", ranks));
  }
  if (spec.layers % spec.pp != 0) {
    return problem("layers", fmt::format("{} layers do not split evenly into --pp {} stages",
                                         spec.layers, spec.pp));
  }
  const uint64_t per_step = spec.micro_batch * static_cast<uint64_t>(spec.dp);
  if (spec.global_batch != 0 && spec.global_batch % per_step != 0) {
    return problem("global-batch", fmt::format("{} is not a multiple of micro-batch x dp = {}",
                                               spec.global_batch, per_step));
  }
  // Pipeline tags are 2 x micro-batch (+1): keep them well inside an int32.
  if (spec.micro_batches() > (uint64_t{1} << 20)) {
    return problem("global-batch",
                   fmt::format("{} micro-batches per step; at most 2^20", spec.micro_batches()));
  }
  if (spec.hidden % static_cast<uint64_t>(spec.tp) != 0) {
    return problem("hidden", fmt::format("{} is not divisible by --tp {}", spec.hidden, spec.tp));
  }
  if (spec.ffn() % static_cast<uint64_t>(spec.tp) != 0) {
    return problem("ffn-hidden",
                   fmt::format("{} is not divisible by --tp {}", spec.ffn(), spec.tp));
  }
  if (spec.sp && spec.seq_len % static_cast<uint64_t>(spec.tp) != 0) {
    return problem("seq-len", fmt::format("{} is not divisible by --tp {} (sequence parallelism "
                                          "shards the sequence)",
                                          spec.seq_len, spec.tp));
  }
  if (auto found = heads_and_experts_problem(spec)) return found;
  if (!(spec.efficiency > 0 && spec.efficiency <= 1)) {
    return problem("efficiency", "must be above 0 and at most 1");
  }
  if (spec.peak_tflops) {
    if (!(*spec.peak_tflops > 0) || !std::isfinite(*spec.peak_tflops)) {
      return problem("peak-tflops", "must be a number above 0");
    }
  } else if (find_gpu_preset(spec.gpu) == nullptr) {
    std::string names;
    for (const auto& gpu : gpu_presets()) names += (names.empty() ? "" : ", ") + gpu.name;
    return problem("gpu", fmt::format("unknown GPU \"{}\" (known: {})", spec.gpu, names));
  }
  return std::nullopt;
}

namespace {

// GPT-3 Small (Brown et al. 2020, "Language Models are Few-Shot Learners", Table 2.1).
void gpt3_small(ModelSpec& s) {
  s.layers = 12;
  s.hidden = 768;
  s.heads = 12;
  s.kv_heads = 0;
  s.ffn_hidden = 0;
  s.gated_mlp = false;
  s.seq_len = 2048;
  s.experts = 0;
}

// Llama 2 (Touvron et al. 2023, "Llama 2: Open Foundation and Fine-Tuned Chat Models"): SwiGLU
// MLP, 4096-token context; 70B uses grouped-query attention with 8 KV heads. The MLP widths are
// those of the released model configurations.
void llama2_7b(ModelSpec& s) {
  s.layers = 32;
  s.hidden = 4096;
  s.heads = 32;
  s.kv_heads = 32;
  s.ffn_hidden = 11008;
  s.gated_mlp = true;
  s.seq_len = 4096;
  s.experts = 0;
}

void llama2_70b(ModelSpec& s) {
  s.layers = 80;
  s.hidden = 8192;
  s.heads = 64;
  s.kv_heads = 8;
  s.ffn_hidden = 28672;
  s.gated_mlp = true;
  s.seq_len = 4096;
  s.experts = 0;
}

// Mixtral 8x7B (Jiang et al. 2024, "Mixtral of Experts", Table 1): 8 experts, 2 per token.
// Its context is 32k tokens; 4096 is a training sequence length chosen here.
void mixtral_8x7b(ModelSpec& s) {
  s.layers = 32;
  s.hidden = 4096;
  s.heads = 32;
  s.kv_heads = 8;
  s.ffn_hidden = 14336;
  s.gated_mlp = true;
  s.seq_len = 4096;
  s.experts = 8;
  s.top_k = 2;
}

// Not a published model: a mixture of experts small enough to replay on the loopback twin in
// seconds (tests, demos).
void moe_small(ModelSpec& s) {
  s.layers = 2;
  s.hidden = 256;
  s.heads = 4;
  s.kv_heads = 0;
  s.ffn_hidden = 512;
  s.gated_mlp = true;
  s.seq_len = 128;
  s.experts = 4;
  s.top_k = 2;
}

}  // namespace

const std::vector<ModelPreset>& model_presets() {
  static const std::vector<ModelPreset> presets = {
      {"gpt3-small", "dense GPT-3 Small: 12 layers, hidden 768, 12 heads, seq 2048", gpt3_small},
      {"llama2-7b",
       "dense Llama-2-7B shape: 32 layers, hidden 4096, SwiGLU ffn 11008, 32 heads, seq 4096",
       llama2_7b},
      {"llama2-70b",
       "dense Llama-2-70B shape: 80 layers, hidden 8192, SwiGLU ffn 28672, 64 heads / 8 KV heads, "
       "seq 4096",
       llama2_70b},
      {"mixtral-8x7b",
       "MoE Mixtral-8x7B shape: 32 layers, hidden 4096, 8 SwiGLU experts of ffn 14336, top-2, "
       "32 heads / 8 KV heads, seq 4096",
       mixtral_8x7b},
      {"moe-small",
       "small MoE for tests: 2 layers, hidden 256, 4 SwiGLU experts of ffn 512, top-2, seq 128",
       moe_small},
  };
  return presets;
}

const ModelPreset* find_model_preset(std::string_view name) {
  for (const auto& preset : model_presets()) {
    if (preset.name == name) return &preset;
  }
  return nullptr;
}

}  // namespace etwire::synth
