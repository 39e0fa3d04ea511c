// DCQCN settings of an NVIDIA (mlx5) RNIC, read back and applied through the per-netdev sysfs
// files of NVIDIA's driver: /sys/class/net/<netdev>/ecn/roce_rp (reaction point: the sender's
// rate rules) and .../ecn/roce_np (notification point: CNP pacing), each with enable/<priority>.
// The hardware runs DCQCN itself on a real RNIC, so etwire's DcqcnConfig is not executed there:
// it is translated into the device's units, compared with what the device holds, and written
// where they differ.
//
// The ecn directory comes with MLNX_OFED / DOCA-OFED's mlx5_core (en_sysfs.c); the upstream
// kernel driver has no such files (it offers the same parameters in debugfs, cc_params), so a
// device on an upstream driver reports itself unavailable here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/dcqcn_config.h"

namespace etwire::nic::verbs {

// One device file next to what the configuration asks of it.
struct DcqcnSetting {
  std::string_view field;  // the DcqcnConfig member it comes from: "alpha_gain"
  std::string file;        // full path: ".../ecn/roce_rp/dce_tcp_g"
  // What the file holds now; nullopt when it is missing or holds no number.
  std::optional<uint64_t> device_value;
  uint64_t wanted = 0;  // the configuration in the device's units
};

class DcqcnSysfs {
 public:
  // `ib_root` is "/sys/class/infiniband" and `net_root` "/sys/class/net" in production; tests
  // pass directories laid out the same way. The port's netdev is the one its GID entry
  // `gid_index` is bound to (ports/<port>/gid_attrs/ndevs/<gid_index>), else the device's only
  // (or port-matching) entry under <device>/device/net. `priority` (0..7) is the one whose
  // enable/<priority> files carry `enabled`.
  DcqcnSysfs(std::string ib_root, std::string net_root, std::string device, uint32_t port,
             uint32_t gid_index, uint8_t priority);

  // The netdev was found and has both ecn/roce_rp and ecn/roce_np.
  bool available() const { return why_unavailable_.empty(); }
  // Empty when available(); otherwise one sentence for the operator.
  const std::string& why_unavailable() const { return why_unavailable_; }
  // The netdev of the port; empty when none was found.
  const std::string& netdev() const { return netdev_; }

  // Every setting etwire manages: the device's value next to `wanted` converted to the device's
  // units. Empty when !available(). Never throws for an unreadable file (device_value is then
  // nullopt).
  std::vector<DcqcnSetting> read_back(const config::DcqcnConfig& wanted) const;

  // Writes the settings whose device value differs from the wanted one: the parameters first, the
  // enable flags last, so that DCQCN comes on with its parameters already in place. Returns one
  // message per setting that could not be written, with the system's words for why (Permission
  // denied, Read-only file system, Invalid argument, ...); just why_unavailable() when
  // !available(). Never throws for a file that cannot be written.
  std::vector<std::string> apply(const config::DcqcnConfig& wanted) const;

 private:
  std::string device_;
  uint32_t port_ = 0;
  uint8_t priority_ = 0;
  std::string netdev_;
  std::string ecn_dir_;  // <net_root>/<netdev>/ecn
  std::string why_unavailable_;
};

}  // namespace etwire::nic::verbs
