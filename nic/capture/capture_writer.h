// The capture writer: a thread of its own that drains the ports' capture rings into one capture
// file per port, so a port's worker only copies bytes into a ring and never waits on a disk.
// Files are pcapng (pcapng_file.h): one interface named after the port, nanosecond timestamps,
// each frame's direction in its flags; tshark, Wireshark and scapy read them. Limits on the bytes
// and frames of all files together keep a run from filling the disk: once one is reached the writer
// stops writing, and producers that look at capturing() stop building frames. A producer that
// finds its ring full counts the frame lost on the ring; each file ends with the count of its
// port's frames handed over, lost and written (pcapng_file.h), and the totals carry them.
//
// The thread runs on the CPUs it is given: a producer that busy-polls its CPU (a DPDK lcore)
// would otherwise starve a writer that inherited that CPU, and the rings would overflow.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "clock/time.h"
#include "nic/capture/frame_capture_ring.h"

namespace etwire::nic::capture {

struct CaptureLimits {
  uint64_t max_bytes = 0;    // of all files together, file headers included; 0: no limit
  uint64_t max_packets = 0;  // frames of all files together; 0: no limit
};

struct CaptureFileTotals {
  std::string path;
  uint64_t frames = 0;
  uint64_t bytes = 0;       // the file's size
  uint64_t lost = 0;        // frames its rings had no room for: the writer fell behind
  uint64_t over_limit = 0;  // frames that reached the writer after a limit was reached
};

struct CaptureTotals {
  std::vector<CaptureFileTotals> files;
  uint64_t frames = 0;
  uint64_t bytes = 0;
  // Frames that reached the writer after a limit was reached, and were not written.
  uint64_t frames_over_limit = 0;
  // Frames the producers could not hand over (their rings were full): in no file.
  uint64_t frames_lost = 0;
  bool limit_reached = false;
  std::string error;  // a file that could not be written: what happened; empty if none
};

class CaptureWriter {
 public:
  explicit CaptureWriter(CaptureLimits limits);
  ~CaptureWriter();
  CaptureWriter(const CaptureWriter&) = delete;
  CaptureWriter& operator=(const CaptureWriter&) = delete;

  // Before start(): creates (truncates) `path`, the file of the frames of `rings` (the queues of
  // one port, named `interface_name` in the file), which keep at most `snap_length` bytes of a
  // frame. Throws std::runtime_error "<path>: <reason>" when the file cannot be created. The
  // rings must outlive the writer. The byte limit counts the statistics block each file ends
  // with from the start, so that a closed file stays within it.
  void add_file(const std::string& path, const std::string& interface_name,
                std::vector<FrameCaptureRing*> rings, uint32_t snap_length);
  // Starts the thread; producers capture from now on. `epoch_offset` is added to frame times (the
  // data plane's clock) to make the files' timestamps, nanoseconds since the Unix epoch. The
  // thread runs on `cpus` (CPU numbers), or where the caller runs when it is empty. Throws
  // std::runtime_error when the thread cannot be placed there.
  void start(clock::Nanos epoch_offset, const std::vector<unsigned>& cpus = {});
  // Writes what the rings still hold, closes the files and ends the thread. Call once the
  // producers have stopped; again is a no-op.
  void stop();
  // Whether producers hand frames over (any thread): from start() until a limit is reached or
  // the writer stops.
  bool capturing() const { return capturing_.load(std::memory_order_relaxed); }
  // While the thread runs: the CPUs it may run on.
  std::vector<unsigned> cpus() const;
  // After stop(): what was written.
  const CaptureTotals& totals() const { return totals_; }

 private:
  struct File;

  // Drains every ring once; returns the frames taken.
  size_t drain();
  void write(File& file, const CapturedFrame& frame);
  // Stops capturing for good: a limit was reached or a file failed.
  void stop_capturing();
  void close();

  CaptureLimits limits_;
  clock::Nanos epoch_offset_ = 0;
  clock::Nanos started_at_ = 0;  // wall time of start(), ns since the Unix epoch
  std::vector<std::unique_ptr<File>> files_;
  std::thread thread_;
  pthread_t thread_handle_{};  // thread_'s, for reading its CPUs from a const member
  std::atomic<bool> stopping_{false};
  std::atomic<bool> capturing_{false};
  bool full_ = false;  // the writer's: a limit was reached or a file failed
  bool stopped_ = false;
  CaptureTotals totals_;
};

}  // namespace etwire::nic::capture
