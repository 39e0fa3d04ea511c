// The binary Chakra reader (length-delimited protobuf records), over a plain byte stream.
// TraceError is how the readers refuse bad input; anything else escaping is a finding.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_support.h"
#include "trace/byte_source.h"
#include "trace/et_reader.h"
#include "trace/trace_error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace etwire;
  try {
    auto source = trace::make_et_reader(trace::ByteSource::open(fuzz::input_as_file(data, size)));
    fuzz::read_all_nodes(*source);
  } catch (const trace::TraceError&) {
  }
  return 0;
}
