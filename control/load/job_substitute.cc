#include "control/load/job_substitute.h"

#include <string>

namespace etwire::control {

namespace {

// The name parse_job gives a job without one: "job<index>".
std::string first_job_name(const YAML::Node& job) {
  const YAML::Node name = job["name"];
  return name && name.IsScalar() ? name.Scalar() : "job0";
}

}  // namespace

void apply_job_substitute(YAML::Node& root, const JobSubstitute& substitute) {
  if (!root.IsMap()) return;
  const YAML::Node workload_in = root["workload"];
  if (!workload_in || !workload_in.IsMap()) return;
  const YAML::Node jobs_in = workload_in["jobs"];
  if (!jobs_in || !jobs_in.IsSequence() || jobs_in.size() == 0 || !jobs_in[0].IsMap()) return;
  const YAML::Node first = jobs_in[0];
  const std::string name = first_job_name(first);

  // The first job's world size, comm groups and filter describe its own trace set, not the
  // substitute's: they are left out with the other keys.
  YAML::Node job(YAML::NodeType::Map);
  if (first["name"]) job["name"] = first["name"];
  job["trace"] = substitute.trace;
  job["iterations"] = substitute.iterations;
  job["warmup_iterations"] = substitute.warmup_iterations;
  YAML::Node jobs(YAML::NodeType::Sequence);
  jobs.push_back(job);
  YAML::Node workload = root["workload"];
  workload["jobs"] = jobs;

  const YAML::Node mapping_in = root["mapping"];
  if (!mapping_in || !mapping_in.IsMap()) return;
  const YAML::Node entries_in = mapping_in["jobs"];
  if (!entries_in || !entries_in.IsSequence()) return;
  // An entry without a `job` key maps the only job (a configuration of several jobs has been
  // told it needs one); the entries of the other jobs would name jobs that no longer exist.
  YAML::Node entries(YAML::NodeType::Sequence);
  for (const YAML::Node& entry : entries_in) {
    const YAML::Node of = entry.IsMap() ? entry["job"] : YAML::Node();
    if (!of || (of.IsScalar() && of.Scalar() == name)) entries.push_back(entry);
  }
  YAML::Node mapping = root["mapping"];
  mapping["jobs"] = entries;
}

}  // namespace etwire::control
