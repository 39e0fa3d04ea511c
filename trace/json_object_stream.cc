#include "trace/json_object_stream.h"

#include <fmt/format.h>

#include "common/bounded_file.h"
#include "trace/trace_error.h"

namespace etwire::trace {

namespace {

bool is_json_space(uint8_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

}  // namespace

size_t JsonObjectStream::fill(size_t n) {
  try {
    return bytes_->fill(n);
  } catch (const TraceError& e) {
    fail(e.problem());
  }
}

void JsonObjectStream::fail(const std::string& problem) const {
  throw TraceError({path(), next_index_, {}}, problem);
}

bool JsonObjectStream::next(std::string& out) {
  out.clear();
  while (true) {
    if (fill(1) == 0) return false;
    uint8_t c = *bytes_->data();
    if (c == '{') break;
    if (!is_json_space(c)) {
      fail(fmt::format("expected '{{' to start object {} at byte {}, found byte {:#04x}",
                       next_index_, bytes_->position(), c));
    }
    bytes_->consume(1);
  }
  int64_t depth = 0;
  bool in_string = false;
  bool escaped = false;
  while (true) {
    size_t available = fill(1);
    if (available == 0) {
      fail(fmt::format("file ends inside object {}: file truncated?", next_index_));
    }
    const uint8_t* p = bytes_->data();
    for (size_t i = 0; i < available; ++i) {
      uint8_t c = p[i];
      if (in_string) {
        if (escaped) {
          escaped = false;
        } else if (c == '\\') {
          escaped = true;
        } else if (c == '"') {
          in_string = false;
        }
        continue;
      }
      if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if ((c == '}' || c == ']') && --depth == 0) {
        out.append(reinterpret_cast<const char*>(p), i + 1);
        bytes_->consume(i + 1);
        ++next_index_;
        return true;
      }
    }
    if (out.size() + available > kMaxJsonObjectBytes) {
      fail(fmt::format("object {} is {}", next_index_,
                       too_large_message(kMaxJsonObjectBytes, "one object of a JSON trace")));
    }
    out.append(reinterpret_cast<const char*>(p), available);
    bytes_->consume(available);
  }
}

}  // namespace etwire::trace
