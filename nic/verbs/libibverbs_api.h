// The verbs seam served by libibverbs itself: real devices, protection domains, memory regions,
// completion queues and RC queue pairs of an RDMA NIC. Counters come from the device's sysfs
// files (rnic_counters.h).
#pragma once

#include <memory>
#include <string>

#include "nic/verbs/verbs_api.h"

namespace etwire::nic::verbs {

class LibibverbsProvider final : public VerbsProvider {
 public:
  // `sysfs_root` is where the devices' counters are ("/sys/class/infiniband").
  explicit LibibverbsProvider(std::string sysfs_root = "/sys/class/infiniband")
      : sysfs_root_(std::move(sysfs_root)) {}
  // Throws NoRdmaDevice (rdma_devices.h) when libibverbs lists no device at all or none with this
  // name (the names there are listed), VerbsError when it cannot be opened.
  std::unique_ptr<VerbsDevice> open(const std::string& name) override;

 private:
  std::string sysfs_root_;
};

}  // namespace etwire::nic::verbs
