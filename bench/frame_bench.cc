// Frame crafting on one core: how many RoCEv2 WRITE MIDDLE frames per second the codec writes
// from a connection's template (MiddleFrameTemplate, the DPDK port's steady state), when the
// payload is already in the transmit buffer (write_around_payload, every other data frame),
// when it copies the payload too (write), and when the ICRC is computed the obvious way, a CRC
// pass over the whole frame. Also the receive side (parse, payload equal to the pattern).
//
//   bench_frame [--seconds S] [--ring N] [--rounds R]
//
// Defaults: 0.5 s per measurement, a ring of 256 buffers (about 1 MB at 4096 B, as a NIC's
// transmit ring would cycle), best of 3 rounds. IPv4, untagged, PSN advancing each frame.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "nic/frame/frame_reader.h"
#include "nic/frame/frame_writer.h"
#include "nic/frame/icrc.h"
#include "nic/frame/middle_frame_template.h"
#include "nic/frame/payload_pattern.h"
#include "nic/frame_size.h"
#include "nic/packet.h"

namespace {

using namespace etwire;

struct Options {
  double seconds = 0.5;
  size_t ring = 256;
  int rounds = 3;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::puts("bench_frame [--seconds S] [--ring N] [--rounds R]");
      std::exit(0);
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "bench_frame: %s needs a value\n", flag.c_str());
      std::exit(2);
    }
    const char* value = argv[++i];
    if (flag == "--seconds") {
      options.seconds = std::max(0.01, std::atof(value));
    } else if (flag == "--ring") {
      options.ring = std::max<size_t>(1, std::strtoull(value, nullptr, 10));
    } else if (flag == "--rounds") {
      options.rounds = std::max(1, std::atoi(value));
    } else {
      std::fprintf(stderr, "bench_frame: unknown flag %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return options;
}

// Runs `one(buffer_index, sequence)` over the ring until `seconds` have passed; frames per second.
// The returned sum of what `one` returns keeps the compiler from dropping the work.
template <typename One>
double frames_per_second(double seconds, size_t ring, const One& one, uint64_t& sink) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  uint64_t frames = 0;
  uint32_t sequence = 0;
  double elapsed = 0;
  do {
    for (size_t b = 0; b < ring; ++b) sink += one(b, sequence++);
    frames += ring;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < seconds);
  return static_cast<double>(frames) / elapsed;
}

struct Row {
  std::string method;
  uint32_t payload;
  double fps;
  uint32_t frame_bytes;
};

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  frame::FrameAddresses addresses;
  addresses.src_mac = {0x02, 0, 0, 0, 0, 1};
  addresses.dst_mac = {0x02, 0, 0, 0, 0, 2};
  addresses.src_ip = {10, 0, 0, 1};
  addresses.dst_ip = {10, 0, 0, 2};

  std::vector<Row> rows;
  uint64_t sink = 0;
  for (uint32_t payload : {1024u, 4096u}) {
    const frame::PayloadPattern pattern(payload, payload);
    const frame::FrameWriter writer(pattern);
    frame::FrameReader reader(pattern);
    nic::Packet packet;
    packet.opcode = nic::opcode::kWriteMiddle;
    packet.dscp = 26;
    packet.ecn = nic::ecn::kEct0;
    packet.udp_source_port = 0xC000;
    packet.dest_qpn = 0x123;
    packet.payload_bytes = payload;
    packet.wire_bytes = nic::wire_bytes(packet, {});
    const uint32_t headers = frame::FrameWriter::header_bytes(packet, 4, false);
    const uint32_t length = nic::frame_bytes(packet, {}) - nic::kFcsBytes;
    // Room in front of each frame for the template's fixed-size header block.
    const size_t lead = frame::MiddleFrameTemplate::kMaxHeaderBytes;
    const size_t stride = (lead + length + 63) / 64 * 64;
    std::vector<uint8_t> storage(stride * options.ring + 2 * stride);
    uint8_t* base =
        storage.data() + stride - reinterpret_cast<uintptr_t>(storage.data() + stride) % 64;
    auto buffer = [&](size_t b) { return base + b * stride; };
    for (size_t b = 0; b < options.ring; ++b)
      std::memcpy(buffer(b) + headers, pattern.bytes(), payload);

    const auto around = [&](size_t b, uint32_t sequence) {
      nic::Packet p = packet;
      p.psn = sequence & nic::kPsnMask;
      return writer.write_around_payload(p, addresses, buffer(b));
    };
    // The DPDK port's steady state: the connection's MIDDLE template (headers copied, ICRC from
    // the PSN word's four table lookups).
    const frame::PsnWordShift psn_shift(pattern, payload);
    std::vector<uint8_t> scratch(stride);
    frame::MiddleFrameTemplate middle;
    middle.build(writer, psn_shift, packet, packet.dest_qpn, addresses, scratch.data());
    const auto templated = [&](size_t b, uint32_t sequence) {
      nic::Packet p = packet;
      p.psn = sequence & nic::kPsnMask;
      return middle.write(p, buffer(b) + headers);
    };
    const auto copy = [&](size_t b, uint32_t sequence) {
      nic::Packet p = packet;
      p.psn = sequence & nic::kPsnMask;
      return writer.write(p, addresses, buffer(b), stride);
    };
    // Headers in place, then the ICRC the obvious way: the masked headers and every payload byte
    // through the slicing-by-8 CRC.
    const auto full_crc = [&](size_t b, uint32_t sequence) {
      nic::Packet p = packet;
      p.psn = sequence & nic::kPsnMask;
      uint8_t* frame = buffer(b);
      const size_t written = writer.write_around_payload(p, addresses, frame);
      uint8_t masked[128];
      const size_t covered_headers = headers - nic::kEthernetHeaderBytes;
      std::memcpy(masked, frame + nic::kEthernetHeaderBytes, covered_headers);
      frame::mask_icrc_fields(masked, covered_headers, 4);
      uint32_t reg = frame::crc32_update(frame::kIcrcSeed, masked, covered_headers);
      reg = frame::crc32_update(reg, frame + headers, payload);
      frame::store_icrc(frame + headers + payload, frame::icrc_from_register(reg));
      return written;
    };
    const auto reference = [&](size_t b, uint32_t sequence) {
      nic::Packet p = packet;
      p.psn = sequence & nic::kPsnMask;
      uint8_t* frame = buffer(b);
      const size_t written = writer.write_around_payload(p, addresses, frame);
      const size_t covered = written - nic::kEthernetHeaderBytes - nic::kIcrcBytes;
      frame::store_icrc(frame + nic::kEthernetHeaderBytes + covered,
                        frame::icrc(frame + nic::kEthernetHeaderBytes, covered, 4));
      return written;
    };
    const auto receive = [&](size_t b, uint32_t) {
      frame::ParsedFrame parsed;
      return static_cast<size_t>(reader.parse(buffer(b), length, parsed)) + parsed.packet.psn;
    };

    const auto measure = [&](const char* name, const auto& one) {
      double best = 0;
      for (int r = 0; r < options.rounds; ++r) {
        best = std::max(best, frames_per_second(options.seconds, options.ring, one, sink));
      }
      rows.push_back({name, payload, best, length});
    };
    measure("MiddleFrameTemplate::write", templated);
    measure("write_around_payload", around);
    measure("write (payload copy)", copy);
    measure("headers + full-frame CRC", full_crc);
    measure("headers + reference icrc()", reference);
    // Parses what the writer left in the ring: valid frames, payload equal to the pattern.
    frames_per_second(0.01, options.ring, around, sink);
    measure("parse (ICRC checked)", receive);
    const uint64_t rejected = reader.counters().bad_icrc + reader.counters().bad_header +
                              reader.counters().truncated + reader.counters().not_roce +
                              reader.counters().unknown_opcode;
    if (rejected != 0) {
      std::fprintf(stderr, "bench_frame: the reader rejected %llu frames\n",
                   static_cast<unsigned long long>(rejected));
      return 1;
    }
  }

  std::printf("RoCEv2 WRITE MIDDLE, IPv4 untagged, one core, ring of %zu buffers, best of %d\n",
              options.ring, options.rounds);
  std::printf("%-28s %8s %8s %10s %10s %12s\n", "method", "payload", "frame", "Mpps", "ns/frame",
              "Gb/s frames");
  for (const Row& row : rows) {
    std::printf("%-28s %8u %8u %10.2f %10.1f %12.1f\n", row.method.c_str(), row.payload,
                row.frame_bytes, row.fps / 1e6, 1e9 / row.fps,
                row.fps * static_cast<double>(row.frame_bytes) * 8 / 1e9);
  }
  std::printf("(checksum %llu)\n", static_cast<unsigned long long>(sink & 0xFFFF));
  return 0;
}
