// Keeps every record the transport reports, in the order it reports them.
#pragma once

#include <vector>

#include "transport/flow_record.h"

namespace etwire::transport::testing {

struct RecordingObserver final : FlowObserver {
  void on_flow_delivered(const FlowRecord& record) override { delivered.push_back(record); }
  void on_flow_finished(const FlowRecord& record) override { finished.push_back(record); }
  void on_delivered_to_responder(uint32_t requester_qpn, clock::Nanos now, uint32_t ecn_marks,
                                 uint32_t immediate) override {
    remote_deliveries.push_back({requester_qpn, now, ecn_marks, immediate});
  }
  struct RemoteDelivery {
    uint32_t requester_qpn;
    clock::Nanos at;
    uint32_t ecn_marks;
    uint32_t immediate;
  };
  std::vector<FlowRecord> delivered;
  std::vector<FlowRecord> finished;
  std::vector<RemoteDelivery> remote_deliveries;
};

}  // namespace etwire::transport::testing
