#include "outputs/repeat_series.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <system_error>

#include "common/bounded_file.h"
#include "outputs/output_file.h"

namespace etwire::outputs {

namespace {

// A series of at most a few thousand repeats is some tens of KiB.
constexpr uint64_t kMaxRepeatsJsonBytes = uint64_t{1} << 20;

[[noreturn]] void refuse(const std::filesystem::path& path, const std::string& problem) {
  throw RepeatSeriesError(fmt::format("{}: {}", path.string(), problem));
}

// A whole number of `json` in [low, high], or the file refused naming `where`.
uint64_t whole_number(const nlohmann::json& json, const std::filesystem::path& path,
                      const std::string& where, uint64_t low, uint64_t high) {
  if (!json.is_number_unsigned() || json.get<uint64_t>() < low || json.get<uint64_t>() > high) {
    refuse(path, fmt::format("{}: expected a whole number from {} to {}", where, low, high));
  }
  return json.get<uint64_t>();
}

}  // namespace

std::string repeat_dir_name(uint32_t repeat) {
  return fmt::format("repeat-{}", repeat);
}

void write_repeats_json(const std::filesystem::path& results, uint32_t planned,
                        const std::vector<RepeatEntry>& done) {
  nlohmann::json runs = nlohmann::json::array();
  for (const RepeatEntry& entry : done) {
    runs.push_back({{"repeat", entry.repeat},
                    {"dir", repeat_dir_name(entry.repeat)},
                    {"seed", entry.seed},
                    {"exit_code", entry.exit_code}});
  }
  const nlohmann::json file = {{"planned", planned}, {"runs", std::move(runs)}};
  write_file_atomically((results / kRepeatsFile).string(), file.dump(2) + "\n");
}

std::optional<std::vector<std::filesystem::path>> read_repeat_dirs(
    const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / kRepeatsFile;
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return std::nullopt;
  if (std::filesystem::exists(dir / "summary.json", error)) {
    refuse(path, fmt::format("the directory holds both a series of repeated runs and a single "
                             "run's summary.json; name the runs to compare ({}/repeat-1,...) or "
                             "remove the stale one",
                             dir.string()));
  }
  std::string text;
  try {
    text = read_bounded_file(path.string(), kMaxRepeatsJsonBytes, "a repeats.json");
  } catch (const InputFileError& e) {
    refuse(path, e.error_number() != 0 ? std::strerror(e.error_number()) : e.what());
  }
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object()) {
    refuse(path, "not valid JSON: expected an object as `etwire run --repeat` writes it");
  }
  if (!json.contains("planned") || !json.contains("runs") || !json["runs"].is_array()) {
    refuse(path, "expected the keys planned and runs (an array)");
  }
  const uint64_t planned = whole_number(json["planned"], path, "planned", 1, UINT32_MAX);
  const nlohmann::json& runs = json["runs"];
  if (runs.empty()) refuse(path, "runs: no repeat finished, so there is nothing to compare");
  if (runs.size() > planned) {
    refuse(path,
           fmt::format("runs: {} repeats listed, more than the {} planned", runs.size(), planned));
  }
  std::vector<std::filesystem::path> dirs;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string where = fmt::format("runs[{}]", i);
    const nlohmann::json& run = runs[i];
    if (!run.is_object() || !run.contains("repeat") || !run.contains("dir")) {
      refuse(path, fmt::format("{}: expected an object with repeat and dir", where));
    }
    // Repeats in order, each in the directory its number names: a listed path can never lead
    // outside the series.
    const auto repeat =
        static_cast<uint32_t>(whole_number(run["repeat"], path, where + ".repeat", i + 1, i + 1));
    if (!run["dir"].is_string() || run["dir"].get<std::string>() != repeat_dir_name(repeat)) {
      refuse(path, fmt::format("{}.dir: expected \"{}\"", where, repeat_dir_name(repeat)));
    }
    dirs.push_back(dir / repeat_dir_name(repeat));
  }
  return dirs;
}

}  // namespace etwire::outputs
