// A forward-only, buffered view of a trace file's bytes. gzip files (magic 1F 8B) are inflated on
// the fly, so readers see the same bytes either way. The file is read in chunks as the reader asks
// for more; it is never loaded whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace etwire::trace {

class ByteSource {
 public:
  // Opens `path` and looks at its first bytes to decide between plain and gzip. Throws TraceError
  // naming the file when it cannot be opened or read.
  static std::unique_ptr<ByteSource> open(const std::string& path);

  ~ByteSource();
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  const std::string& path() const { return path_; }
  bool is_gzip() const { return inflater_ != nullptr; }

  // Buffers at least `n` bytes at data() unless the stream ends first, and returns how many are
  // buffered (fewer than `n` only at the end of the stream). The buffer may move: a pointer from
  // data() is valid only until the next fill(). Throws TraceError (file only) on read errors and
  // on corrupt or truncated gzip data.
  size_t fill(size_t n) { return available() >= n ? available() : fill_slow(n); }
  const uint8_t* data() const { return buffer_.data() + begin_; }
  size_t available() const { return end_ - begin_; }
  // Drops `n` buffered bytes (n <= available()).
  void consume(size_t n) {
    begin_ += n;
    position_ += n;
  }
  // Offset of data() in the (decompressed) stream.
  uint64_t position() const { return position_; }
  // An upper bound on the bytes still to come (buffered ones included) when it is cheap to know:
  // plain regular files. Lets a reader reject an absurd record length without reading the rest of
  // the file into memory. nullopt for gzip streams and pipes.
  std::optional<uint64_t> remaining_bound() const;

 private:
  struct Inflater;

  ByteSource(std::string path, int fd);
  size_t fill_slow(size_t n);
  void make_room();
  // Reads raw file bytes; 0 at end of file.
  size_t read_raw(uint8_t* dst, size_t capacity);
  // Produces decompressed bytes; 0 at the end of the last gzip member.
  size_t inflate_some(uint8_t* dst, size_t capacity);
  // After a gzip member ends: true if another member follows (concatenated gzip files form one
  // stream), false at end of file. Throws on anything else after the member.
  bool start_next_member();
  // Makes at least `n` compressed bytes available to the inflater unless the file ends first.
  void refill_input(size_t n);
  [[noreturn]] void fail(const std::string& problem) const;

  std::string path_;
  int fd_ = -1;
  std::optional<uint64_t> file_size_;  // regular files only
  uint64_t raw_offset_ = 0;            // file bytes read so far
  std::vector<uint8_t> buffer_;
  size_t begin_ = 0;
  size_t end_ = 0;
  uint64_t position_ = 0;
  bool eof_ = false;
  std::unique_ptr<Inflater> inflater_;
};

}  // namespace etwire::trace
