// How a run configuration is loaded: --set overrides, whether the trace sets are read and whether
// the traffic is planned.
#pragma once

#include <string>
#include <vector>

namespace etwire::control {

class SchemaRecorder;

struct LoadOptions {
  std::vector<std::string> overrides;  // "key.path=value", applied in order
  // Read each job's trace set: world size, process groups and the communication per rank. Off,
  // the checks that need the traces are skipped (and ranks are placed only for jobs that state
  // their world_size).
  bool read_traces = true;
  // Writing the JSON Schema (config_schema.h): the sections' readers say what they expect into
  // this recorder, and the load stops once the sections are read (no trace, file or check).
  SchemaRecorder* schema = nullptr;
};

}  // namespace etwire::control
