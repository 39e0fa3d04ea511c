#include "control/plan/inputs_digest.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "control/plan/run_plan.h"

namespace etwire::control {

namespace {

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;
constexpr uint64_t kFnvPrime = 0x100000001b3ull;

uint64_t fnv1a(uint64_t hash, std::string_view bytes) {
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= kFnvPrime;
  }
  return hash;
}

// Hashes the file in chunks: a run's trace files can be far larger than is worth holding at once.
uint64_t hash_file(uint64_t hash, const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot read: {}", file, std::strerror(errno)));
  std::vector<char> chunk(size_t{1} << 16);
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
    hash = fnv1a(hash, std::string_view(chunk.data(), static_cast<size_t>(in.gcount())));
  }
  if (in.bad()) throw std::runtime_error(fmt::format("{}: read error", file));
  return hash;
}

uint64_t config_hash(const std::string& config_text, const std::vector<std::string>& overrides) {
  uint64_t hash = fnv1a(kFnvOffset, config_text);
  // A separator no YAML file ends with keeps "a" + "--set b" apart from "a--set b".
  for (const std::string& override : overrides) {
    hash = fnv1a(hash, std::string_view("\0--set ", 7));
    hash = fnv1a(hash, override);
  }
  return hash;
}

}  // namespace

std::string config_digest(const std::string& config_text,
                          const std::vector<std::string>& overrides) {
  return fmt::format("fnv1a64:{:016x}", config_hash(config_text, overrides));
}

std::string inputs_digest(const RunPlan& plan) {
  uint64_t hash = config_hash(plan.text, plan.settings);
  auto add_file = [&](const std::string& file) {
    hash = fnv1a(hash, std::string_view("\0file ", 6));
    hash = fnv1a(hash, std::filesystem::path(file).filename().string());
    hash = hash_file(hash, file);
  };
  for (size_t j = 0; j < plan.config.workload.jobs.size(); ++j) {
    if (j < plan.trace_sets.size() && plan.trace_sets[j]) {
      for (const trace::RankFile& rank : plan.trace_sets[j]->files()) add_file(rank.path);
    }
    const std::string& comm_groups = plan.config.workload.jobs[j].comm_groups;
    if (!comm_groups.empty()) add_file(comm_groups);
  }
  return fmt::format("fnv1a64:{:016x}", hash);
}

}  // namespace etwire::control
