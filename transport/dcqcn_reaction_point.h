// The DCQCN reaction point of one QP: the sender's rate, cut on CNPs and raised again by a timer
// and a byte counter (spec 3.8, parameters in config::DcqcnConfig, rules in docs/transport.md).
//
// Timers are evaluated lazily: the rate only matters when the QP is about to send, so instead of
// scheduling events for alpha decay and the increase timer, every query first applies all timer
// expirations that fell due since the last one, in time order. That gives the same rates an
// eagerly timed implementation would, costs no events for idle QPs, and keeps the state small
// (it lives in every QP).
#pragma once

#include <cstdint>

#include "clock/time.h"
#include "config/dcqcn_config.h"

namespace etwire::transport {

class DcqcnReactionPoint {
 public:
  // Starts at line rate with the configured initial alpha. `config` must outlive the object
  // (one config is shared by every QP). With DCQCN disabled the rate is always line rate.
  void reset(const config::DcqcnConfig* config, uint64_t line_rate_bps, clock::Nanos now);

  // The rate the QP may send at, at `now` (after applying every timer due by then). `now` never
  // goes backwards between calls.
  uint64_t rate_bps(clock::Nanos now) {
    // Until the first CNP (or with DCQCN off) nothing moves the rate: the per-packet case.
    // Exact: the line rate is a whole number of b/s far below 2^53.
    if (!reacting()) return static_cast<uint64_t>(line_rate_);
    return reacting_rate_bps(now);
  }

  // When the increase timer next raises the rate (after applying every timer due by `now`);
  // kNever while the QP is at line rate. A QP waiting out its pacer at a low rate wakes then to
  // take the higher rate, as a NIC's rate limiter does.
  clock::Nanos next_timer_increase(clock::Nanos now) {
    advance(now);
    return enabled() ? next_increase_timer_ : clock::kNever;
  }

  // A CNP for this QP arrived.
  void on_cnp(clock::Nanos now);

  // The QP put `bytes` of payload on the wire; drives the byte counter.
  void on_bytes_sent(uint64_t bytes, clock::Nanos now) {
    if (reacting()) count_bytes_sent(bytes, now);
  }

  // For tests and telemetry (values as of the last call that took `now`).
  double alpha() const;
  double current_rate_bps() const { return current_rate_; }
  double target_rate_bps() const { return target_rate_; }
  // Every CNP that reached the QP, DCQCN on or off (qps.csv's count; saturates at 2^32 - 1).
  uint32_t cnps_received() const { return cnps_received_; }
  uint32_t rate_cuts() const { return rate_cuts_; }
  // The lowest rate so far (the start rate until the first cut).
  double min_rate_bps() const { return min_rate_; }
  // The rate integrated over time since reset(), in b/s x ns, as of `now` (after applying every
  // timer due by then): the difference of two readings over their time apart is the mean rate
  // between them. Kept at each rate change, so reading it costs a multiplication.
  double rate_time_integral(clock::Nanos now) {
    advance(now);
    return rate_integral_ + current_rate_ * static_cast<double>(now - integrated_to_);
  }

 private:
  bool enabled() const { return enabled_; }
  // Enabled and past the first CNP: only then do timers and the byte counter act.
  bool reacting() const { return enabled_ && seen_cnp_; }
  uint64_t reacting_rate_bps(clock::Nanos now);
  void count_bytes_sent(uint64_t bytes, clock::Nanos now);
  bool at_line_rate() const { return current_rate_ >= line_rate_; }
  void advance(clock::Nanos now);
  void apply_alpha_updates_through(clock::Nanos now);
  void cut_rate(clock::Nanos at, bool first_cnp);
  void increase_event(clock::Nanos at, bool from_timer);
  // Adds the current rate's share of the integral up to `at`, before the rate changes there.
  void integrate_to(clock::Nanos at) {
    rate_integral_ += current_rate_ * static_cast<double>(at - integrated_to_);
    integrated_to_ = at;
  }

  // Widest first, the flags as bits: there is one of these in every requester QP (a million in a
  // 1024-rank all-to-all), and its owner fills the tail padding ([[no_unique_address]]).
  const config::DcqcnConfig* config_ = nullptr;
  double line_rate_ = 0;
  double current_rate_ = 0;  // RC
  double target_rate_ = 0;   // RT
  // Alpha is kept as "the value after the last update that saw a CNP" times (1 - g) per quiet
  // update since. Computing it from that anchor with one pow() (instead of multiplying once per
  // update) makes an idle QP O(1) and gives bit-identical alphas however often it is queried.
  double alpha_anchor_ = 0;
  uint64_t quiet_alpha_updates_ = 0;
  clock::Nanos next_alpha_update_ = clock::kNever;
  clock::Nanos next_increase_timer_ = clock::kNever;  // kNever before the first cut, at line rate
  clock::Nanos last_cut_ = 0;
  uint64_t bytes_since_increase_ = 0;
  double min_rate_ = 0;
  double rate_integral_ = 0;  // of the rate over [reset, integrated_to_), b/s x ns
  clock::Nanos integrated_to_ = 0;
  uint32_t cnps_received_ = 0;
  uint32_t rate_cuts_ = 0;
  // Increase events since the last cut, by source. Only compared with the fast recovery stages
  // (at most 255) and with each other, so saturating at 65535 changes no decision.
  uint16_t timer_stage_ = 0;
  uint16_t byte_stage_ = 0;
  bool cnp_in_alpha_period_ : 1 = false;
  // A CNP arrived inside the reduce period: cut at last_cut_ + period.
  bool cut_pending_ : 1 = false;
  bool seen_cnp_ : 1 = false;
  bool enabled_ : 1 = false;  // config_->enabled, read once: the config does not change in a run
};

}  // namespace etwire::transport
