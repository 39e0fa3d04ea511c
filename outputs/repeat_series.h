// The results of a run repeated (`etwire run --repeat N`): one results directory per repeat,
// <results>/repeat-K (K from 1), each as a single run writes it, and <results>/repeats.json that
// lists them in order with their seeds and exit codes. It is rewritten (atomically) after each
// repeat, so an interrupted series still lists the repeats it finished. `etwire compare` takes
// such a directory as a side of repeated runs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace etwire::outputs {

inline constexpr const char* kRepeatsFile = "repeats.json";

// "repeat-3": where repeat 3 of a series goes, under the series' results directory.
std::string repeat_dir_name(uint32_t repeat);

struct RepeatEntry {
  uint32_t repeat = 0;  // from 1
  uint64_t seed = 0;
  int exit_code = 0;
};

// Writes <results>/repeats.json: `planned` repeats, those in `done` run so far. Throws
// std::runtime_error("<path>: <reason>") when it cannot be written.
void write_repeats_json(const std::filesystem::path& results, uint32_t planned,
                        const std::vector<RepeatEntry>& done);

// A results directory that names repeated runs it cannot be read as: a repeats.json that is not
// what etwire writes, or one beside a summary.json of a single run.
class RepeatSeriesError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The results directories of the repeats `dir` holds (repeats.json and no summary.json), in order;
// nullopt when `dir` holds no repeats.json. Throws RepeatSeriesError naming the file and what is
// wrong.
std::optional<std::vector<std::filesystem::path>> read_repeat_dirs(
    const std::filesystem::path& dir);

}  // namespace etwire::outputs
