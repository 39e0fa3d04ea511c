#include "dataplane/backends.h"

#include <fmt/format.h>

namespace etwire::dataplane {

std::optional<std::string> unbuilt_backend(const config::RunConfig& config) {
  for (const config::PortConfig& port : config.ports) {
    if (port.backend != config::Backend::kVerbs) continue;
    return fmt::format(
        "{}: port \"{}\" ({}) uses the verbs backend, which is not built yet: `etwire run` drives "
        "loopback and dpdk ports (the verbs settings are checked, but nothing can run them)",
        config.source_file, port.name, port.key_path);
  }
  return std::nullopt;
}

}  // namespace etwire::dataplane
