// What every `etwire synth` subcommand shares: the output prefix and format options, making the
// output's directory, and the one-line report of the files written.
#pragma once

#include <CLI/CLI.hpp>

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
// Creates the directory the prefix lives in.
void make_prefix_dir(const std::string& prefix);
// "wrote N rank files (size): first ...".
std::string synth_files_line(const std::vector<std::string>& paths);

}  // namespace etwire::cli
