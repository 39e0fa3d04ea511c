// The run configuration loader: YAML text through the schema, the checks and the plan, with
// `--set` overrides taken from the input's own lines that start with "#set " (a YAML comment, so
// the rest still parses): "#set fabric.link_rate=100Gbps". Traces are not read (read_traces off);
// relative paths resolve in a folder that does not exist, so nothing on disk is read through them.
// The loader reports bad input as diagnostics in its result, never by throwing: any exception
// escaping is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "control/resolve/config_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace etwire;
  const std::string text(reinterpret_cast<const char*>(data), size);
  control::LoadOptions options;
  options.read_traces = false;
  constexpr std::string_view kSet = "#set ";
  constexpr size_t kMaxOverrides = 8;
  for (size_t at = 0; at < text.size() && options.overrides.size() < kMaxOverrides;) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + at, end - at);
    if (line.starts_with(kSet)) options.overrides.emplace_back(line.substr(kSet.size()));
    at = end + 1;
  }
  auto loaded =
      control::load_config_text(text, "fuzz.yaml", "/nonexistent/etwire-fuzz-config", options);
  volatile bool ok = loaded.ok();
  (void)ok;
  return 0;
}
