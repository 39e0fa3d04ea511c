// Where the samples of the fabric twin's queues go (telemetry.record.queue_sample_interval):
// queues.csv's writer and the telemetry ring, whichever are set.
#pragma once

#include <string_view>

#include "dataplane/queue_row.h"
#include "engine/telemetry/record_ring.h"
#include "engine/telemetry/telemetry_record.h"

namespace etwire::engine {

class QueueSampleTee final : public dataplane::QueueSink {
 public:
  void set_writer(dataplane::QueueSink* writer) { writer_ = writer; }
  void set_telemetry(telemetry::RecordRing* ring) { ring_ = ring; }

  void append(const dataplane::QueueRow& row, std::string_view switch_port) override {
    if (writer_ != nullptr) writer_->append(row, switch_port);
    if (ring_ != nullptr) {
      ring_->push(telemetry::Record::of(telemetry::QueueDepthSample{
          row.queue.switch_port, row.queue.priority, row.queue.depth_bytes, row.utilization}));
    }
  }

 private:
  dataplane::QueueSink* writer_ = nullptr;
  telemetry::RecordRing* ring_ = nullptr;
};

}  // namespace etwire::engine
