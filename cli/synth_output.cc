#include "cli/synth_output.h"

#include <fmt/format.h>

#include <filesystem>

#include "common/units.h"

namespace etwire::cli {

void add_synth_output_options(CLI::App* cmd, SynthOutput& output) {
  cmd->add_option("-o,--out", output.prefix,
                  "Output prefix: files are written as PREFIX.<rank>.et (directories are made)")
      ->required();
  cmd->add_option("--format", output.format, "File format: et, et.gz (gzip) or json (feeder JSON)")
      ->check(CLI::IsMember({"et", "et.gz", "gz", "json"}))
      ->capture_default_str();
}

trace::WriteFormat synth_write_format(const std::string& format) {
  if (format == "et") return trace::WriteFormat::kBinary;
  if (format == "et.gz" || format == "gz") return trace::WriteFormat::kBinaryGzip;
  return trace::WriteFormat::kFeederJson;  // validated by CLI11 before we get here
}

void make_prefix_dir(const std::string& prefix) {
  std::filesystem::path parent = std::filesystem::path(prefix).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
}

std::string synth_files_line(const std::vector<std::string>& paths) {
  uint64_t total = 0;
  for (const auto& p : paths) total += std::filesystem::file_size(p);
  return fmt::format("wrote {} rank file{} ({}): {}{}\n", paths.size(),
                     paths.size() == 1 ? "" : "s", format_bytes(total), paths.front(),
                     paths.size() > 1 ? " ..." : "");
}

}  // namespace etwire::cli
