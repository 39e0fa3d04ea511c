// Run options for an engine under test on the loopback data plane (the fabric twin of the
// configuration), which a test links as etwire_dataplane_loopback.
#pragma once

#include "dataplane/loopback/loopback_data_plane.h"
#include "engine/run_engine.h"

namespace etwire::testing {

inline engine::RunOptions loopback(engine::RunOptions options = {}) {
  options.data_plane = dataplane::loopback_data_plane_factory();
  return options;
}

}  // namespace etwire::testing
