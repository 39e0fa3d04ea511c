// Every process of a run must have loaded the same configuration and traces: each reports a
// digest of what it loaded (or why it could not load it), and all compare the lot. The message
// names the processes and hosts that differ from process 0, so an operator knows where to look.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace etwire::cluster {

struct ProcessReport {
  std::string host;    // the machine it runs on
  std::string digest;  // "fnv1a64:..." of config and traces; empty when loading failed
  std::string error;   // why loading failed; empty when it did not
};

// A report as one string for Session::all_gather, and back.
std::string encode_report(const ProcessReport& report);
ProcessReport decode_report(const std::string& text);

// nullopt when every process loaded the same; otherwise one message for all of them (the same
// text on every process, which all exit with). `reports` are in process (MPI rank) order.
std::optional<std::string> disagreement(const std::vector<ProcessReport>& reports);

}  // namespace etwire::cluster
