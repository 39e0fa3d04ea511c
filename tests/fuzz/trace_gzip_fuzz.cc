// The gzip layer under the binary reader: corrupt deflate data, truncated or concatenated members,
// bytes after the last member. An input that does not start with the gzip magic gets it prepended,
// so every input reaches the inflater rather than repeating the trace_binary target.
// TraceError is how the readers refuse bad input; anything else escaping is a finding.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tests/fuzz/fuzz_support.h"
#include "trace/byte_source.h"
#include "trace/et_reader.h"
#include "trace/trace_error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace etwire;
  std::vector<uint8_t> bytes;
  if (size < 2 || data[0] != 0x1F || data[1] != 0x8B) bytes = {0x1F, 0x8B};
  bytes.insert(bytes.end(), data, data + size);
  try {
    auto source = trace::make_et_reader(
        trace::ByteSource::open(fuzz::input_as_file(bytes.data(), bytes.size())));
    fuzz::read_all_nodes(*source);
  } catch (const trace::TraceError&) {
  }
  return 0;
}
