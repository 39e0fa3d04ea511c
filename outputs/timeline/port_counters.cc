// The ports' counters (ports.csv) as counter tracks of each port's process: throughput over each
// sample interval, the paced rate, and the congestion counters' running totals.
#include <fmt/format.h>

#include <array>
#include <map>
#include <string>
#include <vector>

#include "outputs/timeline/timeline_tracks.h"

namespace etwire::outputs::timeline {

namespace {

// The congestion counters drawn, as ports.csv names them; a column a device does not count is
// left empty there and out of the track here.
constexpr std::array<const char*, 6> kCongestionColumns = {"ecn_marked_received",   "cnps_received",
                                                           "pfc_pauses_received",   "drops",
                                                           "retransmitted_packets", "timeouts"};

struct PortSample {
  bool seen = false;
  int64_t at = 0;
  int64_t tx_bytes = 0;
  int64_t rx_bytes = 0;
};

}  // namespace

uint64_t write_port_counters(TimelineContext& context) {
  const auto& ports = context.run.results.ports;
  std::map<std::string, uint32_t, std::less<>> port_by_name;
  for (size_t p = 0; p < ports.size(); ++p) port_by_name.emplace(ports[p].name, p);

  report::CsvReader csv(context.run.file("ports.csv").string());
  const size_t time = csv.column("time_ns");
  const size_t port = csv.column("port");
  const size_t tx = csv.column("tx_bytes");
  const size_t rx = csv.column("rx_bytes");
  const size_t paced = csv.column("paced_rate_bps");
  std::array<size_t, kCongestionColumns.size()> congestion{};
  for (size_t i = 0; i < congestion.size(); ++i) congestion[i] = csv.column(kCongestionColumns[i]);

  std::vector<PortSample> last(ports.size());
  uint64_t samples = 0;
  while (csv.next()) {
    const auto found = port_by_name.find(csv.text(port));
    if (found == port_by_name.end()) {
      csv.fail(fmt::format("port \"{}\" is not one of summary.json's ports", csv.text(port)));
    }
    const uint32_t pid = context.port_pid(found->second);
    PortSample now{true, csv.integer(time), csv.integer(tx), csv.integer(rx)};
    PortSample& before = last[found->second];
    if (before.seen && now.at < before.at) csv.fail("time_ns goes back");
    // A counter holds its value until the next sample: the rate over an interval is set at its
    // start. Bits a nanosecond are Gb/s.
    if (before.seen && now.at > before.at) {
      const double bits_per_ns = 8.0 / static_cast<double>(now.at - before.at);
      context.out.counter(
          pid, "throughput (Gb/s)", before.at,
          {{"tx", static_cast<double>(now.tx_bytes - before.tx_bytes) * bits_per_ns},
           {"rx", static_cast<double>(now.rx_bytes - before.rx_bytes) * bits_per_ns}});
    }
    context.out.counter(pid, "paced rate (Gb/s)", now.at, {{"rate", csv.real(paced) / 1e9}});
    nlohmann::json totals = nlohmann::json::object();
    for (size_t i = 0; i < congestion.size(); ++i) {
      if (!csv.text(congestion[i]).empty()) {
        totals[kCongestionColumns[i]] = csv.integer(congestion[i]);
      }
    }
    context.out.counter(pid, "congestion (running totals)", now.at, totals);
    before = now;
    ++samples;
  }
  return samples;
}

}  // namespace etwire::outputs::timeline
