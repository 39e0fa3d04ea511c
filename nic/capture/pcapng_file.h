// One capture file of one port: pcapng. Wireshark's libwiretap writes the section header and the
// interface description (Debian 12's libpcap writes no pcapng): one interface, named after the
// port, with nanosecond timestamps. Frames are written here, an enhanced packet block each with
// its direction in its packet flags (outbound: the port sent it; inbound: it arrived), so tshark,
// Wireshark and scapy show which way it went. libwiretap's per-record path (option lookups and
// several small stdio writes a frame) cost the writer most of a core at a DPDK port's rate; here
// a frame is a few copies into a buffer that goes out a megabyte at a time, with no allocation.
// The file ends with an interface statistics block, so that a reader sees in the file itself how
// many of the port's frames it holds and how many the capture lost.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "clock/time.h"
#include "nic/capture/frame_capture_ring.h"

namespace etwire::nic::capture {

// What the interface statistics block at a file's end says (pcapng's ISB options).
struct InterfaceStatistics {
  clock::Nanos start = 0;  // isb_starttime: when capturing began, ns since the Unix epoch
  clock::Nanos end = 0;    // isb_endtime and the block's time: when it ended
  uint64_t received = 0;   // isb_ifrecv: frames the port handed to the capture
  uint64_t dropped = 0;    // isb_ifdrop: of those, frames the capture had no room for
  uint64_t delivered = 0;  // isb_usrdeliv: frames written to the file
};

class PcapngFile {
 public:
  // Bytes an enhanced packet block adds besides the frame's bytes (padded to 4): its header and
  // trailer (32) and the packet flags option with the end of options (12). The capture tests
  // check this against the files' sizes.
  static constexpr uint64_t kRecordOverhead = 32 + 12;

  // Bytes of the interface statistics block: its header, interface and time (20), five 8-byte
  // options of 4 bytes' header each (60), the end of options (4) and the trailer (4).
  static constexpr uint64_t kStatisticsBytes = 20 + 5 * 12 + 4 + 4;

  // Bytes a frame of `captured` bytes adds to the file.
  static constexpr uint64_t record_bytes(uint32_t captured) {
    return kRecordOverhead + ((static_cast<uint64_t>(captured) + 3) & ~uint64_t{3});
  }

  // Creates `path` anew, readable by its owner only (0600), and writes the section header and the
  // description of the interface `interface_name` (Ethernet, nanosecond timestamps, frames cut at
  // `snap_length`). A symbolic link or an earlier file at `path` is replaced, never written
  // through; a device or FIFO is written to as named. Throws std::runtime_error "<path>: <reason>"
  // when the file cannot be created.
  PcapngFile(const std::string& path, const std::string& interface_name, uint32_t snap_length);
  // Closes the file if close() did not.
  ~PcapngFile();
  PcapngFile(const PcapngFile&) = delete;
  PcapngFile& operator=(const PcapngFile&) = delete;

  // The file's size before its first frame.
  uint64_t header_bytes() const { return header_bytes_; }

  // Appends `frame`, stamped `stamp` (nanoseconds since the Unix epoch). False when the write
  // failed (a full disk shows here, when the buffer goes out), and from then on; error() says why.
  bool write(clock::Nanos stamp, const CapturedFrame& frame);
  // Writes what is buffered, then `statistics` in an interface statistics block
  // (kStatisticsBytes), and closes the file; again is a no-op. False when that failed.
  bool close(const InterfaceStatistics& statistics);
  // The last failure: "<path>: <reason>".
  const std::string& error() const { return error_; }

 private:
  void put(const void* bytes, size_t n);
  void put32(uint32_t v);
  // A timestamp as pcapng blocks hold it: the high 32 bits first.
  void put_stamp(clock::Nanos t);
  // Writes the buffer out; false (and error()) when the write failed.
  bool flush();

  std::string path_;
  int fd_ = -1;
  std::unique_ptr<uint8_t[]> buffer_;
  size_t buffer_bytes_;
  size_t used_ = 0;
  uint64_t header_bytes_ = 0;
  std::string error_;
};

}  // namespace etwire::nic::capture
