// What `etwire compare` needs from one results directory, read back from its summary.json
// (outputs/results_files.cc writes it): per collective type the measured instances' CCT, bus
// bandwidth and ideal %, the FCT percentiles, the JCT of each measured iteration, and the
// congestion counters summed over the ports. Warm-up iterations are left out, as in the console
// report.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace etwire::outputs {

// A results directory that cannot be compared: missing, no summary.json, not valid JSON, or not
// what etwire writes (a key missing, a value of the wrong type, a negative number). The message
// names the path, and the JSON path of a wrong value: "DIR/summary.json: collectives[3].cct_ns:
// ...".
class CompareInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The measured instances of one collective type.
struct CollectiveTypeDigest {
  uint64_t instances = 0;
  double cct_mean_us = 0;
  double cct_p50_us = 0;  // nearest rank, as the FCT percentiles
  // Means over the instances that have a value (summary.json has null for a value that is not a
  // number, such as the ideal % of a run whose goodput is unknown).
  std::optional<double> busbw_GBps;
  std::optional<double> ideal_percent;
};

struct FctDigest {
  uint64_t flows = 0;
  double p50_us = 0;
  double p99_us = 0;
  double max_us = 0;
};

struct RunDigest {
  std::filesystem::path dir;
  std::string run_name;
  std::string status;
  std::string config_digest;
  uint64_t world_size = 0;
  std::string topology;
  std::map<std::string, CollectiveTypeDigest> collectives;  // by type ("all_reduce")
  std::map<std::string, FctDigest> fct;                     // by type
  // (job, iteration) -> JCT in ms, measured iterations in the order of summary.json.
  std::vector<std::pair<std::pair<std::string, int64_t>, double>> jct_ms;
  // The congestion counters of the console's congestion table (dataplane::kPortCounterFields),
  // in its order, by summary.json name: the sum over the ports that count it, nullopt when none
  // does.
  std::vector<std::pair<std::string, std::optional<uint64_t>>> congestion;
};

// Reads DIR/summary.json. Throws CompareInputError naming the path when the directory or the file
// is missing or the file is not a summary.
RunDigest read_run_digest(const std::filesystem::path& dir);

// The digest of a summary.json's text; `source` names it in errors.
RunDigest digest_summary_json(const std::string& text, const std::string& source);

}  // namespace etwire::outputs
