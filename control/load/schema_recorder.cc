#include "control/load/schema_recorder.h"

namespace etwire::control {

namespace {

// How much a kind says: anything read says more than a key only asked about, and a text read on
// the way to a choice says less than the choice.
int definiteness(ValueKind kind) {
  switch (kind) {
    case ValueKind::kAny:
      return 0;
    case ValueKind::kText:
      return 1;
    default:
      return 2;
  }
}

}  // namespace

void SchemaRecorder::expect(std::string_view key_path, ExpectedValue value) {
  auto [it, inserted] = expected_.try_emplace(general_path(key_path), value);
  if (!inserted && definiteness(value.kind) > definiteness(it->second.kind)) {
    it->second = std::move(value);
  }
}

std::string general_path(std::string_view key_path) {
  std::string general;
  general.reserve(key_path.size());
  for (size_t i = 0; i < key_path.size(); ++i) {
    general += key_path[i];
    if (key_path[i] != '[') continue;
    while (i + 1 < key_path.size() && key_path[i + 1] != ']') ++i;
  }
  return general;
}

}  // namespace etwire::control
