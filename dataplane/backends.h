// Which port backends `etwire run` can drive. A configuration may describe ports of a backend
// whose data plane is not built yet (the config checks know its settings); `validate` and `run`
// refuse such a run with this message rather than accept it and do nothing.
#pragma once

#include <optional>
#include <string>

#include "config/run_config.h"

namespace etwire::dataplane {

// The refusal for the first port whose backend has no data plane yet, naming the file, the port
// and its key path; nullopt when every port can run.
std::optional<std::string> unbuilt_backend(const config::RunConfig& config);

}  // namespace etwire::dataplane
