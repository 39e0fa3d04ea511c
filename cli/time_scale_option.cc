#include "cli/time_scale_option.h"

#include <cmath>

namespace etwire::cli {

CLI::Option* add_time_scale_option(CLI::App* cmd, std::optional<double>& time_scale,
                                   const std::string& help) {
  const CLI::Validator a_number(
      [](const std::string& text) {
        double value = 0;
        return CLI::detail::lexical_cast(text, value) && std::isnan(value)
                   ? text + ": not a number; expected 0 to 1000000"
                   : std::string();
      },
      "");
  return cmd->add_option("--time-scale", time_scale, help)
      ->check(a_number)
      ->check(CLI::Range(0.0, 1e6));
}

}  // namespace etwire::cli
