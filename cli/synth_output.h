// What every `etwire synth` subcommand shares: the output prefix and format options, the cap on
// what it writes, the staging of its files, and the one-line report of the files written.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace/et_writer.h"

namespace etwire::cli {

struct SynthOutput {
  std::string prefix;
  std::string format = "et";
};

// -o/--out PREFIX (required) and --format et|et.gz|json.
void add_synth_output_options(CLI::App* cmd, SynthOutput& output);
trace::WriteFormat synth_write_format(const std::string& format);
// The most trace nodes one `etwire synth` writes, over all its rank files: about 11 GiB in .et (45
// bytes a node of synth graph), 46 GiB in JSON. The shipped trace sets have a few thousand; a shape
// past it is refused before anything is written, rather than filling the disk.
inline constexpr uint64_t kMaxSynthNodes = uint64_t{1} << 28;

// The refusal of `ranks` x `nodes_per_rank` nodes past kMaxSynthNodes ("16 ranks x ... nodes
// is ..."), nullopt within it. 128-bit, so no product wraps.
std::optional<std::string> synth_nodes_problem(uint64_t ranks, uint64_t nodes_per_rank);

// The files of one `etwire synth`, written into a temporary directory beside the prefix
// (".NAME.<pid>.synth.tmp", created new) and moved into place by commit(): a write that fails
// half-way, or a process that dies, leaves nothing at the prefix (the destructor removes the
// temporary directory; a killed process leaves it, hidden, beside the prefix).
class SynthStaging {
 public:
  // Creates the prefix's directory and the temporary one; throws std::runtime_error when it
  // cannot.
  explicit SynthStaging(const std::string& prefix);
  ~SynthStaging();
  SynthStaging(const SynthStaging&) = delete;
  SynthStaging& operator=(const SynthStaging&) = delete;

  // The prefix the writer writes under: in the temporary directory.
  const std::string& prefix() const { return staged_prefix_; }
  // Where a file written under prefix() goes.
  std::string final_path(const std::string& staged) const;
  // Renames every file of the temporary directory into place, then removes it.
  void commit();

 private:
  std::string dir_;  // the prefix's directory as given, empty for a bare name
  std::string temporary_;
  std::string staged_prefix_;
  bool committed_ = false;
};
// "wrote N rank files (size): first ...".
std::string synth_files_line(const std::vector<std::string>& paths);

}  // namespace etwire::cli
