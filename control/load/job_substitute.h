// LoadOptions::substitute_job applied to the YAML tree (after the --set overrides, before the
// schema reads it): the workload becomes one job replaying the substitute's trace set, named as
// the configuration's first job and keeping that job's mapping entry, so every check runs on the
// substituted configuration as it would on a file that said so. Internal to control/.
#pragma once

#include <yaml-cpp/yaml.h>

#include "control/load/load_options.h"

namespace etwire::control {

// Leaves a tree without a non-empty workload.jobs list as it is: the schema then reports it.
void apply_job_substitute(YAML::Node& root, const JobSubstitute& substitute);

}  // namespace etwire::control
