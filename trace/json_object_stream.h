// Splits a file of JSON objects written back to back ("{...}{...}", whitespace allowed between
// them) into the text of each object. The jsonizer dump is such a file: it is not one JSON
// document, so no JSON parser can read it whole. Reads incrementally and holds one object at a
// time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "trace/byte_source.h"

namespace etwire::trace {

// The largest object read: a node object of a jsonizer dump is well under a KiB, its metadata
// object little more; the cap keeps a runaway object from being held whole.
inline constexpr uint64_t kMaxJsonObjectBytes = uint64_t{64} << 20;

class JsonObjectStream {
 public:
  explicit JsonObjectStream(std::unique_ptr<ByteSource> bytes) : bytes_(std::move(bytes)) {}

  // Puts the text of the next object in `out` (reusing its buffer). Returns false at the end of the
  // file. Throws TraceError naming the file and object index for anything but whitespace between
  // objects, for an object cut off by the end of the file and for one larger than
  // kMaxJsonObjectBytes. Brackets are only counted here; the object's content is checked by
  // whoever parses it.
  bool next(std::string& out);

  // Index of the object the next call to next() returns (0-based).
  uint64_t next_index() const { return next_index_; }
  const std::string& path() const { return bytes_->path(); }

 private:
  size_t fill(size_t n);
  [[noreturn]] void fail(const std::string& problem) const;

  std::unique_ptr<ByteSource> bytes_;
  uint64_t next_index_ = 0;
};

}  // namespace etwire::trace
