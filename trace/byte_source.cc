#include "trace/byte_source.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "trace/trace_error.h"

namespace etwire::trace {

namespace {

// Large enough that a read() or inflate() call moves many records at once.
constexpr size_t kBufferBytes = size_t{1} << 20;
constexpr size_t kMinBufferBytes = size_t{4} << 10;
// Below this much free space after the unread bytes, they are slid to the front before reading.
constexpr size_t kMinReadBytes = size_t{64} << 10;
constexpr size_t kInputBytes = size_t{256} << 10;
// Traces compress about 4 to 10 times; a first guess, the buffer grows when it is wrong.
constexpr uint64_t kExpectedInflation = 8;

}  // namespace

struct ByteSource::Inflater {
  z_stream stream{};
  bool initialised = false;
  bool input_eof = false;
  bool finished = false;
  std::vector<uint8_t> input;

  ~Inflater() {
    if (initialised) inflateEnd(&stream);
  }
};

ByteSource::ByteSource(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

ByteSource::~ByteSource() {
  if (fd_ >= 0) ::close(fd_);
}

std::unique_ptr<ByteSource> ByteSource::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw TraceError({path, {}, {}},
                     fmt::format("cannot open trace file: {}", std::strerror(errno)));
  }
  std::unique_ptr<ByteSource> src(new ByteSource(path, fd));
  struct stat st {};
  if (fstat(fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) src->fail("cannot read trace file: it is a directory");
    if (S_ISREG(st.st_mode)) src->file_size_ = static_cast<uint64_t>(st.st_size);
  }

  // Small files (most rank files are) get a buffer their size, not a full megabyte.
  size_t initial = kBufferBytes;
  if (src->file_size_) {
    initial = static_cast<size_t>(
        std::clamp<uint64_t>(*src->file_size_ + 1, kMinBufferBytes, kBufferBytes));
  }
  src->buffer_.resize(initial);
  // The first two raw bytes decide between plain and gzip.
  while (src->end_ < 2) {
    size_t got = src->read_raw(src->buffer_.data() + src->end_, src->buffer_.size() - src->end_);
    if (got == 0) break;
    src->end_ += got;
  }
  if (src->end_ >= 2 && src->buffer_[0] == 0x1f && src->buffer_[1] == 0x8b) {
    // Sized by the file as well: a small member inflates into a small buffer, which doubles as
    // data actually arrives (make_room), instead of a fresh megabyte zeroed for every small file.
    size_t input_bytes = kInputBytes;
    size_t output_bytes = kBufferBytes;
    if (src->file_size_) {
      input_bytes =
          static_cast<size_t>(std::clamp<uint64_t>(*src->file_size_, kMinBufferBytes, kInputBytes));
      output_bytes = static_cast<size_t>(std::clamp<uint64_t>(*src->file_size_ * kExpectedInflation,
                                                              kMinBufferBytes, kBufferBytes));
    }
    auto inflater = std::make_unique<Inflater>();
    inflater->input.resize(std::max(input_bytes, src->end_));
    std::memcpy(inflater->input.data(), src->buffer_.data(), src->end_);
    inflater->stream.next_in = inflater->input.data();
    inflater->stream.avail_in = static_cast<uInt>(src->end_);
    // 16 + window bits: accept the gzip wrapper only (a zlib or raw deflate stream is not a trace).
    if (inflateInit2(&inflater->stream, 16 + MAX_WBITS) != Z_OK) {
      src->fail("cannot initialise zlib to read a gzip trace");
    }
    inflater->initialised = true;
    src->inflater_ = std::move(inflater);
    src->end_ = 0;
    src->buffer_.resize(output_bytes);
  }
  return src;
}

std::optional<uint64_t> ByteSource::remaining_bound() const {
  if (inflater_ || !file_size_) return std::nullopt;
  if (eof_) return available();
  // A file that grew while being read makes the stat size stale; then nothing is known.
  if (raw_offset_ > *file_size_) return std::nullopt;
  return available() + (*file_size_ - raw_offset_);
}

size_t ByteSource::fill_slow(size_t n) {
  while (available() < n && !eof_) {
    make_room();
    uint8_t* dst = buffer_.data() + end_;
    size_t capacity = buffer_.size() - end_;
    size_t got = inflater_ ? inflate_some(dst, capacity) : read_raw(dst, capacity);
    if (got == 0) eof_ = true;
    end_ += got;
  }
  return available();
}

void ByteSource::make_room() {
  // Slide the unread bytes to the front once the space after them gets short. Grow only when the
  // buffer is full of unread bytes (one request larger than the buffer), doubling as data actually
  // arrives, so a bogus huge request cannot allocate more than the stream really holds.
  if (begin_ > 0 && buffer_.size() - end_ < kMinReadBytes) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, available());
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
}

size_t ByteSource::read_raw(uint8_t* dst, size_t capacity) {
  while (true) {
    ssize_t got = ::read(fd_, dst, capacity);
    if (got >= 0) {
      raw_offset_ += static_cast<uint64_t>(got);
      return static_cast<size_t>(got);
    }
    if (errno != EINTR) fail(fmt::format("read error: {}", std::strerror(errno)));
  }
}

void ByteSource::refill_input(size_t n) {
  z_stream& zs = inflater_->stream;
  std::vector<uint8_t>& input = inflater_->input;
  while (zs.avail_in < n && !inflater_->input_eof) {
    if (zs.avail_in > 0 && zs.next_in != input.data()) {
      std::memmove(input.data(), zs.next_in, zs.avail_in);
    }
    zs.next_in = input.data();
    size_t got = read_raw(input.data() + zs.avail_in, input.size() - zs.avail_in);
    if (got == 0) inflater_->input_eof = true;
    zs.avail_in += static_cast<uInt>(got);
  }
}

size_t ByteSource::inflate_some(uint8_t* dst, size_t capacity) {
  Inflater& inf = *inflater_;
  if (inf.finished) return 0;
  z_stream& zs = inf.stream;
  auto out_capacity = static_cast<uInt>(std::min<size_t>(capacity, UINT_MAX));
  zs.next_out = dst;
  zs.avail_out = out_capacity;
  while (zs.avail_out == out_capacity) {
    refill_input(1);
    if (zs.avail_in == 0) {
      fail("gzip stream is truncated: the file ends inside the compressed data");
    }
    int rc = inflate(&zs, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      if (!start_next_member()) {
        inf.finished = true;
        break;
      }
      continue;
    }
    // Z_BUF_ERROR only means "no progress this call"; the loop refills or reports truncation.
    if (rc == Z_OK || rc == Z_BUF_ERROR) continue;
    fail(fmt::format("gzip data is corrupt: {}", zs.msg != nullptr ? zs.msg : zError(rc)));
  }
  return out_capacity - zs.avail_out;
}

bool ByteSource::start_next_member() {
  refill_input(2);
  z_stream& zs = inflater_->stream;
  if (zs.avail_in == 0) return false;
  if (zs.avail_in >= 2 && zs.next_in[0] == 0x1f && zs.next_in[1] == 0x8b) {
    inflateReset(&zs);
    return true;
  }
  fail(fmt::format("unexpected bytes after the end of the gzip stream (file offset {})",
                   raw_offset_ - zs.avail_in));
}

void ByteSource::fail(const std::string& problem) const {
  throw TraceError({path_, {}, {}}, problem);
}

}  // namespace etwire::trace
