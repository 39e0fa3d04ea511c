#include "cli/synth_output.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

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

std::optional<std::string> synth_nodes_problem(uint64_t ranks, uint64_t nodes_per_rank) {
  const unsigned __int128 nodes = static_cast<unsigned __int128>(ranks) * nodes_per_rank;
  if (nodes <= kMaxSynthNodes) return std::nullopt;
  return fmt::format("{} rank{} x {} nodes is more than the {} nodes etwire synth writes at most",
                     ranks, ranks == 1 ? "" : "s", nodes_per_rank, kMaxSynthNodes);
}

SynthStaging::SynthStaging(const std::string& prefix) {
  namespace fs = std::filesystem;
  const fs::path path(prefix);
  const fs::path parent = path.parent_path();
  dir_ = parent.string();
  if (!parent.empty()) fs::create_directories(parent);
  temporary_ = (fs::path(dir_.empty() ? "." : dir_) /
                fmt::format(".{}.{}.synth.tmp", path.filename().string(), ::getpid()))
                   .string();
  // mkdir fails on anything already there, a planted link included: the directory is ours.
  if (::mkdir(temporary_.c_str(), 0700) != 0) {
    throw std::runtime_error(
        fmt::format("{}: cannot create: {}", temporary_, std::strerror(errno)));
  }
  staged_prefix_ = (fs::path(temporary_) / path.filename()).string();
}

SynthStaging::~SynthStaging() {
  if (committed_) return;
  std::error_code ignored;
  std::filesystem::remove_all(temporary_, ignored);
}

std::string SynthStaging::final_path(const std::string& staged) const {
  const std::filesystem::path name = std::filesystem::path(staged).filename();
  return dir_.empty() ? name.string() : (std::filesystem::path(dir_) / name).string();
}

void SynthStaging::commit() {
  namespace fs = std::filesystem;
  for (const fs::directory_entry& entry : fs::directory_iterator(temporary_)) {
    const fs::path to = fs::path(final_path(entry.path().string()));
    // rename replaces a file (or a link) at `to` in one step, never writing through a link.
    if (::rename(entry.path().c_str(), to.c_str()) != 0) {
      throw std::runtime_error(
          fmt::format("{}: cannot move into place: {}", to.string(), std::strerror(errno)));
    }
  }
  fs::remove(temporary_);
  committed_ = true;
}

std::string synth_files_line(const std::vector<std::string>& paths) {
  uint64_t total = 0;
  for (const auto& p : paths) total += std::filesystem::file_size(p);
  return fmt::format("wrote {} rank file{} ({}): {}{}\n", paths.size(),
                     paths.size() == 1 ? "" : "s", format_bytes(total), paths.front(),
                     paths.size() > 1 ? " ..." : "");
}

}  // namespace etwire::cli
