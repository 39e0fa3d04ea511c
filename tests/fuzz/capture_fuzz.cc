// A capture file as `etwire replay` and `etwire calibrate` open a lab port's (CaptureReader,
// through libwiretap): every record read to the end, with its stamp, its direction and its bytes,
// then the file's statistics block. A file that cannot be read is refused with CaptureReadError;
// any other exception escaping is a finding. The frames' own bytes are the `frame` target's.
#include <cstddef>
#include <cstdint>

#include "nic/capture/capture_reader.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace etwire;
  try {
    nic::capture::CaptureReader reader(fuzz::input_as_file(data, size));
    nic::capture::CaptureRecord record;
    uint64_t sum = 0;
    // A cap on records, so that no input runs long.
    for (int read = 0; read < 100'000 && reader.next(record); ++read) {
      sum += static_cast<uint64_t>(record.stamp) + record.wire_length +
             (record.direction ? 1 + static_cast<uint64_t>(*record.direction) : 0);
      for (uint8_t byte : record.frame) sum += byte;
    }
    if (const auto stats = reader.statistics()) sum += stats->received + stats->delivered;
    volatile uint64_t seen = sum;
    (void)seen;
  } catch (const nic::capture::CaptureReadError&) {
  }
  return 0;
}
