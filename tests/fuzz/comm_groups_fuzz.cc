// The comm-group JSON reader ({"<id>": [ranks...]}), and the pg_name rule that looks groups up in
// it. TraceError is how the reader refuses bad input; anything else escaping is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "trace/comm_groups.h"
#include "trace/trace_error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace etwire;
  const std::string text(reinterpret_cast<const char*>(data), size);
  // The same bytes as a pg_name: names come from traces, as untrusted as the file.
  if (auto ref = trace::parse_pg_name(std::string_view(text))) {
    volatile int64_t id = ref->id;
    (void)id;
  }
  try {
    auto groups = trace::CommGroups::from_json_text(text, "fuzz.json");
    for (const auto& [id, ranks] : groups.groups()) {
      if (groups.find(id) == nullptr) __builtin_trap();  // every listed group can be found
      (void)ranks;
    }
  } catch (const trace::TraceError&) {
  }
  return 0;
}
