#include "dataplane/loopback/twin_rig.h"

namespace etwire::dataplane {

TwinRig::TwinRig(const config::RunConfig& config, const std::vector<twin::TwinPortSpec>& specs,
                 const twin::FabricLayout* layout)
    : twin_(
          layout != nullptr
              ? std::make_unique<twin::FabricTwin>(config.fabric, *layout, clock_, config.run.seed)
              : std::make_unique<twin::FabricTwin>(config.fabric, specs, clock_, config.run.seed)) {
}

}  // namespace etwire::dataplane
