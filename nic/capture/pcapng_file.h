// One capture file of one port: pcapng, written through Wireshark's libwiretap (Debian 12's
// libpcap writes no pcapng). The file describes one interface, named after the port, with
// nanosecond timestamps, and each frame carries its direction in its packet flags (outbound: the
// port sent it; inbound: it arrived), so tshark, Wireshark and scapy show which way it went.
// Writing a frame allocates nothing: the two possible flag blocks are built when the file opens.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "clock/time.h"
#include "nic/capture/frame_capture_ring.h"

namespace etwire::nic::capture {

class PcapngFile {
 public:
  // Bytes an enhanced packet block adds besides the frame's bytes (padded to 4): its header and
  // trailer (32) and the packet flags option with the end of options (12). The capture tests
  // check this against the files' sizes.
  static constexpr uint64_t kRecordOverhead = 32 + 12;

  // Bytes a frame of `captured` bytes adds to the file.
  static constexpr uint64_t record_bytes(uint32_t captured) {
    return kRecordOverhead + ((static_cast<uint64_t>(captured) + 3) & ~uint64_t{3});
  }

  // Creates (truncates) `path` and writes the section header and the description of the
  // interface `interface_name` (Ethernet, nanosecond timestamps, frames cut at `snap_length`).
  // Throws std::runtime_error "<path>: <reason>" when the file cannot be created.
  PcapngFile(const std::string& path, const std::string& interface_name, uint32_t snap_length);
  // Closes the file if close() did not.
  ~PcapngFile();
  PcapngFile(const PcapngFile&) = delete;
  PcapngFile& operator=(const PcapngFile&) = delete;

  // The file's size before its first frame.
  uint64_t header_bytes() const { return header_bytes_; }

  // Appends `frame`, stamped `stamp` (nanoseconds since the Unix epoch). False when the write
  // failed (a full disk shows here, when the stream's buffer goes out); error() says why.
  bool write(clock::Nanos stamp, const CapturedFrame& frame);
  // Writes what is buffered and closes the file; again is a no-op. False when that failed.
  bool close();
  // The last failure: "<path>: <reason>".
  const std::string& error() const { return error_; }

 private:
  struct Wiretap;

  std::string path_;
  std::unique_ptr<Wiretap> wiretap_;
  uint64_t header_bytes_ = 0;
  std::string error_;
};

}  // namespace etwire::nic::capture
