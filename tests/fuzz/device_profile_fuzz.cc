// A device profile (`--profile` of run, replay and validate): the input is the profile file; what
// it sets is then applied to a fixed configuration of 4 loopback ports as --set overrides, as the
// commands apply it. A profile that cannot be read is refused with DeviceProfileError, one whose
// values do not fit as diagnostics; any other exception escaping is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "control/load/device_profile.h"
#include "control/resolve/config_loader.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

constexpr std::string_view kConfig = R"(run:
  name: device-profile-fuzz
workload:
  jobs:
    - name: ar
      trace: traces/allreduce_8r/allreduce
ports:
  - name: h
    count: 4
    backend: loopback
    speed: 100Gbps
)";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace etwire;
  try {
    control::LoadOptions options;
    options.read_traces = false;
    options.overrides = control::read_device_profile(fuzz::input_as_file(data, size));
    auto loaded = control::load_config_text(std::string(kConfig), "fuzz.yaml",
                                            "/nonexistent/etwire-fuzz-profile", options);
    volatile bool ok = loaded.ok();
    (void)ok;
  } catch (const control::DeviceProfileError&) {
  }
  return 0;
}
