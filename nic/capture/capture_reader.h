// Reads a capture file back, frame by frame in file order: its time stamp, which way the frame
// went (pcapng's packet flags, as PcapngFile writes them) and its bytes. Read through Wireshark's
// libwiretap, so any file it knows opens (pcap, pcapng); a frame without direction flags has no
// direction.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include "clock/time.h"
#include "nic/capture/frame_capture_ring.h"

namespace etwire::nic::capture {

// A file that cannot be opened or read on: "<path>: <reason>" or "<path>: frame N: <reason>".
class CaptureReadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CaptureRecord {
  uint64_t number = 0;                 // 1 for the file's first frame
  clock::Nanos stamp = 0;              // nanoseconds since the Unix epoch
  std::optional<Direction> direction;  // none in a file without packet flags
  std::span<const uint8_t> frame;      // the bytes captured; valid until the next call of next()
  uint32_t wire_length = 0;            // the frame's length before a snap length cut it
};

class CaptureReader {
 public:
  // Throws CaptureReadError when `path` cannot be opened or is not a capture of Ethernet frames.
  explicit CaptureReader(const std::string& path);
  ~CaptureReader();
  CaptureReader(const CaptureReader&) = delete;
  CaptureReader& operator=(const CaptureReader&) = delete;

  // The next frame into `out`; false at the end of the file. Records that are not frames (a
  // statistics block, a comment) are passed over. Throws CaptureReadError naming the frame after
  // the last good one when the file is damaged or cut short.
  bool next(CaptureRecord& out);

  const std::string& path() const { return path_; }

  // What the file's last interface statistics block says (the capture of a port that was stopped
  // by its limit, or lost frames to a full ring, holds fewer frames than the port handed to it);
  // nullopt before next() returned false, or when the file has no such block.
  struct Statistics {
    uint64_t received = 0;   // isb_ifrecv: frames the port handed to the capture
    uint64_t delivered = 0;  // isb_usrdeliv: frames in the file
  };
  std::optional<Statistics> statistics() const { return statistics_; }

 private:
  struct Library;
  std::string path_;
  std::unique_ptr<Library> library_;
  uint64_t frames_ = 0;
  std::optional<Statistics> statistics_;
};

}  // namespace etwire::nic::capture
