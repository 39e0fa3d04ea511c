// A configuration's fault list (fabric.faults): the input's lines are the list, under a fixed
// twin configuration of 8 loopback ports on a leaf-spine fabric, so every input reaches the
// fault parser and, when it parses, the checks against the twin (link names, overlaps,
// twin::fault_problem) and the plan. Traces are not read (read_traces off). The loader reports bad
// input as diagnostics in its result, never by throwing: any exception escaping is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "control/resolve/config_loader.h"

namespace {

constexpr std::string_view kConfig = R"(run:
  name: faults-fuzz
workload:
  jobs:
    - name: ar
      trace: traces/allreduce_8r/allreduce
ports:
  - name: h
    count: 8
    backend: loopback
    speed: 100Gbps
fabric:
  topology: leaf-spine
  leaf_spine:
    ports_per_leaf: 4
    spines: 2
  faults:
)";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace etwire;
  std::string text(kConfig);
  // Each line of the input indented under `faults:`, so the input cannot step out of the list.
  text += "    ";
  for (size_t i = 0; i < size; ++i) {
    const char c = static_cast<char>(data[i]);
    text += c;
    if (c == '\n') text += "    ";
  }
  text += '\n';
  control::LoadOptions options;
  options.read_traces = false;
  auto loaded =
      control::load_config_text(text, "fuzz.yaml", "/nonexistent/etwire-fuzz-faults", options);
  volatile bool ok = loaded.ok();
  (void)ok;
  return 0;
}
