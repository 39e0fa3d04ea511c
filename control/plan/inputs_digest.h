// A short fingerprint of what a run was configured with, so results can be matched to the exact
// configuration that produced them: FNV-1a (64-bit) over the config file's bytes and each --set
// override. Not a cryptographic hash: it tells runs apart, it does not authenticate them.
#pragma once

#include <string>
#include <vector>

namespace etwire::control {

struct RunPlan;

// "fnv1a64:" followed by 16 hex digits, over the configuration's bytes as they were loaded
// (RunPlan::text) and what changed it (RunPlan::settings: its overrides, then its derivations).
std::string config_digest(const std::string& config_text, const std::vector<std::string>& settings);

// The same over everything a run reads: the configuration, its settings, and every job's trace
// files (as the plan opened its trace set) and comm-group file, each by name and bytes. What the
// emulator processes of one run compare before they start. Throws std::runtime_error naming a
// file that cannot be read.
std::string inputs_digest(const RunPlan& plan);

}  // namespace etwire::control
