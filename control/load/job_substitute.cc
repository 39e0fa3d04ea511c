#include "control/load/job_substitute.h"

#include <fmt/format.h>

#include <filesystem>
#include <utility>

namespace etwire::control {

void substitute_job(config::RunConfig& config, const JobSubstitute& substitute) {
  std::vector<config::JobConfig>& jobs = config.workload.jobs;
  if (jobs.empty()) return;
  config::JobConfig job;
  job.name = jobs.front().name;
  job.key_path = jobs.front().key_path;
  job.trace = substitute.trace;
  job.iterations = substitute.iterations;
  job.warmup_iterations = substitute.warmup_iterations;
  jobs.assign(1, std::move(job));
  // The mapping holds one entry per job, in workload order: the first job's is kept.
  std::vector<config::JobMapping>& mappings = config.mapping.jobs;
  if (mappings.size() > 1) mappings.resize(1);
}

std::string substitute_setting(const JobSubstitute& substitute) {
  const std::filesystem::path trace(substitute.trace);
  return fmt::format("substitute_job: {}/{} x {} + {} warm-up",
                     trace.parent_path().filename().string(), trace.filename().string(),
                     substitute.iterations, substitute.warmup_iterations);
}

}  // namespace etwire::control
