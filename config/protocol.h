// The shape NCCL's protocols give a collective's traffic (docs/collectives.md, "Protocols"):
// bytes on the wire per byte of data, the message each step moves, and how many full messages a
// connection's buffer holds in flight before the receiver's clear-to-send credits stop it.
//  - Simple: the data as it is, in slices of `slice_slots` of the buffer's `slots` steps.
//  - LL: 16-byte lines of 8 data bytes and their flags, one step per message.
//  - LL128: 128-byte lines of 120 data bytes and a flag word, one step per message.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace etwire::config {

enum class Protocol : uint8_t { kSimple = 0, kLl = 1, kLl128 = 2 };
inline constexpr int kProtocolCount = 3;

// What collectives.protocol may say: a protocol, or `auto` (the tuner's per collective).
enum class ProtocolChoice : uint8_t { kSimple = 0, kLl = 1, kLl128 = 2, kAuto = 3 };

struct ProtocolConfig {
  Protocol protocol = Protocol::kSimple;
  bool automatic = false;  // `auto`: per collective, as NCCL's tuner would pick (protocol unused)
  // Per protocol, one channel connection's receive buffer (NCCL_BUFFSIZE, NCCL_LL_BUFFSIZE,
  // NCCL_LL128_BUFFSIZE and their defaults): Simple 4 MiB; LL 8 lines x 512 threads x 8 steps x
  // 16 bytes; LL128 120 words x 640 threads x 8 steps x 8 bytes.
  std::array<uint64_t, kProtocolCount> buffer_bytes{4ull << 20, 524'288, 4'915'200};
  uint32_t slots = 8;        // steps a buffer is cut into (NCCL_STEPS)
  uint32_t slice_slots = 2;  // Simple: steps one message carries (a ring's slice)

  uint64_t buffer(Protocol p) const { return buffer_bytes[static_cast<size_t>(p)]; }
  // Steps one message carries: Simple's slice, one for LL and LL128.
  uint32_t message_slots(Protocol p) const { return p == Protocol::kSimple ? slice_slots : 1; }
  // Bytes on the wire of one full message.
  uint64_t message_wire_bytes(Protocol p) const { return buffer(p) / slots * message_slots(p); }
  // Data bytes of one full message: its wire bytes less the protocol's flags.
  uint64_t message_data_bytes(Protocol p) const;
  // Full messages a connection's buffer holds: sent and not yet acknowledged. (The run counts
  // the bytes in flight, so shorter messages fit more.)
  uint32_t window(Protocol p) const { return slots / message_slots(p); }
};

// Data bytes and flags of one line of `p` (Simple: the data is not cut into lines).
struct ProtocolLine {
  uint32_t bytes;
  uint32_t data;
};
ProtocolLine protocol_line(Protocol p);

// Bytes on the wire of a message of `data` bytes under `p`: whole lines.
uint64_t protocol_wire_bytes(Protocol p, uint64_t data);

}  // namespace etwire::config
