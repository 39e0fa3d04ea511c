// Reads an input file whole (a configuration, a comm-group file, a results summary) with a cap on
// its size. Without one, an endless stream named as the file (/dev/zero, a FIFO fed forever)
// would never finish and would hold ever more memory.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace etwire {

// What went wrong, without the path: callers name the file (and the key or option that named it)
// their own way.
class InputFileError : public std::runtime_error {
 public:
  enum class Reason { kOpen, kRead, kTooLarge };
  InputFileError(Reason reason, int error_number, const std::string& problem)
      : std::runtime_error(problem), reason_(reason), error_number_(error_number) {}

  Reason reason() const { return reason_; }
  // errno of a failed open or read; 0 for kTooLarge and for a FIFO with no writer (kRead).
  int error_number() const { return error_number_; }

 private:
  Reason reason_;
  int error_number_;
};

// The bytes of `path`, at most `limit` of them. A regular file larger than `limit` is refused
// before anything is read; any other file (a device, a FIFO, a pipe) is read until its end or
// until it passes `limit`; a FIFO that no one holds open for writing is refused at once
// (kRead) rather than waited on. `kind` names the input in the limit's message ("a configuration
// file"). Throws InputFileError.
std::string read_bounded_file(const std::string& path, uint64_t limit, std::string_view kind);

// The message of an input past its cap, for readers that enforce their own: "larger than
// 64 MiB, the limit for <kind>".
std::string too_large_message(uint64_t limit, std::string_view kind);

}  // namespace etwire
