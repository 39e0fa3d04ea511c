// The aggregator: a thread of its own that drains every worker's ring a few dozen times a second
// and applies the records to the run's metrics, off the data plane's path. Workers only push into
// their rings; they never touch the metrics, never lock and never wait.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/telemetry/record_ring.h"
#include "outputs/telemetry/run_metrics.h"

namespace etwire::telemetry {

class RecordAggregator {
 public:
  // `metrics` must outlive the aggregator.
  explicit RecordAggregator(RunMetrics& metrics,
                            std::chrono::milliseconds period = std::chrono::milliseconds(20));
  ~RecordAggregator();
  RecordAggregator(const RecordAggregator&) = delete;
  RecordAggregator& operator=(const RecordAggregator&) = delete;

  // A ring for one more worker; only before start().
  RecordRing& add_ring(size_t capacity);
  void start();
  // Stops the thread and applies every record still in the rings: the metrics are then final.
  void finish();
  // Applies what the rings hold now, on the caller's thread (for tests; not while started).
  void drain_now();

 private:
  void loop();

  RunMetrics& metrics_;
  std::chrono::milliseconds period_;
  std::vector<std::unique_ptr<RecordRing>> rings_;
  std::thread thread_;
  std::mutex mutex_;  // only for the stop signal: the rings need none
  std::condition_variable wake_;
  bool stopping_ = false;
};

}  // namespace etwire::telemetry
