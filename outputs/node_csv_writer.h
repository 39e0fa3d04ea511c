// nodes.csv (telemetry.record.nodes): the header, then one line per trace node that took time, as
// it completes: job, rank, iteration, node_id, name, type (Chakra's node type), instance (the
// collectives.csv instance a communication node joined; empty for compute), start_ns, end_ns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/node_sink.h"
#include "outputs/output_file.h"

namespace etwire::outputs {

class NodeCsvWriter final : public engine::NodeSink {
 public:
  // `job_names` by job index, as results.jobs lists them.
  NodeCsvWriter(std::string path, std::vector<std::string> job_names);

  void append(const engine::NodeRow& row) override;
  // Flushes and closes the file; append() after close() throws.
  void close() { file_.close(); }
  const std::string& path() const { return file_.path(); }
  uint64_t rows() const { return rows_; }

 private:
  StreamedFile file_;
  std::vector<std::string> job_names_;
  uint64_t rows_ = 0;
};

}  // namespace etwire::outputs
