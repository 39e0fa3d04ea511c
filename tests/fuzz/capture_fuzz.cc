// A lab port's capture file, as `etwire replay` and `etwire calibrate` read it: opened through
// libwiretap, each frame parsed as RoCEv2 or PFC and addressed to one of two ports (10.0.0.1 and
// 10.0.1.1), then the file read to its end for the inbound frames and its statistics. A file that
// cannot be read is refused with CaptureReadError; any other exception escaping is a finding.
#include <cstddef>
#include <cstdint>

#include "nic/capture/capture_reader.h"
#include "runner/captured_port_frames.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

etwire::runner::PortsByAddress two_ports() {
  etwire::runner::PortsByAddress ports;
  for (uint8_t port = 0; port < 2; ++port) {
    std::array<uint8_t, 16> ip{};
    ip[0] = 10;
    ip[2] = port;
    ip[3] = 1;
    ports.emplace(etwire::runner::address_key(4, ip), port);
  }
  return ports;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace etwire;
  static const runner::PortsByAddress ports = two_ports();
  try {
    runner::CapturedPortFrames frames(fuzz::input_as_file(data, size), 0, config::PortQos{}, ports);
    twin::SentFrame frame;
    // A cap on frames, so that no input runs long.
    for (int read = 0; read < 100'000 && frames.next(frame); ++read) {
    }
    frames.finish();
    volatile uint64_t seen = frames.received().data_frames + frames.not_replayed();
    (void)seen;
  } catch (const nic::capture::CaptureReadError&) {
  }
  return 0;
}
