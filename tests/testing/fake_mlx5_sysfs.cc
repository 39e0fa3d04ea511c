#include "tests/testing/fake_mlx5_sysfs.h"

#include <fstream>

namespace etwire::testing {

const std::map<std::string, uint64_t>& nvidia_dcqcn_defaults() {
  static const std::map<std::string, uint64_t> defaults{
      {"roce_rp/dce_tcp_g", 1019},
      {"roce_rp/dce_tcp_rtt", 1},
      {"roce_rp/initial_alpha_value", 1023},
      {"roce_rp/rate_reduce_monitor_period", 4},
      {"roce_rp/rpg_gd", 11},
      {"roce_rp/rpg_min_dec_fac", 50},
      {"roce_rp/rpg_time_reset", 300},
      {"roce_rp/rpg_byte_reset", 32767},
      {"roce_rp/rpg_threshold", 1},
      {"roce_rp/rpg_ai_rate", 5},
      {"roce_rp/rpg_hai_rate", 50},
      {"roce_rp/rpg_min_rate", 1},
      {"roce_rp/rate_to_set_on_first_cnp", 0},
      {"roce_rp/clamp_tgt_rate", 0},
      {"roce_rp/clamp_tgt_rate_after_time_inc", 1},
      {"roce_np/min_time_between_cnps", 4},
      {"roce_rp/enable/3", 1},
      {"roce_np/enable/3", 1},
  };
  return defaults;
}

void put_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text << "\n";
}

void write_mlx5_ecn(const std::filesystem::path& infiniband, const std::filesystem::path& net,
                    const std::string& device, const std::string& netdev, uint32_t gid_index,
                    const std::map<std::string, uint64_t>& values) {
  put_file(infiniband / device / "ports/1/gid_attrs/ndevs" / std::to_string(gid_index), netdev);
  const std::filesystem::path ecn = net / netdev / "ecn";
  for (const char* half : {"roce_rp", "roce_np"}) {
    for (int prio = 0; prio < 8; ++prio)
      put_file(ecn / half / "enable" / std::to_string(prio), "0");
  }
  for (const auto& [file, value] : nvidia_dcqcn_defaults()) put_file(ecn / file, "0");
  for (const auto& [file, value] : values) put_file(ecn / file, std::to_string(value));
  put_file(ecn / "roce_rp/rpg_max_rate", "0");
  put_file(ecn / "roce_np/cnp_dscp", "48");
  put_file(ecn / "roce_np/cnp_802p_prio", "6");
}

}  // namespace etwire::testing
