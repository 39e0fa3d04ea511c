// DCQCN (congestion control for RoCEv2): the reaction point's rate rules on the sender and the
// notification point's CNP pacing on the receiver. Defaults are NVIDIA's (mlx5) defaults.
#pragma once

#include <cstdint>

namespace etwire::config {

struct DcqcnConfig {
  bool enabled = true;
  // alpha <- (1 - g) alpha + g on a CNP, (1 - g) alpha per quiet period. NVIDIA's DCE_TCP_G of
  // 1019 means g = 5/1024.
  double alpha_gain = 5.0 / 1024.0;
  uint64_t alpha_update_period_ns = 1'000;  // K: quiet time that decays alpha
  double initial_alpha = 1023.0 / 1024.0;
  // At most one rate cut per period, however many CNPs arrive in it.
  uint64_t rate_reduce_period_ns = 4'000;
  // A cut multiplies the current rate by (1 - alpha x rate_cut_scale): alpha/2 by default.
  double rate_cut_scale = 0.5;
  // The largest fraction of the current rate a single cut may remove (MIN_DEC_FAC 50 %).
  double max_rate_cut = 0.5;
  // Rate-increase events: every timer period T and every B bytes sent since the last cut.
  uint64_t rate_increase_period_ns = 300'000;
  uint64_t rate_increase_bytes = 32'767;
  // Increase events before additive increase starts (F); fast recovery until then.
  uint32_t fast_recovery_stages = 1;
  uint64_t additive_increase_bps = 5'000'000;  // R_AI
  uint64_t hyper_increase_bps = 50'000'000;    // R_HAI
  uint64_t min_rate_bps = 1'000'000;
  // Rate set on a QP's first CNP; 0 keeps the current rate (and applies the normal cut).
  uint64_t rate_on_first_cnp_bps = 0;
  bool clamp_target_rate = false;  // RT <- RC on every cut, not only the first
  bool clamp_target_rate_after_time_increase = true;
  // Notification point: at most one CNP per QP in this interval.
  uint64_t min_time_between_cnps_ns = 4'000;
};

}  // namespace etwire::config
