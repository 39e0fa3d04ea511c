// Captured frames on their way from the thread that sends or receives them to the capture
// writer's thread: a bounded ring of fixed-size slots, one producer (the port's worker) and one
// consumer (the writer). Each slot holds a frame's first snap_length bytes and its header, so
// pushing is one copy and two stores, with no allocation and no lock; what to do when the ring is
// full is the producer's choice (a wall-clock port drops and counts it here, the fabric twin waits
// for room, since its virtual time does not run away). The count travels with the ring so that the
// writer can put each file's losses in the file itself. A ring's size is a byte budget rather than
// a frame count (slots_within), so that headers-only captures hold many more frames than whole ones
// in the same memory.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "clock/time.h"

namespace etwire::nic::capture {

// Which way a frame went through the port.
enum class Direction : uint8_t { kTransmit, kReceive };

struct CapturedFrame {
  clock::Nanos time = 0;  // on the data plane's clock: when it started out or arrived
  uint32_t length = 0;    // the frame's bytes on the wire, FCS excluded
  uint32_t captured = 0;  // bytes kept: min(length, snap_length)
  Direction direction = Direction::kTransmit;
  const uint8_t* bytes = nullptr;  // valid until the consumer returns
};

class FrameCaptureRing {
 public:
  // Fewest and most slots slots_within gives. Fewer than 64 would not hold one burst of a port's
  // frames; past 2^18 a writer stall long enough to fill the ring means the writer cannot keep up
  // at all, and more memory would only delay the loss.
  static constexpr uint32_t kMinSlots = 64;
  static constexpr uint32_t kMaxSlots = uint32_t{1} << 18;

  // The budget of a ring whose producer cannot wait for the writer (a wall-clock port): 48 MiB
  // hold 8192 whole frames of the default PMTU (4,227 bytes and a slot's header), the ring every
  // such port had before it was sized by bytes, and 2^18 frames of 128 bytes.
  static constexpr uint64_t kWallClockBytes = uint64_t{48} << 20;

  // Bytes a slot takes: a frame's first `snap_length` bytes and its header.
  static constexpr uint64_t slot_bytes(uint32_t snap_length) {
    return uint64_t{snap_length} + sizeof(Header);
  }
  // The most slots, a power of two, whose slot_bytes(snap_length) fit in `budget_bytes`, at most
  // `max_slots` (a power of two) and at least kMinSlots (or `max_slots` if that is fewer): a
  // ring takes at most the budget unless kMinSlots slots of `snap_length` bytes exceed it.
  static uint32_t slots_within(uint64_t budget_bytes, uint32_t snap_length,
                               uint32_t max_slots = kMaxSlots);

  // `slots` must be a power of two; each slot keeps up to `snap_length` bytes. Throws
  // std::invalid_argument otherwise.
  FrameCaptureRing(uint32_t slots, uint32_t snap_length);
  FrameCaptureRing(const FrameCaptureRing&) = delete;
  FrameCaptureRing& operator=(const FrameCaptureRing&) = delete;

  uint32_t snap_length() const { return snap_length_; }
  uint32_t slots() const { return static_cast<uint32_t>(mask_ + 1); }

  // Producer: copies the first snap_length bytes of the `available` at `frame` into the next
  // slot, for a frame of `length` bytes. False when the ring is full (nothing is taken).
  bool try_push(clock::Nanos time, Direction direction, const uint8_t* frame, uint32_t available,
                uint32_t length) {
    const uint64_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - head_seen_ > mask_) {
      head_seen_ = head_.load(std::memory_order_acquire);
      if (tail - head_seen_ > mask_) return false;
    }
    const size_t slot = tail & mask_;
    const uint32_t captured = available < snap_length_ ? available : snap_length_;
    std::memcpy(&bytes_[slot * snap_length_], frame, captured);
    headers_[slot] = {time, length, captured, direction};
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }

  // Producer: a frame it could not hand over (the ring was full). Only the producer writes the
  // count, so a relaxed load and store do: no read-modify-write on the hot path.
  void count_lost() {
    lost_.store(lost_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  // Any thread: the frames counted lost so far; exact once the producer has stopped.
  uint64_t lost() const { return lost_.load(std::memory_order_relaxed); }

  // Consumer: hands every frame pushed so far to `consume`, oldest first; returns how many.
  template <typename Consume>
  size_t drain(Consume&& consume) {
    const uint64_t head = head_.load(std::memory_order_relaxed);
    const uint64_t tail = tail_.load(std::memory_order_acquire);
    for (uint64_t i = head; i != tail; ++i) {
      const size_t slot = i & mask_;
      const Header& h = headers_[slot];
      consume(
          CapturedFrame{h.time, h.length, h.captured, h.direction, &bytes_[slot * snap_length_]});
    }
    head_.store(tail, std::memory_order_release);
    return static_cast<size_t>(tail - head);
  }

 private:
  struct Header {
    clock::Nanos time;
    uint32_t length;
    uint32_t captured;
    Direction direction;
  };

  std::unique_ptr<uint8_t[]> bytes_;
  std::unique_ptr<Header[]> headers_;
  uint64_t mask_;
  uint32_t snap_length_;
  alignas(64) std::atomic<uint64_t> tail_{0};  // producer's
  uint64_t head_seen_ = 0;                     // producer's copy of head_
  std::atomic<uint64_t> lost_{0};              // producer's
  alignas(64) std::atomic<uint64_t> head_{0};  // consumer's
};

}  // namespace etwire::nic::capture
