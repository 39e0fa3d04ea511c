// The receive side's frame parser over arbitrary bytes, as a NIC hands them over. It reports
// every problem as a FrameStatus and must never read past the frame: ASan sees to that, since the
// frame is copied into a buffer of exactly its length.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "nic/frame/frame_reader.h"
#include "nic/frame/payload_pattern.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace etwire;
  // The pattern the emulator uses at a 4096-byte PMTU, built once: its tables are the slow part.
  static const frame::PayloadPattern pattern(4096, 4096);
  frame::FrameReader reader(pattern);
  const std::vector<uint8_t> frame(data, data + size);
  frame::ParsedFrame parsed;
  volatile auto status = reader.parse(frame.data(), frame.size(), parsed);
  (void)status;
  return 0;
}
