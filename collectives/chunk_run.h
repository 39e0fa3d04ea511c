// A run of consecutive pipelined chunks that one operation covers, and the rule that gives each
// chunk's bytes without storing them.
//
// Chunks cut a range with Partition, so they come in at most two lengths: the first `length mod
// chunks` are one byte longer than the rest. Within either group every chunk has the same length
// and starts a fixed distance after the previous one, so an algorithm that does the same thing to
// every chunk (take block b of it, take half d of it) produces ranges that are equally long and
// evenly spaced too. A run stores the first chunk's range and that spacing; chunk k's range is
// first.offset + (k - chunk_begin) x stride. This is exact, not an approximation: runs are split
// wherever the chunk length changes.
#pragma once

#include <array>
#include <cstdint>

#include "collectives/partition.h"

namespace etwire::collectives {

struct ChunkRun {
  uint32_t chunk_begin = 0;
  uint32_t chunk_count = 1;  // at least 1
  ByteRange first;           // the bytes of chunk chunk_begin
  uint64_t stride = 0;       // distance from one chunk's offset to the next one's

  static ChunkRun single(uint32_t chunk, ByteRange range) { return {chunk, 1, range, 0}; }

  uint32_t chunk_end() const { return chunk_begin + chunk_count; }
  bool covers(uint32_t chunk) const { return chunk >= chunk_begin && chunk < chunk_end(); }
  // The bytes of chunk `chunk` (which the run must cover).
  ByteRange range(uint32_t chunk) const {
    return {first.offset + static_cast<uint64_t>(chunk - chunk_begin) * stride, first.length};
  }
  // The same part of every chunk: part i of each chunk's range cut by `parts` (a Partition of
  // first.length, precomputed by callers that avoid a division per operation). Every chunk of a
  // run is equally long, so the part lies at the same place in each and the stride is unchanged.
  ChunkRun part(const Partition& parts, uint64_t i) const {
    return {chunk_begin, chunk_count, parts.range_at(first.offset, i), stride};
  }
  ChunkRun part(uint64_t parts, uint64_t i) const {
    return {chunk_begin, chunk_count, Partition::piece(first, parts, i), stride};
  }
};

// A few chunk runs in chunk order: the chunks of one range (at most two runs, see `split`), or
// the same part of each of them. Fixed capacity, so algorithms build them on the stack.
class ChunkRuns {
 public:
  ChunkRuns() = default;
  // `whole` cut into `chunks` chunks by Partition, as at most two runs: the longer chunks, then
  // the shorter ones. When the chunks divide `whole` evenly there is one run.
  static ChunkRuns split(ByteRange whole, uint32_t chunks) {
    ChunkRuns out;
    if (chunks <= 1) {  // the common case, without a division
      out.push_back({0, 1, whole, whole.length});
      return out;
    }
    const uint32_t parts = chunks;
    const uint64_t base = whole.length / parts;
    const auto longer = static_cast<uint32_t>(whole.length % parts);
    if (longer > 0) out.push_back({0, longer, {whole.offset, base + 1}, base + 1});
    if (longer < parts) {
      out.push_back({longer, parts - longer, {whole.offset + longer * (base + 1), base}, base});
    }
    return out;
  }
  // Part i of every chunk, each chunk cut into `parts` by Partition.
  ChunkRuns part(uint64_t parts, uint64_t i) const {
    ChunkRuns out;
    for (const ChunkRun& run : *this) out.push_back(run.part(parts, i));
    return out;
  }
  // The same runs for a range that starts `offset` bytes later.
  ChunkRuns shifted(uint64_t offset) const {
    ChunkRuns out = *this;
    for (uint32_t r = 0; r < size_; ++r) out.runs_[r].first.offset += offset;
    return out;
  }

  void push_back(const ChunkRun& run) { runs_[size_++] = run; }  // holds at most two
  const ChunkRun* begin() const { return runs_.data(); }
  const ChunkRun* end() const { return runs_.data() + size_; }
  uint32_t size() const { return size_; }
  const ChunkRun& operator[](uint32_t i) const { return runs_[i]; }

 private:
  std::array<ChunkRun, 2> runs_{};
  uint32_t size_ = 0;
};

}  // namespace etwire::collectives
