#include "outputs/telemetry/record_aggregator.h"

namespace etwire::telemetry {

RecordAggregator::RecordAggregator(RunMetrics& metrics, std::chrono::milliseconds period)
    : metrics_(metrics), period_(period) {}

RecordAggregator::~RecordAggregator() {
  finish();
}

RecordRing& RecordAggregator::add_ring(size_t capacity) {
  rings_.push_back(std::make_unique<RecordRing>(capacity));
  return *rings_.back();
}

void RecordAggregator::start() {
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { loop(); });
}

void RecordAggregator::finish() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  drain_now();
}

void RecordAggregator::drain_now() {
  uint64_t dropped = 0;
  for (auto& ring : rings_) {
    ring->drain([this](const Record& record) { metrics_.apply(record); });
    dropped += ring->dropped();
  }
  metrics_.set_records_dropped(dropped);
}

void RecordAggregator::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    drain_now();
    lock.lock();
    wake_.wait_for(lock, period_, [this] { return stopping_; });
  }
}

}  // namespace etwire::telemetry
