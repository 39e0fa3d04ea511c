// --time-scale of `etwire run` and `etwire sweep`: virtual seconds per wall-clock second, a
// number from 0 to 10^6 as run.time_scale is in a configuration.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace etwire::cli {

// CLI11's Range lets NaN through (no comparison with it is true), so the value must also be a
// number.
CLI::Option* add_time_scale_option(CLI::App* cmd, std::optional<double>& time_scale,
                                   const std::string& help);

}  // namespace etwire::cli
