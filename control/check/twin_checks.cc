#include "control/check/twin_checks.h"

#include <exception>
#include <string>
#include <string_view>

#include "clock/virtual_clock.h"
#include "control/plan/twin_layout.h"
#include "nic/loopback/fabric_twin.h"

namespace etwire::control {

namespace {

// The twin's messages read "fabric twin: fabric.buffer.ingress_reserve: why" when one setting is
// to blame: that key is where the error belongs; otherwise the fabric section is.
struct Blame {
  std::string key = "fabric";
  std::string why;
};

Blame blame(std::string_view message) {
  constexpr std::string_view kPrefix = "fabric twin: ";
  if (message.starts_with(kPrefix)) message.remove_prefix(kPrefix.size());
  Blame blame;
  const size_t end = message.find(": ");
  if (message.starts_with("fabric.") && end != std::string_view::npos &&
      message.substr(0, end).find(' ') == std::string_view::npos) {
    blame.key = message.substr(0, end);
    message.remove_prefix(end + 2);
  }
  blame.why = "the fabric twin cannot be built: " + std::string(message);
  return blame;
}

}  // namespace

void check_twin(const config::RunConfig& config, const SourceMap& where, Diagnostics& out) {
  if (config.ports.empty()) return;
  const auto specs = twin_port_specs(config);
  if (!specs) return;
  try {
    clock::VirtualClock clock;
    nic::loopback::FabricTwin twin(config.fabric, *specs, clock, config.run.seed);
  } catch (const std::exception& e) {
    const Blame b = blame(e.what());
    out.add(where.make(Severity::kError, Problem::kInconsistent, b.key, b.why));
  }
}

}  // namespace etwire::control
