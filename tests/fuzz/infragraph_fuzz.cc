// An InfraGraph file, imported as `fabric.infragraph` of a run configuration: read from disk (the
// input as an in-memory file), parsed as YAML or JSON, read against InfraGraph's schema, expanded
// into cables, its shape recognized and the twin built from that shape held against it. The
// loader reports bad input as diagnostics in its result, never by throwing: any exception
// escaping is a finding. Traces are not read.
#include <cstddef>
#include <cstdint>
#include <string>

#include "control/resolve/config_loader.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace etwire;
  // Eight ports, as the seeds' graphs have host NICs: most inputs are one of those, changed.
  static const std::string kRun =
      "workload:\n  jobs:\n    - trace: /nonexistent/etwire-fuzz-infragraph/trace\n"
      "ports:\n  - name: p\n    count: 8\n    speed: 100Gbps\nfabric:\n  infragraph: ";
  const std::string text = kRun + fuzz::input_as_file(data, size) + "\n";
  control::LoadOptions options;
  options.read_traces = false;
  auto loaded =
      control::load_config_text(text, "fuzz.yaml", "/nonexistent/etwire-fuzz-infragraph", options);
  volatile bool ok = loaded.ok();
  (void)ok;
  return 0;
}
