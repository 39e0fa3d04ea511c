#include "engine/config_digest.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string_view>

namespace etwire::engine {

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

}  // namespace

std::string config_digest(const std::string& config_file,
                          const std::vector<std::string>& overrides) {
  std::ifstream in(config_file, std::ios::binary);
  if (!in) {
    throw std::runtime_error(fmt::format("{}: cannot read: {}", config_file, std::strerror(errno)));
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  uint64_t hash = fnv1a(kFnvOffset, text);
  // A separator no YAML file ends with keeps "a" + "--set b" apart from "a--set b".
  for (const std::string& override : overrides) {
    hash = fnv1a(hash, std::string_view("\0--set ", 7));
    hash = fnv1a(hash, override);
  }
  return fmt::format("fnv1a64:{:016x}", hash);
}

}  // namespace etwire::engine
