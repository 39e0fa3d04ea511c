// The per-QP results of a run (RunResults::qps): qps.csv with one row per QP half, the bounded
// `qps` section of summary.json, and the console's few QPs that met the most congestion. A run
// whose data plane does not run our transport (an RNIC) has no QP rows: no qps.csv, `qps` null,
// no console section, never zeros.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "engine/run_results.h"
#include "outputs/result_tables.h"

namespace etwire::outputs {

// QPs listed by name in summary.json's `qps.top` per ranking, and on the console.
inline constexpr size_t kTopQps = 5;

// The name qps.csv gives a QP's port: a run port's, and past them the fabric twin's aggregation
// hosts' (RunResults::aggregation_hosts); and the port a name stands for, nullopt when neither.
std::string qp_port_name(const engine::RunResults& results, uint32_t port);
std::optional<uint32_t> qp_port_index(const engine::RunResults& results, std::string_view name);

// qps.csv's first line (with its line break).
std::string_view qps_csv_header();
// One line per QP half, ordered by port, role, QP number: role, its port and the remote port
// (names), QP numbers on the wire, job, rank and peer (empty when the engine did not open its
// connection), every counter of transport::kQpCounterFields, then for requesters rate_cuts,
// min_rate_bps, mean_rate_bps and busy_ns (empty for responders; the mean also for a requester
// that never had a message outstanding). Throws std::runtime_error("<path>: <reason>").
void write_qps_csv(const engine::RunResults& results, const std::string& path);

// summary.json's `qps`: counts of halves by role, every counter summed, requesters' rate cuts
// and lowest rate, and the kTopQps requesters by retransmissions, by CNPs received and by rate
// cuts (those with any). Null when the QPs were not counted.
nlohmann::ordered_json qps_summary_json(const engine::RunResults& results);

// The requesters that retransmitted or whose rate DCQCN cut, at most kTopQps of them, most
// retransmissions and cuts first: the console's table and the report's.
struct QpCongestion {
  TableCells table;
  size_t met = 0;         // requesters that retransmitted or were cut, listed or not
  size_t requesters = 0;  // of the QP halves
};
QpCongestion qp_congestion(const engine::RunResults& results);

// The console's section: that table; one line when no requester met congestion. Nothing when
// the QPs were not counted.
void append_qp_report(const engine::RunResults& results, std::string& out);

}  // namespace etwire::outputs
