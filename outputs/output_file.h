// How a results file reaches the disk. A file written once the run is over (summary.json,
// collectives.csv, qps.csv, report.html) goes to a temporary file beside it and is renamed into
// place only when all of it is written: a full disk or a crash leaves the previous file or none,
// never a truncated one (unless the path names a device or a FIFO, such as /dev/stdout: that is
// written through). A symbolic link where a results file goes is replaced by the file, never
// written through, so a link planted in a results directory cannot redirect a write elsewhere;
// the temporary file is always a new file (O_EXCL, O_NOFOLLOW). A file streamed while the run goes
// (flows.csv, ports.csv, queues.csv) is written in place, so that it can be followed live, in whole
// lines: a write error cuts it back to its last whole line, and is reported when the file is
// closed, at the end of the run. Errors are std::runtime_error("<path>: <reason>").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace etwire::outputs {

// Writes `text` as the whole of `path`, through a temporary file renamed into place.
void write_file_atomically(const std::string& path, std::string_view text);

// A results file written through a buffer: lines collect in it and go out about every MiB, so
// appending costs no system call and, once the buffer has its full size, no allocation.
class StreamedFile {
 public:
  enum class Mode {
    kInPlace,         // written at `path` as the buffer fills; readable while it grows
    kReplaceAtClose,  // written to a temporary file beside `path`, renamed over it by close();
                      // in place where `path` is not a regular file
  };

  // Creates (truncates) `path`, or in kReplaceAtClose its temporary file; throws when it cannot.
  explicit StreamedFile(std::string path, Mode mode = Mode::kInPlace);
  // In place: flushes and closes, errors swallowed since a destructor must not throw (close()
  // reports them). kReplaceAtClose without close(): the temporary file is removed and `path` is
  // left as it was, since whoever was writing it gave up.
  ~StreamedFile();
  StreamedFile(const StreamedFile&) = delete;
  StreamedFile& operator=(const StreamedFile&) = delete;

  // Where the next line goes; call appended() after writing it, whole. Throws after close().
  std::string& buffer();
  void appended();
  // Writes every buffered line. A write error does not throw here: it comes in the middle of a
  // run, which should still end and write its other results. The file keeps the whole lines
  // written before it, nothing more is written, and close() throws it.
  void flush();
  // Flushes and closes the file (and renames it into place); throws the first write error.
  void close();
  const std::string& path() const { return path_; }

 private:
  void fail_write(int error_number, size_t written);

  std::string path_;
  Mode mode_;
  std::string temporary_;  // kReplaceAtClose: where the bytes go until close()
  int fd_ = -1;
  std::string buffer_;
  uint64_t bytes_written_ = 0;
  uint64_t lines_written_ = 0;
  uint64_t lines_lost_ = 0;
  int error_number_ = 0;  // the first write error, kept for close()
};

}  // namespace etwire::outputs
