#include "engine/port_sampler.h"

#include <cstring>
#include <stdexcept>

namespace etwire::engine {

namespace {

bool same(const dataplane::PortCounters& a, const dataplane::PortCounters& b) {
  return std::memcmp(&a, &b, sizeof(dataplane::PortCounters)) == 0;
}

}  // namespace

PortSampler::PortSampler(dataplane::DataPlane& data_plane, clock::Nanos interval_ns,
                         PortSeriesSink& sink)
    : data_plane_(data_plane), interval_(interval_ns), sink_(sink) {
  if (interval_ns <= 0) throw std::invalid_argument("port samples need an interval above 0");
  for (size_t p = 0; p < data_plane.ports(); ++p) {
    dataplane::PortRecord record = data_plane.port_record(p);
    if (record.driven_elsewhere()) continue;
    ports_.push_back(p);
    names_.push_back(std::move(record.name));
    absent_.push_back(record.absent);
  }
  current_.resize(ports_.size());
  previous_.resize(ports_.size());
  current_rates_.resize(ports_.size());
  previous_rates_.resize(ports_.size());
  rates_.reserve(data_plane.ports());
}

bool PortSampler::read() {
  data_plane_.settle_counters();
  data_plane_.paced_rates_bps(rates_);
  bool changed = false;
  for (size_t i = 0; i < ports_.size(); ++i) {
    current_[i] = data_plane_.port_counters(ports_[i]);
    current_rates_[i] = ports_[i] < rates_.size() ? rates_[ports_[i]] : 0.0;
    changed =
        changed || !same(current_[i], previous_[i]) || current_rates_[i] != previous_rates_[i];
  }
  return changed;
}

void PortSampler::write(const std::vector<dataplane::PortCounters>& counters,
                        const std::vector<double>& rates, clock::Nanos at) {
  if (at <= last_written_at_) return;
  for (size_t i = 0; i < ports_.size(); ++i) {
    sink_.append({at, names_[i], &counters[i], absent_[i], rates[i]});
  }
  last_written_at_ = at;
}

void PortSampler::take(clock::Nanos at) {
  ++samples_;
  const bool changed = read();
  if (changed) {
    // The quiet sample just before: the change happened within this one interval.
    if (holding_) write(previous_, previous_rates_, previous_at_);
    write(current_, current_rates_, at);
    previous_written_ = true;
    holding_ = false;
  } else if (previous_written_) {
    write(current_, current_rates_, at);  // where the rates fall to zero
    previous_written_ = false;
  } else {
    holding_ = true;
  }
  current_.swap(previous_);
  current_rates_.swap(previous_rates_);
  previous_at_ = at;
}

void PortSampler::start(clock::Nanos now) {
  read();
  write(current_, current_rates_, now);
  current_.swap(previous_);
  current_rates_.swap(previous_rates_);
  previous_at_ = now;
  previous_written_ = true;
  next_ = (now / interval_ + 1) * interval_;
}

void PortSampler::take_samples_before(clock::Nanos next_event) {
  while (next_ < next_event) {
    take(next_);
    next_ += interval_;
    // Nothing changes before the next event: skip to the last sample before it, which is the
    // one a change at the next event needs beside it.
    if (holding_ && next_ < next_event) next_ += (next_event - 1 - next_) / interval_ * interval_;
  }
}

void PortSampler::take_sample_at(clock::Nanos now) {
  take(now);
  // Samples missed while the loop was busy are not made up: the next one is the next multiple.
  next_ = (now / interval_ + 1) * interval_;
}

void PortSampler::finish(clock::Nanos now) {
  const bool changed = read();
  if (changed && holding_) write(previous_, previous_rates_, previous_at_);
  write(current_, current_rates_, now);
  ++samples_;
}

}  // namespace etwire::engine
