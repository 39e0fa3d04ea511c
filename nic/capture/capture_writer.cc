#include "nic/capture/capture_writer.h"

#include <chrono>

#include "nic/capture/pcapng_file.h"

namespace etwire::nic::capture {

struct CaptureWriter::File {
  File(const std::string& path, const std::string& interface_name, uint32_t snap_length)
      : pcapng(path, interface_name, snap_length) {}

  PcapngFile pcapng;
  std::vector<FrameCaptureRing*> rings;
  CaptureFileTotals totals;
};

CaptureWriter::CaptureWriter(CaptureLimits limits) : limits_(limits) {}

CaptureWriter::~CaptureWriter() {
  try {
    stop();
  } catch (...) {
    // stop() only joins and closes; nothing to report from a destructor.
  }
}

void CaptureWriter::add_file(const std::string& path, const std::string& interface_name,
                             std::vector<FrameCaptureRing*> rings, uint32_t snap_length) {
  auto file = std::make_unique<File>(path, interface_name, snap_length);
  file->rings = std::move(rings);
  file->totals.path = path;
  file->totals.bytes = file->pcapng.header_bytes();
  totals_.bytes += file->totals.bytes;
  files_.push_back(std::move(file));
}

void CaptureWriter::start(clock::Nanos epoch_offset) {
  epoch_offset_ = epoch_offset;
  capturing_.store(true, std::memory_order_relaxed);
  thread_ = std::thread([this] {
    while (!stopping_.load(std::memory_order_acquire)) {
      // Idle rings are looked at every 100 us: a ring of a few thousand slots holds far longer
      // than that at any port speed.
      if (drain() == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  });
}

void CaptureWriter::stop() {
  if (stopped_) return;
  stopped_ = true;
  capturing_.store(false, std::memory_order_relaxed);
  stopping_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
  drain();
  close();
}

size_t CaptureWriter::drain() {
  size_t taken = 0;
  for (auto& file : files_) {
    for (FrameCaptureRing* ring : file->rings) {
      taken += ring->drain([&](const CapturedFrame& frame) { write(*file, frame); });
    }
  }
  return taken;
}

void CaptureWriter::write(File& file, const CapturedFrame& frame) {
  const uint64_t record_bytes = PcapngFile::record_bytes(frame.captured);
  if (full_ || (limits_.max_packets != 0 && totals_.frames + 1 > limits_.max_packets) ||
      (limits_.max_bytes != 0 && totals_.bytes + record_bytes > limits_.max_bytes)) {
    if (!full_) totals_.limit_reached = true;
    stop_capturing();
    ++totals_.frames_over_limit;
    return;
  }
  if (!file.pcapng.write(frame.time + epoch_offset_, frame)) {
    // A full disk: what was written stays, nothing more is.
    totals_.error = file.pcapng.error();
    stop_capturing();
    return;
  }
  ++file.totals.frames;
  file.totals.bytes += record_bytes;
  ++totals_.frames;
  totals_.bytes += record_bytes;
}

void CaptureWriter::stop_capturing() {
  full_ = true;
  capturing_.store(false, std::memory_order_relaxed);
}

void CaptureWriter::close() {
  for (auto& file : files_) {
    if (!file->pcapng.close() && totals_.error.empty()) totals_.error = file->pcapng.error();
    totals_.files.push_back(file->totals);
  }
  files_.clear();
}

}  // namespace etwire::nic::capture
