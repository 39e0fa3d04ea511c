// How a run configuration is loaded: --set overrides, whether the trace sets are read and whether
// the traffic is planned, whether a named device profile applies.
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
  // When every port is on the twin, the run is the twin's and the device profile fabric.profile
  // names applies: its settings before `overrides`. A lab's configuration keeps its ports as
  // given; its prediction and replay apply the profile themselves (control/resolve/
  // twin_prediction.h). Off once applied.
  bool apply_named_profile = true;
};

}  // namespace etwire::control
