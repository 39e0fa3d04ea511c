#include "control/resolve/config_loader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <optional>

#include "common/bounded_file.h"
#include "control/check/capture_checks.h"
#include "control/check/config_checks.h"
#include "control/check/derived_values.h"
#include "control/check/fault_checks.h"
#include "control/check/job_filter.h"
#include "control/check/twin_checks.h"
#include "control/load/device_profile.h"
#include "control/load/document_context.h"
#include "control/load/entry_count.h"
#include "control/load/key_path.h"
#include "control/load/map_reader.h"
#include "control/load/overrides.h"
#include "control/load/section_parsers.h"
#include "control/load/unclosed_quote.h"
#include "control/plan/cable_check.h"
#include "control/plan/inputs_digest.h"
#include "control/plan/traffic_plan.h"
#include "control/resolve/twin_prediction.h"
#include "trace/trace_error.h"
#include "trace/trace_set.h"

namespace etwire::control {

namespace {

// Far above any configuration written by hand or generated (a large one is a few hundred KiB); a
// cap at all keeps an endless stream from being read forever.
constexpr uint64_t kMaxConfigFileBytes = uint64_t{64} << 20;

void report_at(RunPlan& loaded, Severity severity, Problem problem, const std::string& path,
               std::string message) {
  loaded.diagnostics.add(loaded.source_map.make(severity, problem, path, std::move(message)));
}

// yaml-cpp reports syntax errors (and, rarely, conversion errors) as exceptions with a mark.
void report_yaml_exception(RunPlan& loaded, const YAML::Exception& e) {
  Diagnostic d;
  d.problem = Problem::kSyntax;
  d.where = location_from_mark(loaded.source_map.file(), e.mark);
  d.message = "invalid YAML: " + (e.msg.empty() ? std::string(e.what()) : e.msg);
  // yaml-cpp gives its depth limit the message "bad file".
  if (const auto* deep = dynamic_cast<const YAML::DeepRecursion*>(&e)) {
    d.message = fmt::format(
        "invalid YAML: nested deeper than {} levels, the parser's limit (a configuration's "
        "sections go a few levels deep)",
        deep->depth());
  }
  loaded.diagnostics.add(std::move(d));
}

bool report_too_many_entries(RunPlan& loaded, const std::string& text) {
  std::optional<Diagnostic> d =
      too_many_entries(text, loaded.source_map.file(), "configuration",
                       "a configuration needs far fewer: place ranks with mapping rules, not rank "
                       "by rank");
  if (!d) return false;
  loaded.diagnostics.add(std::move(*d));
  return true;
}

// A configuration is text: a NUL byte means a binary file or a damaged one (and would make the
// YAML parser read the file as UTF-16 or UTF-32). Reports it at its line and column.
bool report_nul_byte(RunPlan& loaded, const std::string& text) {
  const size_t at = text.find('\0');
  if (at == std::string::npos) return false;
  Diagnostic d;
  d.problem = Problem::kSyntax;
  d.where.file = loaded.source_map.file();
  d.where.line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
  const size_t line_start = text.rfind('\n', at);
  d.where.column =
      static_cast<int>(at - (line_start == std::string::npos ? 0 : line_start + 1)) + 1;
  d.message =
      fmt::format("the file holds a NUL byte (byte {}): a configuration is YAML text", at + 1);
  loaded.diagnostics.add(std::move(d));
  return true;
}

SectionPresence read_sections(const YAML::Node& root, const std::string& default_name,
                              const std::string& config_dir, DocumentContext& ctx,
                              config::RunConfig& config) {
  MapReader top(ctx, root, "");
  SectionPresence present;
  // A document that is not a map has been reported; its "missing" sections would only repeat it.
  if (root.IsDefined() && !root.IsNull() && !root.IsMap()) return present;
  MapReader run = top.section("run");
  parse_run_settings(run, default_name, config.run);
  MapReader workload = top.section("workload");
  if (top.require("workload", "the traces to replay (workload.jobs)")) {
    parse_workload(workload, config_dir, config.workload);
  }
  parse_ports(top, config.ports);
  parse_emulators(top, config.emulators);
  present.dpdk = top.has("dpdk");
  MapReader dpdk = top.section("dpdk");
  parse_dpdk_eal(dpdk, config.dpdk);
  MapReader verbs = top.section("verbs");
  parse_verbs(verbs, config.verbs);
  MapReader mapping = top.section("mapping");
  parse_mapping(mapping, config.workload, config_dir, config.mapping);
  MapReader collectives = top.section("collectives");
  parse_collectives(collectives, config_dir, config.collectives);
  MapReader transport = top.section("transport");
  const bool some_port_out_of_order =
      std::any_of(config.ports.begin(), config.ports.end(), [](const config::PortConfig& port) {
        return port.receiver == config::Receiver::kOutOfOrder;
      });
  parse_transport(transport, config.transport, some_port_out_of_order);
  present.fabric = top.has("fabric");
  MapReader fabric = top.section("fabric");
  parse_fabric(fabric, config_dir, config.fabric);
  MapReader telemetry = top.section("telemetry");
  parse_telemetry(telemetry, config.telemetry);
  top.finish();
  return present;
}

// Opens a job's trace set and comm groups and reads it into `set`; problems are located at the
// job's keys.
std::optional<TraceFacts> read_job_trace(RunPlan& loaded, const config::JobConfig& job,
                                         std::optional<trace::TraceSet>& set) {
  std::string trace_key = child_path(job.key_path, "trace");
  try {
    set = trace::TraceSet::discover(job.trace);
  } catch (const trace::TraceError& e) {
    report_at(loaded, Severity::kError, Problem::kTrace, trace_key,
              fmt::format("cannot open the trace set: {}", e.what()));
    set.reset();
    return std::nullopt;
  }
  if (job.world_size && *job.world_size != set->world_size()) {
    report_at(loaded, Severity::kError, Problem::kTraceMismatch,
              child_path(job.key_path, "world_size"),
              fmt::format("expected {} ranks, but trace set {} has {} rank files", *job.world_size,
                          job.trace, set->world_size()));
  }
  std::string groups_key = child_path(job.key_path, "comm_groups");
  bool groups_unreadable = false;
  if (!job.comm_groups.empty()) {
    try {
      set->set_comm_groups(trace::CommGroups::load(job.comm_groups));
    } catch (const trace::TraceError& e) {
      report_at(loaded, Severity::kError, Problem::kTrace, groups_key, e.what());
      groups_unreadable = true;
    }
  }
  std::optional<TraceFacts> facts;
  try {
    facts = scan_trace_set(*set, make_node_filter(job.filter));
  } catch (const trace::TraceError& e) {
    report_at(loaded, Severity::kError, Problem::kTrace, trace_key, e.what());
    return std::nullopt;
  }
  // Without the comm-group file every named group would look undefined: one error is enough.
  if (groups_unreadable) facts->undefined_groups.clear();
  for (const auto& group : facts->undefined_groups) {
    report_at(loaded, Severity::kError, Problem::kTraceMismatch,
              job.comm_groups.empty() ? trace_key : groups_key,
              fmt::format("a trace process group has no comm-group entry: {} (pg_name \"{}\" is "
                          "used {} time{} in this trace set)",
                          group.problem, group.pg_name, group.uses, group.uses == 1 ? "" : "s"));
  }
  for (const auto& call : facts->outsider_calls) {
    report_at(
        loaded, Severity::kError, Problem::kTraceMismatch,
        job.comm_groups.empty() ? trace_key : groups_key,
        fmt::format("{}: rank {} issues {} collective{} on process group {}, which does not "
                    "list it as a member",
                    call.location, call.rank, call.uses, call.uses == 1 ? "" : "s", call.group_id));
  }
  for (const auto& mismatch : mismatched_group_counts(*facts)) {
    report_at(loaded, Severity::kError, Problem::kTraceMismatch, trace_key,
              fmt::format("the members of {} disagree on its collectives: rank {} issues {}, "
                          "rank {} issues {}; a replay would wait forever for the missing ones "
                          "(etwire inspect shows every member's)",
                          group_label(mismatch.group_id), mismatch.rank, mismatch.count,
                          mismatch.other_rank, mismatch.other_count));
  }
  const config::CollectivesConfig& collectives = loaded.config.collectives;
  if (facts->partial_dimensions && collectives.hierarchy == config::Hierarchy::kInvolvedDim) {
    const PartialDimensions& partial = *facts->partial_dimensions;
    std::vector<std::string_view> dims;
    for (bool involved : partial.involved_dim) dims.push_back(involved ? "true" : "false");
    report_at(loaded, Severity::kError, Problem::kTraceMismatch, "collectives.hierarchy",
              fmt::format("{}: involved_dim [{}] leaves out some of the hosts' dimensions and "
                          "keeps others ({} collective{} so); etwire's hosts are one dimension "
                          "(0: a host's ranks, 1 and up: the hosts), so it runs a collective over "
                          "dimension 0 alone or over all the others, and a part of them is not "
                          "built yet: set collectives.hierarchy to off to replay it over its "
                          "whole process group",
                          partial.location, fmt::join(dims, ", "), partial.uses,
                          partial.uses == 1 ? "" : "s"));
  }
  for (const auto& stray : facts->stray_peers) {
    report_at(loaded, Severity::kError, Problem::kTraceMismatch, trace_key,
              fmt::format("{}: rank {} {} rank {}, outside the trace set's {} ranks",
                          stray.location, stray.rank, stray.send ? "sends to" : "receives from",
                          stray.peer, facts->world_size));
  }
  return facts;
}

void place_and_address(RunPlan& loaded) {
  config::RunConfig& config = loaded.config;
  size_t jobs = config.workload.jobs.size();
  loaded.placements.assign(jobs, std::nullopt);
  if (config.ports.empty()) return;
  bool all_placed = true;
  for (size_t j = 0; j < jobs; ++j) {
    const config::JobConfig& job = config.workload.jobs[j];
    std::optional<int32_t> world;
    if (loaded.traces[j]) {
      world = loaded.traces[j]->world_size;
    } else if (job.world_size) {
      world = job.world_size;
    }
    if (!world || j >= config.mapping.jobs.size()) {
      all_placed = false;
      continue;
    }
    loaded.placements[j] =
        place_ranks(config, config.mapping.jobs[j], *world, loaded.source_map, loaded.diagnostics);
    all_placed = all_placed && loaded.placements[j].has_value();
  }
  if (!all_placed) return;
  std::vector<JobPlacement> placements;
  for (auto& placement : loaded.placements) placements.push_back(*placement);
  loaded.addresses = assign_addresses(config, placements, loaded.source_map, loaded.diagnostics);
}

// Whether job `a` reads the same trace as `b`: its trace set, comm groups, world size and filter.
bool same_trace_inputs(const config::JobConfig& a, const config::JobConfig& b) {
  return a.trace == b.trace && a.comm_groups == b.comm_groups && a.world_size == b.world_size &&
         a.filter == b.filter;
}

// Each job's trace set opened and read; a job that reads the same trace as the same job of
// `reuse` (a plan without errors this one derives from) takes its set and what reading it found.
void read_traces(RunPlan& plan, const RunPlan* reuse) {
  const std::vector<config::JobConfig>& jobs = plan.config.workload.jobs;
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (jobs[j].trace.empty()) continue;
    if (reuse != nullptr && j < reuse->config.workload.jobs.size() && reuse->traces[j] &&
        same_trace_inputs(jobs[j], reuse->config.workload.jobs[j])) {
      plan.trace_sets[j] = reuse->trace_sets[j];
      plan.traces[j] = reuse->traces[j];
      continue;
    }
    plan.traces[j] = read_job_trace(plan, jobs[j], plan.trace_sets[j]);
  }
}

// Everything after reading the sections: the derived values, the checks, the fabric twin, the
// trace sets, the placement and the addresses, the traffic when something needs it, the digest.
void resolve(RunPlan& plan, const LoadOptions& options, const RunPlan* reuse) {
  plan.config = plan.as_read;
  plan.diagnostics = plan.read_diagnostics;
  config::RunConfig& config = plan.config;
  derive_port_addresses(config);
  derive_path_mtu(config);
  derive_port_receivers(config);
  derive_leaf_spine(config);
  check_config(config, plan.present, plan.source_map, plan.diagnostics);
  plan.twin = twin::configure_twin(config);
  check_infragraph_ports(config, plan.twin, plan.source_map, plan.diagnostics);
  // The twin assumes a sane fabric section: laid out for a configuration without other errors,
  // or for the checks of faults and captured switch ports, which name its parts.
  if (plan.ok() || !config.fabric.faults.empty() ||
      !config.telemetry.capture.switch_ports.empty()) {
    twin::lay_out_twin(plan.twin, config.fabric);
  }
  check_faults(config, plan.twin, plan.source_map, plan.diagnostics);
  check_capture(config, plan.twin, plan.source_map, plan.diagnostics);
  if (plan.ok()) check_twin(config, plan.twin, plan.source_map, plan.diagnostics);

  plan.trace_sets.assign(config.workload.jobs.size(), std::nullopt);
  plan.traces.assign(config.workload.jobs.size(), std::nullopt);
  if (options.read_traces) read_traces(plan, reuse != nullptr && reuse->ok() ? reuse : nullptr);
  place_and_address(plan);
  // Only planning the traffic shows which ranks exchange it: the QPs a run opens and so their
  // numbers, whether a job crosses the planes of a multi-plane twin, and which connections a run
  // on the wall clock (a port off the twin) or split between processes opens before the first
  // packet.
  if (plan.ok() && options.read_traces && plan.addresses) {
    plan.traffic = plan_traffic(plan, plan.traffic_problems);
    plan.qp_numbers =
        number_qps(config, *plan.addresses, *plan.traffic, plan.source_map, plan.diagnostics);
    check_plane_crossings(plan, plan.diagnostics);
    check_cables(plan, plan.diagnostics);
  }
  plan.config_digest = config_digest(plan.text, plan.settings);
}

// The options to read the configuration again with, when it names a device profile that applies
// (load_options.h): the profile's settings, then the command line's. A profile that cannot be
// read was reported at its key.
std::optional<LoadOptions> with_named_profile(const config::RunConfig& read,
                                              const LoadOptions& options) {
  if (!options.apply_named_profile || read.fabric.profile.empty() || !all_ports_on_loopback(read)) {
    return std::nullopt;
  }
  LoadOptions profiled = options;
  profiled.apply_named_profile = false;
  try {
    profiled.overrides = read_device_profile(read.fabric.profile);
  } catch (const DeviceProfileError&) {
    return std::nullopt;
  }
  profiled.overrides.insert(profiled.overrides.end(), options.overrides.begin(),
                            options.overrides.end());
  return profiled;
}

// A problem with a setting the named profile made says so, since it reads as a --set the
// command line never gave.
void name_profile_settings(RunPlan& plan, const std::string& profile, const LoadOptions& profiled,
                           const std::vector<std::string>& own) {
  const auto from_profile = [&](const Diagnostic& d) {
    const auto& all = profiled.overrides;
    return d.where.from_override() &&
           std::find(all.begin(), all.end(), d.where.override_text) != all.end() &&
           std::find(own.begin(), own.end(), d.where.override_text) == own.end();
  };
  Diagnostics named;
  for (Diagnostic d : plan.diagnostics.items()) {
    if (from_profile(d)) {
      d.message += fmt::format(" (a setting of the device profile {}: fabric.profile)", profile);
    }
    named.add(std::move(d));
  }
  plan.diagnostics = std::move(named);
}

}  // namespace

RunPlan load_config_text(const std::string& text, const std::string& name,
                         const std::string& config_dir, const LoadOptions& options) {
  RunPlan plan;
  plan.source_map = SourceMap(name);
  plan.as_read.source_file = name;
  plan.config.source_file = name;
  plan.text = text;
  plan.settings = options.overrides;
  const auto read = [&] {
    if (report_nul_byte(plan, text) || report_too_many_entries(plan, text)) return false;
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      report_yaml_exception(plan, e);
      return false;
    }
    if (const std::optional<YAML::Mark> quote = unclosed_quote(root, text)) {
      Diagnostic d;
      d.problem = Problem::kSyntax;
      d.where = location_from_mark(plan.source_map.file(), *quote);
      d.message = "invalid YAML: this quote is never closed: the value runs to the end of the file";
      plan.diagnostics.add(std::move(d));
      return false;
    }
    AppliedOverrides applied;
    apply_overrides(root, options.overrides, applied, plan.diagnostics);
    DocumentContext ctx(applied, plan.source_map, plan.diagnostics);
    ctx.record_into(options.schema);
    const std::string default_name = std::filesystem::path(name).stem().string();
    try {
      plan.present = read_sections(root, default_name.empty() ? "run" : default_name, config_dir,
                                   ctx, plan.as_read);
    } catch (const YAML::Exception& e) {
      report_yaml_exception(plan, e);
      return false;
    }
    return true;
  };
  if (!read() || options.schema != nullptr) {
    // Nothing to resolve: the configuration is what could be read.
    plan.config = plan.as_read;
    return plan;
  }
  if (std::optional<LoadOptions> profiled = with_named_profile(plan.as_read, options)) {
    RunPlan with = load_config_text(text, name, config_dir, *profiled);
    name_profile_settings(with, plan.as_read.fabric.profile, *profiled, options.overrides);
    return with;
  }
  plan.read_diagnostics = plan.diagnostics;
  resolve(plan, options, nullptr);
  return plan;
}

RunPlan derive_plan(const RunPlan& base, const PlanChange& change, const LoadOptions& options,
                    const RunPlan* traces_from) {
  RunPlan plan;
  plan.as_read = base.as_read;
  plan.present = base.present;
  if (change.forget_sections) change.forget_sections(plan.present);
  plan.read_diagnostics = base.read_diagnostics;
  plan.source_map = base.source_map;
  plan.text = base.text;
  plan.settings = base.settings;
  plan.settings.insert(plan.settings.end(), change.settings.begin(), change.settings.end());
  change.apply(plan.as_read);
  resolve(plan, options, traces_from != nullptr ? traces_from : &base);
  return plan;
}

RunPlan load_config_file(const std::string& path, const LoadOptions& options) {
  std::string text;
  try {
    text = read_bounded_file(path, kMaxConfigFileBytes, "a configuration file");
  } catch (const InputFileError& e) {
    RunPlan loaded;
    loaded.source_map = SourceMap(path);
    loaded.config.source_file = path;
    Diagnostic d;
    d.problem = Problem::kSyntax;
    d.where.file = path;
    d.message = e.reason() == InputFileError::Reason::kOpen && e.error_number() == ENOENT
                    ? "no such file"
                    : e.what();
    loaded.diagnostics.add(std::move(d));
    return loaded;
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  return load_config_text(text, path, dir, options);
}

config::RunConfig load_run_config(const std::string& path, const LoadOptions& options) {
  RunPlan loaded = load_config_file(path, options);
  if (!loaded.ok()) {
    std::vector<Diagnostic> errors;
    for (const auto& d : loaded.diagnostics.items()) {
      if (d.severity == Severity::kError) errors.push_back(d);
    }
    throw ConfigError(std::move(errors));
  }
  return std::move(loaded.config);
}

}  // namespace etwire::control
