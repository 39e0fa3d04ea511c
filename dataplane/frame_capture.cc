#include "dataplane/frame_capture.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "nic/frame/wire_format.h"

namespace etwire::dataplane {

namespace {

// The Ethernet header and tag around an IP packet of a port's MTU.
constexpr uint32_t kEthernetAroundMtu = 14 + 4;

// A data frame of a full PMTU with its pad (up to 3 bytes) and every header, or a frame of a
// port's MTU, whichever is larger.
uint32_t largest_frame(const config::RunConfig& config) {
  uint32_t largest = config.transport.pmtu + 3 + frame::kLargestRoceOverhead;
  for (const config::PortConfig& port : config.ports) {
    largest = std::max(largest, port.mtu + kEthernetAroundMtu);
  }
  return largest;
}

}  // namespace

FrameCapture::FrameCapture(const config::RunConfig& config, uint64_t ring_bytes,
                           uint32_t max_ring_slots)
    : config_(config),
      snap_length_(config.telemetry.capture.snap_length == 0
                       ? largest_frame(config)
                       : static_cast<uint32_t>(std::min<uint64_t>(
                             config.telemetry.capture.snap_length, largest_frame(config)))),
      ring_slots_(
          nic::capture::FrameCaptureRing::slots_within(ring_bytes, snap_length_, max_ring_slots)),
      writer_(nic::capture::CaptureLimits{config.telemetry.capture.max_bytes,
                                          config.telemetry.capture.max_packets}) {
  for (const config::PortConfig& port : config.ports) {
    points_.push_back({port.name + ".pcapng", port.name, {}});
  }
}

FrameCapture::~FrameCapture() = default;

nic::capture::FrameCaptureRing& FrameCapture::add_ring(size_t port) {
  Point& point = points_.at(port);
  point.rings.push_back(
      std::make_unique<nic::capture::FrameCaptureRing>(ring_slots_, snap_length_));
  return *point.rings.back();
}

nic::capture::FrameCaptureRing& FrameCapture::add_switch_port(const std::string& name) {
  points_.push_back({"fabric/" + name + ".pcapng", name, {}});
  points_.back().rings.push_back(
      std::make_unique<nic::capture::FrameCaptureRing>(ring_slots_, snap_length_));
  return *points_.back().rings.back();
}

void FrameCapture::open(const std::string& dir) {
  opened_ = true;
  const std::filesystem::path folder = std::filesystem::path(dir) / "capture";
  folder_ = folder.string() + "/";
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) {
    throw std::runtime_error(
        fmt::format("{}: cannot create the capture folder: {}", folder.string(), error.message()));
  }
  for (Point& point : points_) {
    if (point.rings.empty()) continue;  // a port another emulator process drives
    const std::filesystem::path file = folder / point.file;
    std::filesystem::create_directories(file.parent_path(), error);
    if (error) {
      throw std::runtime_error(fmt::format("{}: cannot create the capture folder: {}",
                                           file.parent_path().string(), error.message()));
    }
    std::vector<nic::capture::FrameCaptureRing*> rings;
    for (auto& ring : point.rings) rings.push_back(ring.get());
    writer_.add_file(file.string(), point.interface, std::move(rings), snap_length_);
  }
}

void FrameCapture::begin(clock::Nanos clock_now, const std::vector<unsigned>& writer_cpus) {
  if (!opened_) return;
  const auto epoch = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  writer_.start(epoch.count() - clock_now, writer_cpus);
  started_ = true;
}

void FrameCapture::stop() {
  writer_.stop();
  const bool was_stopped = stopped_;
  stopped_ = true;
  if (was_stopped) return;
  if (const std::string lost = lost_note(); !lost.empty()) std::cerr << "warning: " << lost << "\n";
}

std::string FrameCapture::lost_note() const {
  if (!started_ || !stopped_) return {};
  const nic::capture::CaptureTotals& totals = writer_.totals();
  if (totals.frames_lost == 0) return {};
  return fmt::format(
      "capture: {} of {} frames lost: the writer could not keep up (each file's statistics block "
      "counts its own)",
      totals.frames_lost, totals.frames + totals.frames_lost + totals.frames_over_limit);
}

std::vector<std::string> FrameCapture::notes() const {
  // Before the end the writer's totals are its thread's.
  if (!started_ || !stopped_) return {};
  const nic::capture::CaptureTotals& totals = writer_.totals();
  std::vector<std::string> notes;
  notes.push_back(
      fmt::format("capture: {} frames in {} file{} in {} ({:.1f} MB, {} bytes a frame "
                  "at most)",
                  totals.frames, totals.files.size(), totals.files.size() == 1 ? "" : "s", folder_,
                  static_cast<double>(totals.bytes) / 1e6, snap_length_));
  if (totals.limit_reached) {
    const config::CaptureConfig& limits = config_.telemetry.capture;
    notes.push_back(fmt::format(
        "capture: stopped at its limit (telemetry.capture max_bytes {}, max_packets {}); later "
        "frames are not in the files ({} reached the writer after it)",
        limits.max_bytes, limits.max_packets, totals.frames_over_limit));
  }
  if (std::string lost = lost_note(); !lost.empty()) notes.push_back(std::move(lost));
  if (!totals.error.empty()) notes.push_back("capture: " + totals.error);
  return notes;
}

}  // namespace etwire::dataplane
