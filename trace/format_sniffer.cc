#include "trace/format_sniffer.h"

#include <cstring>
#include <string_view>

#include "trace/feeder_json_reader.h"

namespace etwire::trace {

namespace {

bool is_json_space(int c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Random access into the not-yet-consumed bytes, buffering more as needed; -1 past the end.
class Peek {
 public:
  explicit Peek(ByteSource& bytes) : bytes_(bytes) {}
  // Past kMaxFeederJsonBytes reads as the end: no trace read as JSON is larger, and the bytes
  // looked at stay buffered, so an endless object must not be followed to its end.
  int operator[](size_t i) const {
    if (i >= kMaxFeederJsonBytes) return -1;
    return bytes_.fill(i + 1) > i ? bytes_.data()[i] : -1;
  }
  bool equals(size_t begin, std::string_view text) const {
    return bytes_.fill(begin + text.size()) >= begin + text.size() &&
           std::memcmp(bytes_.data() + begin, text.data(), text.size()) == 0;
  }

 private:
  ByteSource& bytes_;
};

size_t skip_space(const Peek& peek, size_t i) {
  while (is_json_space(peek[i])) ++i;
  return i;
}

// Index just past the closing quote of the string starting at `i` ('"'), or 0 if it never closes.
size_t skip_string(const Peek& peek, size_t i) {
  for (++i;; ++i) {
    int c = peek[i];
    if (c < 0) return 0;
    if (c == '\\') {
      ++i;
    } else if (c == '"') {
      return i + 1;
    }
  }
}

// Whether the object starting at `i` has `key` among its top-level keys. Stops at the key, so a
// feeder JSON is recognised after a few bytes however large its graph is.
bool object_has_key(const Peek& peek, size_t i, std::string_view key) {
  int depth = 0;
  while (true) {
    int c = peek[i];
    if (c < 0) return false;
    if (c == '"') {
      size_t end = skip_string(peek, i);
      if (end == 0) return false;
      if (depth == 1 && peek[skip_space(peek, end)] == ':' && end - i - 2 == key.size() &&
          peek.equals(i + 1, key)) {
        return true;
      }
      i = end;
      continue;
    }
    if (c == '{' || c == '[') ++depth;
    if ((c == '}' || c == ']') && --depth == 0) return false;
    ++i;
  }
}

// Whether the bytes at `start` are a JSON value other than an object: an array that opens on a
// value or closes at once, or a literal standing alone. A binary trace whose first record is 91
// bytes long starts with '[' too, but its GlobalMetadata follows, which is none of these.
bool other_json_value(const Peek& peek, size_t start) {
  if (peek[start] == '[') {
    const int next = peek[skip_space(peek, start + 1)];
    return next >= 0 && std::string_view("]{[\"-0123456789tfn").find(static_cast<char>(next)) !=
                            std::string_view::npos;
  }
  for (std::string_view literal : {"null", "true", "false"}) {
    if (peek.equals(start, literal)) {
      const int after = peek[start + literal.size()];
      return after < 0 || is_json_space(after);
    }
  }
  return false;
}

}  // namespace

TraceFormat sniff_trace_format(ByteSource& bytes) {
  if (bytes.is_gzip()) return TraceFormat::kBinary;
  Peek peek(bytes);
  size_t start = skip_space(peek, 0);
  // The feeder JSON reader says what the top level is instead of a binary reader's puzzlement.
  if (other_json_value(peek, start)) return TraceFormat::kFeederJson;
  if (peek[start] != '{') return TraceFormat::kBinary;
  size_t i = skip_space(peek, start + 1);
  if (peek[i] == '"') {
    size_t end = skip_string(peek, i);
    if (end == 0 || peek[skip_space(peek, end)] != ':') return TraceFormat::kBinary;
  } else if (peek[i] != '}') {
    return TraceFormat::kBinary;
  }
  return object_has_key(peek, start, "workload_graph") ? TraceFormat::kFeederJson
                                                       : TraceFormat::kJsonizerDump;
}

}  // namespace etwire::trace
