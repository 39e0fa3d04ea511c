#include "control/load/section_parsers.h"

namespace etwire::control {

void parse_run_settings(MapReader& section, const std::string& default_name,
                        config::RunSettings& out) {
  out.name = default_name;
  section.text("name", out.name);
  section.integer("seed", out.seed, 0, INT64_MAX);
  section.duration("watchdog", out.watchdog_ns, 1'000'000, kHourNs);
  section.real("time_scale", out.time_scale, RealRange{0, 1e6, false});
  section.finish();
}

}  // namespace etwire::control
