#include "transport/dcqcn_reaction_point.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace etwire::transport {
namespace {

template <typename Count>
Count saturating_increment(Count value) {
  return value == std::numeric_limits<Count>::max() ? value : static_cast<Count>(value + 1);
}

}  // namespace

void DcqcnReactionPoint::reset(const config::DcqcnConfig* config, uint64_t line_rate_bps,
                               clock::Nanos now) {
  *this = DcqcnReactionPoint{};
  config_ = config;
  enabled_ = config_ != nullptr && config_->enabled;
  line_rate_ = static_cast<double>(line_rate_bps);
  current_rate_ = line_rate_;
  target_rate_ = line_rate_;
  min_rate_ = line_rate_;
  integrated_to_ = now;  // no timer runs before the first CNP: the rate is constant till then
  alpha_anchor_ = config_ != nullptr ? config_->initial_alpha : 0.0;
}

double DcqcnReactionPoint::alpha() const {
  if (config_ == nullptr || quiet_alpha_updates_ == 0) return alpha_anchor_;
  return alpha_anchor_ *
         std::pow(1.0 - config_->alpha_gain, static_cast<double>(quiet_alpha_updates_));
}

uint64_t DcqcnReactionPoint::reacting_rate_bps(clock::Nanos now) {
  advance(now);
  // Rounded, not truncated: a rate a hair below a whole number of b/s reports that number.
  return static_cast<uint64_t>(std::llround(current_rate_));
}

void DcqcnReactionPoint::on_cnp(clock::Nanos now) {
  advance(now);
  cnps_received_ = saturating_increment(cnps_received_);
  if (!enabled()) return;
  const bool first_cnp = !seen_cnp_;
  if (first_cnp) {
    // Alpha's update clock starts with the first CNP: before it the QP is at line rate and
    // alpha stays at initial_alpha, the value NVIDIA applies to a flow's first CNP.
    seen_cnp_ = true;
    next_alpha_update_ = now + static_cast<clock::Nanos>(config_->alpha_update_period_ns);
  }
  cnp_in_alpha_period_ = true;
  const auto reduce_period = static_cast<clock::Nanos>(config_->rate_reduce_period_ns);
  if (first_cnp || now - last_cut_ >= reduce_period) {
    cut_rate(now, first_cnp);
  } else {
    cut_pending_ = true;  // applied by advance() when the reduce period since last_cut_ ends
  }
}

void DcqcnReactionPoint::count_bytes_sent(uint64_t bytes, clock::Nanos now) {
  advance(now);
  // At line rate every increase is a no-op and the next cut resets the counter, so counting
  // would change nothing.
  if (at_line_rate()) return;
  bytes_since_increase_ += bytes;
  const uint64_t bytes_per_event = std::max<uint64_t>(config_->rate_increase_bytes, 1);
  while (bytes_since_increase_ >= bytes_per_event) {
    bytes_since_increase_ -= bytes_per_event;  // the remainder counts towards the next event
    increase_event(now, /*from_timer=*/false);
    if (at_line_rate()) {
      bytes_since_increase_ = 0;
      break;
    }
  }
}

void DcqcnReactionPoint::advance(clock::Nanos now) {
  if (!reacting()) return;
  const auto reduce_period = static_cast<clock::Nanos>(config_->rate_reduce_period_ns);
  const auto increase_period =
      std::max<clock::Nanos>(static_cast<clock::Nanos>(config_->rate_increase_period_ns), 1);
  // Rate events (a pending cut, the increase timer) one at a time in time order; alpha updates
  // in between are applied in bulk up to each event, so every cut sees the alpha of its time.
  for (;;) {
    const clock::Nanos cut_at = cut_pending_ ? last_cut_ + reduce_period : clock::kNever;
    const clock::Nanos event_at = std::min(cut_at, next_increase_timer_);
    if (event_at > now) break;
    apply_alpha_updates_through(event_at);
    if (cut_at <= next_increase_timer_) {
      // On a tie the cut wins: it restarts the increase timer, so the increase never happens.
      cut_rate(cut_at, /*first_cnp=*/false);
    } else {
      next_increase_timer_ += increase_period;
      increase_event(event_at, /*from_timer=*/true);
    }
  }
  apply_alpha_updates_through(now);
}

void DcqcnReactionPoint::apply_alpha_updates_through(clock::Nanos now) {
  if (now < next_alpha_update_) return;
  const auto period =
      std::max<clock::Nanos>(static_cast<clock::Nanos>(config_->alpha_update_period_ns), 1);
  const auto updates_due = static_cast<uint64_t>((now - next_alpha_update_) / period) + 1;
  next_alpha_update_ += static_cast<clock::Nanos>(updates_due) * period;
  if (cnp_in_alpha_period_) {
    // The first due update closes the period that saw the CNP; the rest were quiet.
    const double gain = config_->alpha_gain;
    alpha_anchor_ = (1.0 - gain) * alpha() + gain;
    quiet_alpha_updates_ = updates_due - 1;
    cnp_in_alpha_period_ = false;
  } else {
    quiet_alpha_updates_ += updates_due;
  }
}

void DcqcnReactionPoint::cut_rate(clock::Nanos at, bool first_cnp) {
  const config::DcqcnConfig& config = *config_;
  integrate_to(at);
  const double min_rate = std::min(static_cast<double>(config.min_rate_bps), line_rate_);
  if (first_cnp && config.rate_on_first_cnp_bps != 0) {
    // NVIDIA: rate_to_set_on_first_cnp sets both the current and the target rate.
    current_rate_ =
        std::clamp(static_cast<double>(config.rate_on_first_cnp_bps), min_rate, line_rate_);
    target_rate_ = current_rate_;
  } else {
    // NVIDIA's clamp_tgt_rate / clamp_tgt_rate_after_time_inc (docs/transport.md): the target
    // only follows the current rate down if the rate went up since the last cut (by the byte
    // counter, or by the timer when clamp_target_rate_after_time_increase is set); otherwise
    // the QP keeps recovering towards the target it had before the burst of cuts.
    const bool clamp_target = first_cnp || config.clamp_target_rate || byte_stage_ > 0 ||
                              (config.clamp_target_rate_after_time_increase && timer_stage_ > 0);
    if (clamp_target) target_rate_ = current_rate_;
    const double cut_fraction = std::min(alpha() * config.rate_cut_scale, config.max_rate_cut);
    current_rate_ = std::max(current_rate_ * (1.0 - cut_fraction), min_rate);
  }
  min_rate_ = std::min(min_rate_, current_rate_);
  rate_cuts_ = saturating_increment(rate_cuts_);
  last_cut_ = at;
  cut_pending_ = false;
  timer_stage_ = 0;
  byte_stage_ = 0;
  bytes_since_increase_ = 0;
  // A cut that left the QP at line rate (max_rate_cut 0, rate_on_first_cnp = line rate) has
  // nothing to recover: increases would all be no-ops, so the timer stays off.
  next_increase_timer_ =
      at_line_rate() ? clock::kNever
                     : at + std::max<clock::Nanos>(
                                static_cast<clock::Nanos>(config.rate_increase_period_ns), 1);
}

void DcqcnReactionPoint::increase_event(clock::Nanos at, bool from_timer) {
  const config::DcqcnConfig& config = *config_;
  integrate_to(at);
  // The event is classified by the counts of events before it, so with F stages the first F
  // events after a cut are fast recovery (F = 1: exactly one). Spec 3.8: additive while either
  // counter stands at F or only one is past it; hyper only once both are past F. With F = 1 and
  // the byte counter running, hyper increase starts only after the second timer event since the
  // cut.
  const uint32_t stages = config.fast_recovery_stages;
  const uint32_t more_events = std::max(timer_stage_, byte_stage_);
  const uint32_t fewer_events = std::min(timer_stage_, byte_stage_);
  if (more_events < stages) {
    // Fast recovery: only the current rate moves, halfway back to the target.
  } else if (fewer_events <= stages) {
    target_rate_ =
        std::min(target_rate_ + static_cast<double>(config.additive_increase_bps), line_rate_);
  } else {
    // Hyper increase with a fixed step, as NVIDIA's RPG_HAI_RATE (the paper's i x R_HAI grows).
    target_rate_ =
        std::min(target_rate_ + static_cast<double>(config.hyper_increase_bps), line_rate_);
  }
  // Reaches RT exactly after finitely many halvings when RT is a whole number of b/s below 2^52
  // (as the line rate is): one ulp short, the halfway sum ties and rounds to RT's even mantissa.
  // That is what lets a recovered QP stop its timer.
  current_rate_ = (target_rate_ + current_rate_) / 2.0;

  if (from_timer) {
    timer_stage_ = saturating_increment(timer_stage_);
  } else {
    byte_stage_ = saturating_increment(byte_stage_);
  }
  // Back at line rate nothing can rise any more; only the next cut restarts the timer.
  if (at_line_rate()) next_increase_timer_ = clock::kNever;
}

}  // namespace etwire::transport
