// A trace file of any format, read as `etwire` reads one: the format sniffed from its content.
// TraceError is how the readers refuse bad input; anything else escaping is a finding.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_support.h"
#include "trace/byte_source.h"
#include "trace/node_source.h"
#include "trace/trace_error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace etwire;
  try {
    auto source = trace::open_node_source(fuzz::input_as_file(data, size));
    fuzz::read_all_nodes(*source);
  } catch (const trace::TraceError&) {
  }
  return 0;
}
