// DcqcnConfig translated into mlx5's ecn sysfs files, read back and written.
#include "nic/verbs/dcqcn_sysfs.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace etwire::nic::verbs {

namespace {

// The file names are those NVIDIA's mlx5_core creates (en_sysfs.c); the units are those of
// NVIDIA's DCQCN parameter documentation, where the same parameters carry the NVConfig names
// (RPG_TIME_RESET ...) and firmware defaults that DcqcnConfig's defaults reproduce.
struct Entry {
  std::string_view field;
  std::string_view file;  // relative to ecn/
  std::optional<uint64_t> wanted;
};

// Nanoseconds to the microseconds of the timers (dce_tcp_rtt, rate_reduce_monitor_period,
// rpg_time_reset, min_time_between_cnps), to the nearest.
uint64_t to_microseconds(uint64_t ns) {
  return (ns + 500) / 1000;
}

// Bits per second to the Mb/s of the rate parameters, to the nearest.
uint64_t to_megabits(uint64_t bps) {
  return (bps + 500'000) / 1'000'000;
}

uint64_t round_clamped(double value, double low, double high) {
  return static_cast<uint64_t>(std::lround(std::clamp(value, low, high)));
}

// The settings etwire manages, parameters before the enable flags (apply writes in this order).
// Device files without a DcqcnConfig member are left as they are: rpg_max_rate (0: line rate),
// cnp_dscp and cnp_802p_prio (the CNP's own DSCP and PCP).
std::vector<Entry> entries(const config::DcqcnConfig& c) {
  std::vector<Entry> out;
  // Alpha is a 10-bit fixed-point fraction. On a CNP the device sets
  // alpha <- (G * alpha + (1024 - G) * 1024) / 1024 with G = dce_tcp_g, and alpha <- G * alpha /
  // 1024 in a quiet period; etwire's gain g is the weight of the new sample, so g = (1024 - G) /
  // 1024 and G = 1024 (1 - g): 5/1024 <-> 1019. The field holds 0..1023, so g = 0 lands on 1023.
  out.push_back({"alpha_gain", "roce_rp/dce_tcp_g",
                 round_clamped(1024.0 * (1.0 - c.alpha_gain), 0.0, 1023.0)});
  out.push_back(
      {"alpha_update_period_ns", "roce_rp/dce_tcp_rtt", to_microseconds(c.alpha_update_period_ns)});
  // Same fixed point; 1.0 does not fit and becomes 1023/1024.
  out.push_back({"initial_alpha", "roce_rp/initial_alpha_value",
                 round_clamped(1024.0 * c.initial_alpha, 0.0, 1023.0)});
  out.push_back({"rate_reduce_period_ns", "roce_rp/rate_reduce_monitor_period",
                 to_microseconds(c.rate_reduce_period_ns)});
  // A cut multiplies the rate by (1 - alpha_fixed / 2^rpg_gd) with alpha_fixed = 1024 alpha, so
  // etwire's rate_cut_scale is 2^(10 - rpg_gd): 0.5 <-> 11, the documented default. This relation
  // is inferred from that default and the DCQCN paper's alpha/2, not read in NVIDIA's
  // documentation; a scale that is not a power of two goes to the nearest one. A scale of 0 or
  // less has no device equivalent and is left unset.
  std::optional<uint64_t> gd;
  if (c.rate_cut_scale > 0.0) gd = round_clamped(10.0 - std::log2(c.rate_cut_scale), 0.0, 31.0);
  out.push_back({"rate_cut_scale", "roce_rp/rpg_gd", gd});
  // rpg_min_dec_fac is the smallest share of the rate (in percent) a single cut may leave, so 25
  // lets a cut remove up to 75 % and 100 forbids cuts: 100 (1 - max_rate_cut).
  out.push_back({"max_rate_cut", "roce_rp/rpg_min_dec_fac",
                 round_clamped(100.0 * (1.0 - c.max_rate_cut), 0.0, 100.0)});
  out.push_back({"rate_increase_period_ns", "roce_rp/rpg_time_reset",
                 to_microseconds(c.rate_increase_period_ns)});
  out.push_back({"rate_increase_bytes", "roce_rp/rpg_byte_reset", c.rate_increase_bytes});
  out.push_back({"fast_recovery_stages", "roce_rp/rpg_threshold", c.fast_recovery_stages});
  out.push_back(
      {"additive_increase_bps", "roce_rp/rpg_ai_rate", to_megabits(c.additive_increase_bps)});
  out.push_back({"hyper_increase_bps", "roce_rp/rpg_hai_rate", to_megabits(c.hyper_increase_bps)});
  out.push_back({"min_rate_bps", "roce_rp/rpg_min_rate", to_megabits(c.min_rate_bps)});
  out.push_back({"rate_on_first_cnp_bps", "roce_rp/rate_to_set_on_first_cnp",
                 to_megabits(c.rate_on_first_cnp_bps)});
  out.push_back({"clamp_target_rate", "roce_rp/clamp_tgt_rate", c.clamp_target_rate ? 1u : 0u});
  out.push_back({"clamp_target_rate_after_time_increase", "roce_rp/clamp_tgt_rate_after_time_inc",
                 c.clamp_target_rate_after_time_increase ? 1u : 0u});
  // Microseconds per NVIDIA's documentation, though some firmware reports 0 and others 4 by
  // default; the unit is the least certain of the set.
  out.push_back({"min_time_between_cnps_ns", "roce_np/min_time_between_cnps",
                 to_microseconds(c.min_time_between_cnps_ns)});
  // One switch in etwire; two on the device, the sender's and the receiver's halves, each one
  // file per priority (the caller appends the priority).
  out.push_back({"enabled", "roce_rp/enable", c.enabled ? 1u : 0u});
  out.push_back({"enabled", "roce_np/enable", c.enabled ? 1u : 0u});
  return out;
}

// A small sysfs text file, whitespace trimmed at the end; nullopt when it cannot be read (for
// ndevs entries of unused GIDs the kernel answers the read with an error).
std::optional<std::string> read_text(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::array<char, 256> buffer{};
  ssize_t length = 0;
  do {
    length = ::read(fd, buffer.data(), buffer.size());
  } while (length < 0 && errno == EINTR);
  ::close(fd);
  if (length < 0) return std::nullopt;
  std::string text(buffer.data(), static_cast<size_t>(length));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\t'))
    text.pop_back();
  return text;
}

std::optional<uint64_t> read_number(const std::string& path) {
  const std::optional<std::string> text = read_text(path);
  if (!text || text->empty()) return std::nullopt;
  uint64_t value = 0;
  for (const char c : *text) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

// Empty on success, else the system's words for the failure. No O_CREAT: sysfs files cannot be
// created, and a missing one must say so. One write() call, as sysfs takes a value per write.
std::string write_number(const std::string& path, uint64_t value) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return std::strerror(errno);
  const std::string text = fmt::format("{}\n", value);
  ssize_t written = 0;
  do {
    written = ::write(fd, text.data(), text.size());
  } while (written < 0 && errno == EINTR);
  const int write_errno = errno;
  const bool closed = ::close(fd) == 0;
  if (written < 0) return std::strerror(write_errno);
  if (static_cast<size_t>(written) != text.size()) return "short write";
  // Some drivers report a rejected value only when the file is closed.
  if (!closed) return std::strerror(errno);
  return {};
}

bool is_directory(const std::string& path) {
  std::error_code error;
  return std::filesystem::is_directory(path, error);
}

}  // namespace

DcqcnSysfs::DcqcnSysfs(std::string ib_root, std::string net_root, std::string device, uint32_t port,
                       uint32_t gid_index, uint8_t priority)
    : device_(std::move(device)), port_(port), priority_(priority) {
  if (priority_ > 7) {
    why_unavailable_ = fmt::format("{} port {}: DCQCN priority {} is not a priority (0..7)",
                                   device_, port_, priority_);
    return;
  }
  // The GID entry's netdev is the exact answer (it is where the RoCE traffic leaves); the PCI
  // function's net directory is the fallback for kernels without gid_attrs/ndevs.
  const std::string ndev_file =
      fmt::format("{}/{}/ports/{}/gid_attrs/ndevs/{}", ib_root, device_, port_, gid_index);
  if (std::optional<std::string> name = read_text(ndev_file); name && !name->empty()) {
    netdev_ = *name;
  }
  const std::string net_dir = fmt::format("{}/{}/device/net", ib_root, device_);
  if (netdev_.empty() && is_directory(net_dir)) {
    std::vector<std::string> names;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(net_dir, error))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    if (names.size() == 1) {
      netdev_ = names.front();
    } else {
      // Several netdevs on one PCI function (two-port functions): dev_port is 0-based.
      for (const std::string& name : names) {
        const std::optional<uint64_t> dev_port = read_number(net_dir + "/" + name + "/dev_port");
        if (dev_port && *dev_port + 1 == port_) {
          netdev_ = name;
          break;
        }
      }
    }
  }
  if (netdev_.empty()) {
    why_unavailable_ = fmt::format(
        "{} port {}: no network device found (neither {} nor {} names one for the port)", device_,
        port_, ndev_file, net_dir);
    return;
  }
  const std::string netdev_dir = fmt::format("{}/{}", net_root, netdev_);
  ecn_dir_ = netdev_dir + "/ecn";
  if (!is_directory(netdev_dir)) {
    why_unavailable_ = fmt::format("{} port {}: its network device {} has no {}", device_, port_,
                                   netdev_, netdev_dir);
    return;
  }
  for (const char* half : {"roce_rp", "roce_np"}) {
    if (!is_directory(fmt::format("{}/{}", ecn_dir_, half))) {
      why_unavailable_ = fmt::format(
          "{} port {} has no ecn/{} under {} (not an mlx5 device, or a driver without NVIDIA's "
          "ecn sysfs: the upstream kernel keeps DCQCN settings in debugfs)",
          device_, port_, half, netdev_dir);
      return;
    }
  }
}

std::vector<DcqcnSetting> DcqcnSysfs::read_back(const config::DcqcnConfig& wanted) const {
  std::vector<DcqcnSetting> settings;
  if (!available()) return settings;
  for (const Entry& entry : entries(wanted)) {
    if (!entry.wanted) continue;
    std::string file = fmt::format("{}/{}", ecn_dir_, entry.file);
    // The enable flags are one file per priority inside the enable directory.
    if (entry.file.ends_with("/enable")) file = fmt::format("{}/{}", file, priority_);
    DcqcnSetting setting;
    setting.field = entry.field;
    setting.device_value = read_number(file);
    setting.file = std::move(file);
    setting.wanted = *entry.wanted;
    settings.push_back(std::move(setting));
  }
  return settings;
}

std::vector<std::string> DcqcnSysfs::apply(const config::DcqcnConfig& wanted) const {
  if (!available()) return {why_unavailable_};
  std::vector<std::string> failures;
  for (const DcqcnSetting& setting : read_back(wanted)) {
    if (setting.device_value == setting.wanted) continue;
    const std::string error = write_number(setting.file, setting.wanted);
    if (!error.empty()) {
      failures.push_back(fmt::format("{} port {}: cannot set {} to {} ({}): {}", device_, port_,
                                     setting.file, setting.wanted, setting.field, error));
    }
  }
  return failures;
}

}  // namespace etwire::nic::verbs
