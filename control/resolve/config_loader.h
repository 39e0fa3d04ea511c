// Resolving the plan of a run (run_plan.h): read the YAML, apply --set overrides, read every
// section against the schema, fill in derived values, check the sections against each other,
// configure the fabric twin, open and read each job's trace set to check it against the mapping,
// place every rank, assign its addresses and, where needed, plan the traffic. Every problem found
// is collected (not just the first), each located at file:line:col or at its --set argument.
// Nothing here throws for bad input. A plan derived from another (a prediction, a point of a
// sweep) changes the configuration as it was read and resolves it again, without reading the file
// or opening the trace sets it shares.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/run_config.h"
#include "control/load/load_options.h"
#include "control/plan/run_plan.h"

namespace etwire::control {

RunPlan load_config_file(const std::string& path, const LoadOptions& options = {});
// `name` stands for the file in messages; relative paths in the text resolve against
// `config_dir`.
RunPlan load_config_text(const std::string& text, const std::string& name,
                         const std::string& config_dir, const LoadOptions& options = {});

// A change of a plan's configuration as its sections read it (RunPlan::as_read), and how it is
// named in the derived plan's settings and digest.
struct PlanChange {
  std::function<void(config::RunConfig&)> apply;
  std::vector<std::string> settings;
  // Sections of the text the change makes moot (a prediction's devices): not warned about.
  std::function<void(SectionPresence&)> forget_sections = nullptr;
};

// `base` was read without a syntax or schema error (its other checks may have failed). A job that
// reads the same trace as the same job of `traces_from` (base when null), a plan without errors,
// takes its trace set and what reading it found instead of opening it again.
RunPlan derive_plan(const RunPlan& base, const PlanChange& change, const LoadOptions& options = {},
                    const RunPlan* traces_from = nullptr);

// For callers that only want the plain structs: throws ConfigError carrying every error.
config::RunConfig load_run_config(const std::string& path, const LoadOptions& options = {});

}  // namespace etwire::control
