#include "nic/capture/capture_writer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <cstring>
#include <stdexcept>

#include "common/cpu_set.h"
#include "nic/capture/pcapng_file.h"

namespace etwire::nic::capture {

namespace {

clock::Nanos unix_now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Empty when the thread now runs on `cpus`; otherwise why not.
std::string place(pthread_t thread, const std::vector<unsigned>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (unsigned cpu : cpus) {
    if (cpu >= CPU_SETSIZE)
      return fmt::format("CPU {} is beyond the {} a CPU set holds", cpu, CPU_SETSIZE);
    CPU_SET(cpu, &set);
  }
  const int rc = pthread_setaffinity_np(thread, sizeof(set), &set);
  return rc == 0 ? std::string() : std::strerror(rc);
}

}  // namespace

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
  file->totals.bytes = file->pcapng.header_bytes() + PcapngFile::kStatisticsBytes;
  totals_.bytes += file->totals.bytes;
  files_.push_back(std::move(file));
}

void CaptureWriter::start(clock::Nanos epoch_offset, const std::vector<unsigned>& cpus) {
  epoch_offset_ = epoch_offset;
  started_at_ = unix_now();
  capturing_.store(true, std::memory_order_relaxed);
  thread_ = std::thread([this] {
    while (!stopping_.load(std::memory_order_acquire)) {
      // Idle rings are looked at every 100 us: a ring of a few thousand slots holds far longer
      // than that at any port speed.
      if (drain() == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  });
  thread_handle_ = thread_.native_handle();
  // Placed before any frame can wait long: the thread's first pass finds the rings empty and
  // sleeps.
  if (cpus.empty()) return;
  if (const std::string why = place(thread_handle_, cpus); !why.empty()) {
    stop();
    throw std::runtime_error(
        fmt::format("the capture writer cannot run on CPUs {}: {}", fmt::join(cpus, ","), why));
  }
}

std::vector<unsigned> CaptureWriter::cpus() const {
  std::vector<unsigned> cpus;
  if (!thread_.joinable()) return cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pthread_getaffinity_np(thread_handle_, sizeof(set), &set) != 0) return cpus;
  return cpus_in(set);
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
    ++file.totals.over_limit;
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
  const clock::Nanos ended = unix_now();
  for (auto& file : files_) {
    // The producers have stopped: their counts are final.
    for (const FrameCaptureRing* ring : file->rings) file->totals.lost += ring->lost();
    totals_.frames_lost += file->totals.lost;
    const CaptureFileTotals& t = file->totals;
    const InterfaceStatistics statistics{started_at_ == 0 ? ended : started_at_, ended,
                                         t.frames + t.lost + t.over_limit, t.lost, t.frames};
    if (!file->pcapng.close(statistics) && totals_.error.empty()) {
      totals_.error = file->pcapng.error();
    }
    totals_.files.push_back(file->totals);
  }
  files_.clear();
}

}  // namespace etwire::nic::capture
