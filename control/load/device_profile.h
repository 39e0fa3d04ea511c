// A device profile: the device under test as the fabric twin models it, written by `etwire
// calibrate` and read by `run --predict --profile` and `replay --profile`. The file is YAML; its
// `set` list holds overrides (KEY.PATH=VALUE, as --set takes them) of the twin's model: keys under
// `fabric.` (but not `fabric.profile`: a profile names no other) and the speed of a port
// (`ports[N].speed`, the rate of the device's queue toward that port). A configuration names its
// profile with `fabric.profile` (config/fabric_config.h). Everything else in the file (how the
// profile was fitted, its residuals) is for people.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace etwire::control {

// A profile that cannot be read: "<path>:<line>:<col>: <what>" (or "<path>: <what>").
class DeviceProfileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The overrides of the profile at `path`, in its order. Throws DeviceProfileError.
std::vector<std::string> read_device_profile(const std::string& path);

// Whether `key` (before the '=') is one a profile may set.
bool profile_may_set(const std::string& key);

}  // namespace etwire::control
