// Where the run engine streams flow records as flows finish (flows.csv is one). The engine calls
// it for every flow of the run, so an implementation keeps append cheap.
#pragma once

#include "transport/flow_record.h"

namespace etwire::engine {

class FlowSink {
 public:
  virtual void append(const transport::FlowRecord& record) = 0;
  // Called when the run ends: anything buffered goes out.
  virtual void flush() = 0;

 protected:
  ~FlowSink() = default;
};

}  // namespace etwire::engine
