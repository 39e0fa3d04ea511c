// A fake of what an mlx5 NIC shows in sysfs for DCQCN, for tests that read or write it: the GID
// entry's netdev under infiniband/, and the netdev's ecn/ files under net/.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

namespace etwire::testing {

// NVIDIA's documented firmware defaults, file by file relative to ecn/ (priority 3 enabled).
const std::map<std::string, uint64_t>& nvidia_dcqcn_defaults();

// Writes `path` with `text` and a newline, making its directories.
void put_file(const std::filesystem::path& path, const std::string& text);

// Device `device` port 1's GID `gid_index` on netdev `netdev`, whose ecn/ files hold `values`
// (the files of nvidia_dcqcn_defaults() not in `values` at 0, every enable/<prio> at 0 unless
// given), plus the files etwire leaves alone (rpg_max_rate, cnp_dscp, cnp_802p_prio).
void write_mlx5_ecn(const std::filesystem::path& infiniband, const std::filesystem::path& net,
                    const std::string& device, const std::string& netdev, uint32_t gid_index,
                    const std::map<std::string, uint64_t>& values);

}  // namespace etwire::testing
