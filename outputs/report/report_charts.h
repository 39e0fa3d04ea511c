// The charts of `etwire report`, each filled from one run's results directory by its builder.
// Builders add the run's series to a chart shared by every run of the report (the series named
// `prefix` + what they show, the prefix empty for a report of one run), and add a note instead
// when a file the chart needs is not there. Malformed files throw ReportInputError.
#pragma once

#include <string>

#include "clock/time.h"
#include "outputs/report/report_chart.h"
#include "outputs/report/report_run.h"

namespace etwire::outputs::report {

// Time on the charts' x axes, in one unit for every run of a report (the longest run's).
struct TimeAxis {
  std::string unit;  // "us", "ms", "s"
  double ns_per_unit = 1e3;
};
TimeAxis time_axis_for(clock::Nanos longest_run);

// Series bounds: what a chart keeps of a large run.
inline constexpr size_t kMaxCdfPoints = 2000;        // per collective type
inline constexpr size_t kMaxTimePoints = 1000;       // per port or queue
inline constexpr size_t kMaxIterationPoints = 2000;  // per collective type of a job
inline constexpr size_t kMaxPortSeries = 16;         // the ports that sent the most
inline constexpr size_t kMaxQueueSeries = 8;         // the deepest queues
// More ports than this and the throughput chart is small multiples, a small chart per port.
inline constexpr size_t kMaxOverlaidPorts = 4;

// busbw per iteration (GB/s), one series per job and collective type: the mean busbw of the
// iteration's instances of that type, measured iterations only. From summary.json.
void add_busbw_per_iteration(const ReportRun& run, const std::string& prefix, ReportChart& chart);
// The CDF of flow completion times (us) per collective type, measured iterations, completed
// flows, from flows.csv joined to summary.json's collective instances.
void add_fct_cdf(const ReportRun& run, const std::string& prefix, ReportChart& chart);
// From ports.csv: each port's transmit rate over time (Gb/s, from the counters' differences
// between samples), and the congestion counters of all ports together over time (ECN-CE marked
// packets received, CNPs sent, PFC pause frames sent, retransmitted packets, drops).
void add_port_series(const ReportRun& run, const std::string& prefix, const TimeAxis& axis,
                     ReportChart& throughput, ReportChart& congestion);
// From queues.csv: the fabric twin's switch egress queue depth (KB, all priorities of a port
// together) over time, for the deepest queues.
void add_queue_depths(const ReportRun& run, const std::string& prefix, const TimeAxis& axis,
                      ReportChart& chart);

}  // namespace etwire::outputs::report
