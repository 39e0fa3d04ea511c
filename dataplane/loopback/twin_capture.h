// telemetry.record.pcap on the fabric twin: a capture point at every run port and at each switch
// port of telemetry.capture.switch_ports, each the frame tap of the port's place in the twin, and
// the FrameCapture that writes their rings to files. The loopback data plane and the partitioned
// one share it; each says how a tap reaches its twin (a partitioned twin gives each tap to the
// partition that owns the port, so a point is fed by one thread only).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "clock/time.h"
#include "config/run_config.h"
#include "dataplane/data_plane.h"
#include "dataplane/frame_capture.h"
#include "dataplane/loopback/twin_capture_point.h"
#include "nic/frame/payload_pattern.h"
#include "nic/frame/wire_directory.h"
#include "twin/frame_tap.h"
#include "twin/layout/fabric_layout.h"

namespace etwire::dataplane {

class TwinCapture {
 public:
  // Shows `tap` what `endpoint` of the twin sends and receives.
  using AttachTap = std::function<void(twin::Endpoint endpoint, twin::FrameTap*)>;

  // Attaches every capture point. Throws std::invalid_argument naming the configuration file and
  // key for a switch port the fabric does not have. The taps must be removed, or the twin gone,
  // before the capture is destroyed.
  TwinCapture(const config::RunConfig& config, const twin::FabricLayout& layout,
              const AttachTap& attach);
  ~TwinCapture();

  // A connection's addresses, for the frames of its packets: before any of them is sent, and
  // never while the twin runs (the points read the directory from the twin's threads).
  void add_connection(const WireConnection& connection);
  // Creates <dir>/capture/ and its files and starts writing (FrameCapture::open and begin).
  void begin(const std::string& dir, clock::Nanos clock_now);
  // Writes what is left and closes the files, once the twin has stopped.
  void stop();
  // What was captured, and the packets of no known connection (not captured).
  std::vector<std::string> notes() const;

 private:
  void add_point(const twin::FabricLayout& layout, const AttachTap& attach, twin::Endpoint endpoint,
                 nic::capture::FrameCaptureRing& ring);

  const config::RunConfig& config_;
  frame::PayloadPattern payload_;
  nic::WireDirectory directory_;
  uint32_t connections_ = 0;
  FrameCapture frames_;
  std::vector<std::unique_ptr<TwinCapturePoint>> points_;  // hosts, switch ports
};

}  // namespace etwire::dataplane
