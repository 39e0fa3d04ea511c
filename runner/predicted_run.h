// `etwire run --predict`: the configuration run twice, first on the fabric twin its `fabric`
// section describes (the device under test), its ports made loopback ports of the same speeds,
// into <results>/prediction/; then on the configured ports into <results>.
#pragma once

#include "runner/configured_run.h"

namespace etwire::runner {

// Returns the exit code of the measurement, or the prediction's when it did not complete.
int run_with_prediction(const RunRequest& opts);

}  // namespace etwire::runner
