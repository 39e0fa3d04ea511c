// Loading a run configuration: read the YAML, apply --set overrides, read every section against
// the schema, fill in derived values, check the sections against each other, read each job's
// trace set to check it against the mapping, place every rank and assign its addresses. Every
// problem found is collected (not just the first), each located at file:line:col or at its --set
// argument. Nothing here throws for bad input.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/run_config.h"
#include "control/load/load_options.h"
#include "control/plan/loaded_config.h"

namespace etwire::control {

LoadedConfig load_config_file(const std::string& path, const LoadOptions& options = {});
// `name` stands for the file in messages; relative paths in the text resolve against
// `config_dir`.
LoadedConfig load_config_text(const std::string& text, const std::string& name,
                              const std::string& config_dir, const LoadOptions& options = {});

// For callers that only want the plain structs: throws ConfigError carrying every error.
config::RunConfig load_run_config(const std::string& path, const LoadOptions& options = {});

}  // namespace etwire::control
