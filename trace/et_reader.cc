#include "trace/et_reader.h"

#include <fmt/format.h>

#include <optional>

#include "trace/node_semantics.h"
#include "trace/trace_error.h"
#include "trace/wire_cursor.h"
#include "trace/wire_decoder.h"

namespace etwire::trace {

namespace {

// Writers emit the record length with a 32-bit varint writer: at most 5 bytes.
constexpr size_t kMaxPrefixBytes = 5;

class EtReader final : public NodeSource {
 public:
  explicit EtReader(std::unique_ptr<ByteSource> bytes) : bytes_(std::move(bytes)) {
    const uint8_t* body = nullptr;
    size_t size = 0;
    if (!next_record(body, size)) fail(0, "empty file: no GlobalMetadata record");
    try {
      wire::decode_metadata(body, size, metadata_);
    } catch (const wire::WireError& e) {
      fail(0, fmt::format("undecodable GlobalMetadata: {}", e.what()));
    }
  }

  bool next(TraceNode& out) override {
    const uint8_t* body = nullptr;
    size_t size = 0;
    if (!next_record(body, size)) return false;
    out.reset();
    out.record_index = next_index_ - 1;
    wire::NodeDecodeState state;
    try {
      wire::decode_node(body, size, out, state);
    } catch (const wire::WireError& e) {
      fail(out.record_index, fmt::format("undecodable Node: {}", e.what()),
           state.id_seen ? std::optional<uint64_t>(out.id) : std::nullopt);
    }
    apply_node_semantics(out, state.raw_type, path());
    return true;
  }

  const TraceMetadata& metadata() const override { return metadata_; }
  const std::string& path() const override { return bytes_->path(); }

 private:
  [[noreturn]] void fail(uint64_t record, const std::string& problem,
                         std::optional<uint64_t> node_id = std::nullopt) const {
    throw TraceError({path(), record, node_id}, problem);
  }

  // ByteSource errors (I/O, gzip) know only the file; add the record they interrupted.
  size_t fill(size_t n) {
    try {
      return bytes_->fill(n);
    } catch (const TraceError& e) {
      fail(next_index_, e.problem());
    }
  }

  // Frames the next record: on success `body` points at `size` bytes that stay valid until the next
  // call. Returns false at a clean end of file (right after a complete record).
  bool next_record(const uint8_t*& body, size_t& size) {
    const uint64_t index = next_index_;
    size_t available = fill(kMaxPrefixBytes);
    if (available == 0) return false;
    const uint8_t* p = bytes_->data();
    uint64_t length = 0;
    size_t prefix = 0;
    while (true) {
      if (prefix == available) {
        fail(index, fmt::format("file ends inside the length prefix of record {}: file truncated?",
                                index));
      }
      if (prefix == kMaxPrefixBytes) {
        fail(index,
             "record length varint is longer than 5 bytes: corrupt file or not a "
             "Chakra trace");
      }
      uint8_t byte = p[prefix];
      length |= static_cast<uint64_t>(byte & 0x7f) << (7 * prefix);
      ++prefix;
      if (byte < 0x80) break;
    }
    if (length > kMaxRecordBytes) {
      fail(index, fmt::format("record length {} exceeds the {}-byte limit of a protobuf message: "
                              "corrupt file or not a Chakra trace",
                              length, kMaxRecordBytes));
    }
    bytes_->consume(prefix);
    if (bytes_->available() < length) {
      // Checked against the file size first so that a bogus length never makes us buffer the file.
      std::optional<uint64_t> bound = bytes_->remaining_bound();
      if (bound && length > *bound) truncated(index, length, *bound);
      available = fill(length);
      if (available < length) truncated(index, length, available);
    }
    body = bytes_->data();
    size = static_cast<size_t>(length);
    bytes_->consume(size);
    ++next_index_;
    return true;
  }

  [[noreturn]] void truncated(uint64_t index, uint64_t length, uint64_t remain) const {
    fail(index, fmt::format("record {} claims {} bytes but only {} remain: file truncated?", index,
                            length, remain));
  }

  std::unique_ptr<ByteSource> bytes_;
  TraceMetadata metadata_;
  uint64_t next_index_ = 0;
};

}  // namespace

std::unique_ptr<NodeSource> make_et_reader(std::unique_ptr<ByteSource> bytes) {
  return std::make_unique<EtReader>(std::move(bytes));
}

}  // namespace etwire::trace
