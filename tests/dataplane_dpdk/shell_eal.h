// The EAL starts once per process, with one set of arguments: every test of this binary gives
// these.
#pragma once

namespace etwire::dataplane {

// Three lcores whatever the machine has: lcore 2 shares CPU 0 with the main lcore.
inline constexpr const char* kShellEalArgs =
    R"([--no-pci, --no-huge, --no-shconf, -m, "512", --lcores, "0@0,1@1,2@0"])";

}  // namespace etwire::dataplane
