// Keeps every record the transport reports, in the order it reports them.
#pragma once

#include <vector>

#include "traffic/transport/flow_record.h"

namespace etwire::transport::testing {

struct RecordingObserver final : FlowObserver {
  void on_flow_delivered(const FlowRecord& record) override { delivered.push_back(record); }
  void on_flow_finished(const FlowRecord& record) override { finished.push_back(record); }
  std::vector<FlowRecord> delivered;
  std::vector<FlowRecord> finished;
};

}  // namespace etwire::transport::testing
