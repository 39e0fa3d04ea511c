// An RDMA device port's counters as etwire's port counters: on a real RNIC the hardware runs the
// transport and DCQCN, so what etwire can report is what the device counts. The kernel shows it
// under /sys/class/infiniband/<dev>/ports/<port>/counters (the InfiniBand port counters, the same
// on every driver) and .../hw_counters (names of the driver's choosing). This file holds the table
// that maps both onto the keys of etwire's port counter table, and a reader that resolves the
// table once for a device port and then reads the counters it found.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace etwire::nic::verbs {

// One file that can feed one of etwire's port counters.
struct RnicCounterSource {
  std::string_view field;   // etwire's port counter name: "cnps_sent"
  std::string_view file;    // under the port directory: "counters/port_xmit_data",
                            // "hw_counters/np_cnp_sent"
  uint32_t scale = 1;       // multiplier to etwire's unit: 4 for the 4-octet data counters
  std::string_view driver;  // who names the file this way: "ib_core", "mlx5", "bnxt_re", "irdma"
};

// Every known source, grouped by field and, within a field, in order of preference. Fields with no
// source anywhere (data_packets, pfc_pauses_sent, pfc_pauses_received) are simply not listed: no
// RDMA driver counts them under /sys/class/infiniband.
std::span<const RnicCounterSource> rnic_counter_sources();

// The counters of one device port, read from sysfs.
class RnicCounterReader {
 public:
  // `sysfs_root` is "/sys/class/infiniband" in production; tests pass a directory laid out the
  // same way. Picks, for every field, the first source whose file exists: a hw_counters file under
  // the port first, then the same name under the device's own hw_counters directory (where some
  // drivers put device-wide counters). Throws std::runtime_error when the port directory is
  // missing, so that a misspelt device is not mistaken for a device without counters.
  RnicCounterReader(std::string sysfs_root, std::string device, uint32_t port);

  // Field name -> the file it is read from, for the fields this device port exposes, in the
  // order of etwire's port counter table. A field not listed is absent: the device does not count
  // it (which is not the same as counting zero).
  const std::vector<std::pair<std::string, std::string>>& exposed() const { return exposed_; }

  // Reads every exposed counter now: field name -> value in etwire's unit, in the order of
  // exposed(). A file that vanished or does not hold a number -> std::runtime_error naming it.
  std::vector<std::pair<std::string, uint64_t>> read() const;

  const std::string& device() const { return device_; }
  uint32_t port() const { return port_; }

 private:
  struct Resolved {
    std::string field;
    std::string path;
    uint32_t scale = 1;
  };

  std::string device_;
  uint32_t port_ = 0;
  std::vector<Resolved> resolved_;
  std::vector<std::pair<std::string, std::string>> exposed_;
};

}  // namespace etwire::nic::verbs
