// telemetry.record.pcap for a data plane: a capture ring for each queue of each port (and for each
// twin switch port of telemetry.capture.switch_ports), and the writer that drains them into
// <results>/capture/<port>.pcapng and capture/fabric/<switch>/<peer>.pcapng within
// telemetry.capture's limits. The data plane gives each producer its ring (a TwinCapturePoint on
// the twin, the DpdkPort itself on DPDK) and starts the capture once the results directory exists.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "clock/time.h"
#include "config/run_config.h"
#include "nic/capture/capture_writer.h"
#include "nic/capture/frame_capture_ring.h"

namespace etwire::dataplane {

class FrameCapture {
 public:
  // Frames keep telemetry.capture.snap_length bytes, or whole frames: up to the PMTU's data frame
  // or a port's MTU, whichever is larger. Each ring holds as many frames of that size as fit in
  // `ring_bytes`, at most `max_ring_slots` (FrameCaptureRing::slots_within).
  FrameCapture(const config::RunConfig& config, uint64_t ring_bytes,
               uint32_t max_ring_slots = nic::capture::FrameCaptureRing::kMaxSlots);
  ~FrameCapture();

  // Bytes a frame keeps, and the frames each ring holds.
  uint32_t snap_length() const { return snap_length_; }
  uint32_t ring_slots() const { return ring_slots_; }

  // Port `port`'s next ring (one per queue that captures it).
  nic::capture::FrameCaptureRing& add_ring(size_t port);
  // The ring of the twin's switch port `name` ("leaf0/spine1"), whose file is
  // capture/fabric/<name>.pcapng.
  nic::capture::FrameCaptureRing& add_switch_port(const std::string& name);

  // Creates <dir>/capture/ and a file for each port with a ring. Throws std::runtime_error
  // naming the file or folder that cannot be created.
  void open(const std::string& dir);
  // Starts writing, if open() ran: producers capture from now on. `clock_now` is the data plane's
  // clock now; the files' timestamps are frame times moved onto the Unix epoch by the wall time
  // of this call. The writer's thread runs on `writer_cpus`, or where the caller runs if empty.
  void begin(clock::Nanos clock_now, const std::vector<unsigned>& writer_cpus = {});
  // What the producers look at: whether to capture now.
  const nic::capture::CaptureWriter& writer() const { return writer_; }
  // Writes what is left and closes the files (after the ports' producers stopped). Frames lost
  // on the way (full rings on a wall-clock port) are said on stderr too: a run's console report
  // may go unread, and a file that lacks frames must not pass for whole.
  void stop();
  // After stop(): what was captured, for the run's notes.
  std::vector<std::string> notes() const;
  // After stop(): "capture: N of M frames lost: ..." when frames were lost, else empty.
  std::string lost_note() const;

 private:
  const config::RunConfig& config_;
  uint32_t snap_length_;
  uint32_t ring_slots_;
  // A file and the rings that fill it: the run's ports by index, then switch ports.
  struct Point {
    std::string file;       // under capture/
    std::string interface;  // the file's interface name: the port's or switch port's
    std::vector<std::unique_ptr<nic::capture::FrameCaptureRing>> rings;
  };
  std::vector<Point> points_;
  nic::capture::CaptureWriter writer_;
  std::string folder_;  // <dir>/capture/, once open
  bool opened_ = false;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace etwire::dataplane
