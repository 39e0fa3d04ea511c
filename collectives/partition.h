// Even splits of a byte count into parts: the first `total % parts` parts are one byte longer.
// Every algorithm cuts buffers with this one rule, so sizes that do not divide still cover every
// byte exactly once and the generator, the executor and the tests agree on where each piece lies.
#pragma once

#include <algorithm>
#include <cstdint>

namespace etwire::collectives {

struct ByteRange {
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t end() const { return offset + length; }
  bool empty() const { return length == 0; }
  friend bool operator==(const ByteRange&, const ByteRange&) = default;
};

class Partition {
 public:
  Partition(uint64_t total, uint64_t parts) : parts_(parts == 0 ? 1 : parts) {
    base_ = total / parts_;
    remainder_ = total % parts_;
  }
  uint64_t offset(uint64_t i) const { return i * base_ + std::min(i, remainder_); }
  uint64_t size(uint64_t i) const { return base_ + (i < remainder_ ? 1 : 0); }
  ByteRange range(uint64_t i) const { return {offset(i), size(i)}; }
  // Part i of the subrange `outer` split the same way.
  static ByteRange piece(ByteRange outer, uint64_t parts, uint64_t i) {
    if (parts == 1) return outer;
    Partition split(outer.length, parts);
    return {outer.offset + split.offset(i), split.size(i)};
  }
  // Part i of a range that starts at `offset` and is split by this partition.
  ByteRange range_at(uint64_t offset, uint64_t i) const {
    return {offset + this->offset(i), size(i)};
  }

 private:
  uint64_t parts_;
  uint64_t base_ = 0;
  uint64_t remainder_ = 0;
};

}  // namespace etwire::collectives
