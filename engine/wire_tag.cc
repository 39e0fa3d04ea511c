#include "engine/wire_tag.h"

namespace etwire::engine {

uint32_t instance_wire_hash(const InstanceKey& key) {
  // FNV-1a over the key's fields, folded to 31 bits.
  uint64_t hash = 0xcbf29ce484222325ull;
  auto mix = [&](uint64_t value) {
    for (int byte = 0; byte < 8; ++byte) {
      hash ^= (value >> (byte * 8)) & 0xFF;
      hash *= 0x100000001b3ull;
    }
  };
  mix(key.job);
  mix(static_cast<uint64_t>(key.group));
  mix(key.sequence);
  mix(static_cast<uint64_t>(static_cast<uint32_t>(key.src)));
  mix(static_cast<uint64_t>(static_cast<uint32_t>(key.dst)));
  mix(static_cast<uint64_t>(static_cast<uint32_t>(key.tag)));
  const auto folded = static_cast<uint32_t>((hash >> 31) ^ hash) & 0x7FFFFFFFu;
  // 0 with the last bit clear would be no tag at all (the immediate then carries the flow id).
  return folded == 0 ? 1 : folded;
}

}  // namespace etwire::engine
