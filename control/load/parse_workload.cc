#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "control/load/section_parsers.h"
#include "trace/node.h"

namespace etwire::control {

namespace {

constexpr int64_t kMaxIterations = 1'000'000;

// Names users give jobs and ports appear in file names, CSV columns and metric labels.
bool is_plain_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

std::vector<std::string> node_type_names() {
  std::vector<std::string> names;
  for (int t = 1; t < trace::kNodeTypeCount; ++t) {
    names.emplace_back(trace::node_type_name(static_cast<trace::NodeType>(t)));
  }
  return names;
}

void parse_filter(MapReader& section, config::NodeFilterConfig& out) {
  DocumentContext& ctx = section.context();
  for (const auto& item : section.list("node_types")) {
    std::string text;
    if (!read_text(ctx, item.node, item.path, text)) continue;
    auto type = trace::parse_node_type(text);
    if (!type || *type == trace::NodeType::kInvalid) {
      report_bad_name(ctx, item.node, item.path, node_type_names(), "a node type: ");
      continue;
    }
    out.node_types.push_back(*type);
  }
  MapReader ids = section.section("node_ids");
  ids.integer("from", out.min_node_id, 0, INT64_MAX);
  ids.integer("to", out.max_node_id, 0, INT64_MAX);
  if (out.min_node_id > out.max_node_id) {
    ctx.error(Problem::kInconsistent, ids.get("to"), ids.key_path("to"),
              fmt::format("the id range ends ({}) before it starts ({})", out.max_node_id,
                          out.min_node_id));
  }
  ids.finish();
  for (const auto& item : section.list("process_groups")) {
    std::string name;
    if (read_text(ctx, item.node, item.path, name)) out.process_groups.push_back(name);
  }
  section.finish();
}

struct WorkloadDefaults {
  uint32_t iterations = 1;
  uint32_t warmup_iterations = 0;
  config::ReplayMode mode = config::ReplayMode::kFull;
  double compute_scale = 1.0;
};

// Keys a job and the workload share: the workload's value is the default for every job.
template <class Target>
void read_replay_settings(MapReader& section, Target& out) {
  section.integer("iterations", out.iterations, 1, kMaxIterations);
  section.integer("warmup_iterations", out.warmup_iterations, 0, kMaxIterations);
  section.choice("mode", out.mode, config::replay_mode_names());
  section.real("compute_scale", out.compute_scale, RealRange{0, 1e6, false});
}

void parse_job(MapReader& section, const std::string& config_dir, const WorkloadDefaults& defaults,
               size_t index, config::JobConfig& job) {
  DocumentContext& ctx = section.context();
  job.key_path = section.path();
  job.name = fmt::format("job{}", index);
  if (section.text("name", job.name) && !is_plain_name(job.name)) {
    ctx.error(Problem::kBadValue, section.get("name"), section.key_path("name"),
              fmt::format("expected a name of letters, digits, '_', '-' or '.' (at most 64), "
                          "got \"{}\"",
                          job.name));
  }
  std::string text;
  if (section.require("trace",
                      "the trace set to replay, a prefix like traces/run/rank for "
                      "traces/run/rank.0.et") &&
      section.text("trace", text)) {
    if (text.empty()) {
      ctx.error(Problem::kBadValue, section.get("trace"), section.key_path("trace"),
                "expected the trace set to replay, a prefix like traces/run/rank for "
                "traces/run/rank.0.et, got \"\"");
    } else {
      job.trace = resolve_config_path(ctx, section.key_path("trace"), text, config_dir);
    }
  }
  if (section.text("comm_groups", text) && !text.empty()) {
    job.comm_groups = resolve_config_path(ctx, section.key_path("comm_groups"), text, config_dir);
  }
  int32_t world = 0;
  if (section.integer("world_size", world, 1, 1 << 20)) job.world_size = world;
  job.iterations = defaults.iterations;
  job.warmup_iterations = defaults.warmup_iterations;
  job.mode = defaults.mode;
  job.compute_scale = defaults.compute_scale;
  read_replay_settings(section, job);
  MapReader filter = section.section("filter");
  parse_filter(filter, job.filter);
  section.finish();
}

}  // namespace

std::string resolve_config_path(DocumentContext& ctx, const std::string& key_path,
                                const std::string& text, const std::string& config_dir) {
  std::filesystem::path path(text);
  if (path.is_absolute() || ctx.overrides().origin_of(key_path) || config_dir.empty()) {
    return text;
  }
  return (std::filesystem::path(config_dir) / path).lexically_normal().string();
}

void parse_workload(MapReader& section, const std::string& config_dir,
                    config::WorkloadConfig& out) {
  DocumentContext& ctx = section.context();
  WorkloadDefaults defaults;
  read_replay_settings(section, defaults);
  section.choice("comm_size", out.comm_size, config::comm_size_names());
  if (section.require("jobs", "a list of jobs, each with at least a trace")) {
    auto jobs = section.list("jobs");
    if (jobs.empty() && section.get("jobs").IsSequence()) {
      ctx.error(Problem::kMissing, section.get("jobs"), section.key_path("jobs"),
                "the list is empty: a run needs at least one job with a trace");
    }
    std::map<std::string, std::string> seen;  // name -> key path
    for (size_t i = 0; i < jobs.size(); ++i) {
      MapReader job_section(ctx, jobs[i].node, jobs[i].path);
      config::JobConfig job;
      parse_job(job_section, config_dir, defaults, i, job);
      auto [it, inserted] = seen.emplace(job.name, job.key_path);
      if (!inserted) {
        ctx.error(Problem::kDuplicate, job_section.get("name"), job_section.key_path("name"),
                  fmt::format("job name \"{}\" is already used by {}", job.name, it->second));
      }
      out.jobs.push_back(std::move(job));
    }
  }
  section.finish();
}

}  // namespace etwire::control
