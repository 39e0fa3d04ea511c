#include "nic/capture/capture_writer.h"

#include <fmt/format.h>
#include <pcap/pcap.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace etwire::nic::capture {

namespace {

// pcap's file header and per-record header.
constexpr uint64_t kFileHeaderBytes = 24;
constexpr uint64_t kRecordHeaderBytes = 16;
constexpr size_t kStreamBuffer = 1 << 20;

}  // namespace

struct CaptureWriter::File {
  std::string path;
  std::vector<FrameCaptureRing*> rings;
  pcap_t* handle = nullptr;
  pcap_dumper_t* dumper = nullptr;
  CaptureFileTotals totals;

  ~File() {
    if (dumper != nullptr) pcap_dump_close(dumper);
    if (handle != nullptr) pcap_close(handle);
  }
};

CaptureWriter::CaptureWriter(CaptureLimits limits) : limits_(limits) {}

CaptureWriter::~CaptureWriter() {
  try {
    stop();
  } catch (...) {
    // stop() only joins and closes; nothing to report from a destructor.
  }
}

void CaptureWriter::add_file(const std::string& path, std::vector<FrameCaptureRing*> rings,
                             uint32_t snap_length) {
  auto file = std::make_unique<File>();
  file->path = path;
  file->rings = std::move(rings);
  file->handle = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, static_cast<int>(snap_length),
                                                      PCAP_TSTAMP_PRECISION_NANO);
  if (file->handle == nullptr) throw std::runtime_error(path + ": libpcap could not start a file");
  FILE* stream = std::fopen(path.c_str(), "wb");
  if (stream == nullptr) {
    throw std::runtime_error(
        fmt::format("{}: cannot create the capture file: {}", path, std::strerror(errno)));
  }
  // Frames are written one by one: a large buffer makes that a write() per MiB.
  std::setvbuf(stream, nullptr, _IOFBF, kStreamBuffer);
  file->dumper = pcap_dump_fopen(file->handle, stream);
  if (file->dumper == nullptr) {
    std::fclose(stream);
    throw std::runtime_error(
        fmt::format("{}: cannot start the capture file: {}", path, pcap_geterr(file->handle)));
  }
  file->totals.path = path;
  file->totals.bytes = kFileHeaderBytes;
  totals_.bytes += kFileHeaderBytes;
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
  const uint64_t record_bytes = kRecordHeaderBytes + frame.captured;
  if (full_ || (limits_.max_packets != 0 && totals_.frames + 1 > limits_.max_packets) ||
      (limits_.max_bytes != 0 && totals_.bytes + record_bytes > limits_.max_bytes)) {
    if (!full_) totals_.limit_reached = true;
    full_ = true;
    capturing_.store(false, std::memory_order_relaxed);
    ++totals_.frames_over_limit;
    return;
  }
  const clock::Nanos stamp = frame.time + epoch_offset_;
  pcap_pkthdr header{};
  header.ts.tv_sec = static_cast<time_t>(stamp / clock::kNanosPerSecond);
  // With nanosecond precision libpcap reads tv_usec as nanoseconds.
  header.ts.tv_usec = static_cast<suseconds_t>(stamp % clock::kNanosPerSecond);
  header.caplen = frame.captured;
  header.len = frame.length;
  pcap_dump(reinterpret_cast<u_char*>(file.dumper), &header, frame.bytes);
  ++file.totals.frames;
  file.totals.bytes += record_bytes;
  ++totals_.frames;
  totals_.bytes += record_bytes;
  // A write error (a full disk) shows at the next flush; libpcap buffers through stdio.
  if ((file.totals.frames & 0xFFF) == 0 && pcap_dump_flush(file.dumper) != 0) {
    totals_.error = fmt::format("{}: cannot write: {}", file.path, std::strerror(errno));
    full_ = true;
    capturing_.store(false, std::memory_order_relaxed);
  }
}

void CaptureWriter::close() {
  for (auto& file : files_) {
    if (file->dumper != nullptr && pcap_dump_flush(file->dumper) != 0 && totals_.error.empty()) {
      totals_.error = fmt::format("{}: cannot write: {}", file->path, std::strerror(errno));
    }
    totals_.files.push_back(file->totals);
  }
  files_.clear();
}

}  // namespace etwire::nic::capture
