// Writes the frame target's seed corpus: one frame of every opcode in every frame format (IPv4 and
// IPv6, tagged and untagged) at a few payload lengths, and PFC frames, each as written by
// etwire's own frame writer, one file per frame.
//
//   make_frame_seeds DIR
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "nic/frame/frame_writer.h"
#include "nic/frame/payload_pattern.h"
#include "nic/pfc_frame.h"
#include "tests/frame/frame_test_support.h"

int main(int argc, char** argv) {
  using namespace etwire;
  using namespace etwire::frame::testing;
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_frame_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  const frame::PayloadPattern pattern(kPmtu, kPmtu);
  const frame::FrameWriter writer(pattern);
  std::vector<uint8_t> buffer(kPmtu + 256);
  int written = 0;
  auto save = [&](const std::string& name, size_t length) {
    if (length == 0) return;
    std::ofstream out(dir + "/" + name, std::ios::binary);
    out.write(reinterpret_cast<const char*>(buffer.data()), static_cast<std::streamsize>(length));
    written += out ? 1 : 0;
  };
  for (const auto& format : all_formats()) {
    for (uint8_t op : all_opcodes()) {
      // Lengths around the pad counts and the 60-byte minimum, and one full-size payload.
      for (uint32_t payload : {0u, 1u, 3u, 64u, kPmtu}) {
        const auto packet = packet_for(op, payload, format);
        save("op" + std::to_string(op) + "_" + format.name() + "_" + std::to_string(payload),
             writer.write(packet, addresses_for(format), buffer.data(), buffer.size()));
      }
    }
  }
  for (uint8_t priority = 0; priority < 8; priority += 3) {
    save("pfc_" + std::to_string(priority),
         writer.write(nic::pfc_frame(0, 1, priority, 0xFFFF), {}, buffer.data(), buffer.size()));
  }
  std::printf("make_frame_seeds: %d frames in %s\n", written, dir.c_str());
  return written > 0 ? 0 : 1;
}
