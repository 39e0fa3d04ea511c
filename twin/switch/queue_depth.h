// The depth of one switch queue over time: current, maximum and the time-weighted average. The
// average integrates depth x time (byte-nanoseconds) at every change, so it is exact whatever
// the sampling interval of whoever reads it, and costs two multiplications per enqueue/dequeue.
#pragma once

#include <algorithm>
#include <cstdint>

#include "clock/time.h"

namespace etwire::twin {

class QueueDepth {
 public:
  explicit QueueDepth(clock::Nanos start = 0) : start_(start), last_change_(start) {}

  void add(uint32_t bytes, clock::Nanos now) {
    advance(now);
    bytes_ += bytes;
    ++packets_;
    max_bytes_ = std::max(max_bytes_, bytes_);
  }

  void remove(uint32_t bytes, clock::Nanos now) {
    advance(now);
    bytes_ -= bytes;
    --packets_;
  }

  uint64_t bytes() const { return bytes_; }
  uint32_t packets() const { return packets_; }
  uint64_t max_bytes() const { return max_bytes_; }

  // Mean depth in bytes, weighted by time, from the queue's start to `now` (the current depth
  // when no time has passed).
  double average_bytes(clock::Nanos now) const {
    if (now <= start_) return static_cast<double>(bytes_);
    const unsigned __int128 total = byte_nanos_ + static_cast<unsigned __int128>(bytes_) *
                                                      static_cast<uint64_t>(now - last_change_);
    return static_cast<double>(total) / static_cast<double>(now - start_);
  }

 private:
  void advance(clock::Nanos now) {
    byte_nanos_ +=
        static_cast<unsigned __int128>(bytes_) * static_cast<uint64_t>(now - last_change_);
    last_change_ = now;
  }

  uint64_t bytes_ = 0;
  uint32_t packets_ = 0;
  uint64_t max_bytes_ = 0;
  // 128 bits: 32 MB held for an hour is 1.2e20 byte-ns, past 64 bits.
  unsigned __int128 byte_nanos_ = 0;
  clock::Nanos start_;
  clock::Nanos last_change_;
};

}  // namespace etwire::twin
