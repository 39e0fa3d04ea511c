// Writers of valid synthetic trace sets: collective microbenchmarks and large dependency graphs,
// for users without GPU clusters and for the project's own tests and benchmarks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace/et_writer.h"
#include "trace/node.h"

namespace etwire::synth {

struct MicrobenchSpec {
  // A collective type, or nullopt for a p2p ring exchange (rank r sends to r+1).
  std::optional<trace::CollectiveType> collective = trace::CollectiveType::kAllReduce;
  uint64_t bytes = 1 << 20;
  int32_t ranks = 8;
  uint32_t iterations = 1;
  // COMP node of this duration between consecutive collectives; 0 = none.
  uint64_t compute_us = 0;
  // pg_name to write on collectives; nullopt writes none (the default all-ranks group).
  std::optional<std::string> pg_name;
  // involved_dim to write on collectives; empty writes none.
  std::vector<bool> involved_dim;
};

struct GraphSpec {
  uint64_t nodes_per_rank = 1000000;
  int32_t ranks = 1;
  // Block shape: a hub node fans out to `fan_out` COMP nodes that fan in to one COMP node, which
  // the next block's hub depends on. Hubs are ALL_REDUCE collectives, every 5th block a SEND/RECV
  // pair.
  uint32_t fan_out = 8;
  uint64_t hub_bytes = 1 << 20;
  uint64_t p2p_bytes = 64 << 10;
  uint64_t compute_us = 10;
  // When non-zero, nodes are written shuffled within consecutive groups of this many records, so
  // children often precede their parents in the file (forward references). SEND/RECV hubs need a
  // peer, so a one-rank graph uses collectives for every hub.
  uint32_t shuffle_window = 0;
  uint64_t seed = 1;
};

using trace::WriteFormat;

// Writes <prefix>.<rank>.et (".et.gz" for gzip, ".json" for feeder JSON) for every rank and
// returns the paths. Throws std::invalid_argument for a spec that makes no sense (0 ranks, ...)
// and std::runtime_error naming the file when it cannot be written.
std::vector<std::string> write_microbench(const MicrobenchSpec& spec, const std::string& prefix,
                                          WriteFormat format = WriteFormat::kBinary);
std::vector<std::string> write_graph(const GraphSpec& spec, const std::string& prefix,
                                     WriteFormat format = WriteFormat::kBinary);

// "<prefix>.<rank>.et", ".et.gz" or ".json" by format.
std::string rank_file_path(const std::string& prefix, int32_t rank, WriteFormat format);

// The GlobalMetadata every generator writes: schema version and a "generator" attribute of
// "etwire synth <description>".
trace::TraceMetadata synth_metadata(const std::string& description);

}  // namespace etwire::synth
