#include "dataplane/loopback/twin_rig.h"

namespace etwire::dataplane {

TwinRig::TwinRig(const config::RunConfig& config, const std::vector<twin::TwinPortSpec>& specs)
    : twin_(std::make_unique<twin::FabricTwin>(config.fabric, specs, clock_, config.run.seed)) {}

}  // namespace etwire::dataplane
