#include "outputs/qp_results.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "outputs/results_files.h"

namespace etwire::outputs {

using engine::QpRecord;
using engine::RunResults;
using transport::QpRole;

namespace {

using Json = nlohmann::ordered_json;

bool is_requester(const QpRecord& qp) {
  return qp.stats.role == QpRole::kRequester;
}

// By port, then requesters before responders, then QP number: the order of qps.csv.
std::vector<const QpRecord*> in_file_order(const RunResults& results) {
  std::vector<const QpRecord*> order;
  order.reserve(results.qps.size());
  for (const QpRecord& qp : results.qps) order.push_back(&qp);
  std::sort(order.begin(), order.end(), [](const QpRecord* a, const QpRecord* b) {
    return std::tie(a->stats.port, a->stats.role, a->stats.qpn) <
           std::tie(b->stats.port, b->stats.role, b->stats.qpn);
  });
  return order;
}

// The requesters with a non-zero `value`, largest first (ties: file order), at most kTopQps.
template <typename Value>
std::vector<const QpRecord*> top_requesters(const RunResults& results, Value value) {
  std::vector<const QpRecord*> top;
  for (const QpRecord* qp : in_file_order(results)) {
    if (is_requester(*qp) && value(*qp) > 0) top.push_back(qp);
  }
  std::stable_sort(top.begin(), top.end(),
                   [&](const QpRecord* a, const QpRecord* b) { return value(*a) > value(*b); });
  if (top.size() > kTopQps) top.resize(kTopQps);
  return top;
}

Json qp_reference_json(const RunResults& results, const QpRecord& qp) {
  Json j;
  j["port"] = qp_port_name(results, qp.stats.port);
  j["remote_port"] = qp_port_name(results, qp.stats.remote_port);
  j["qpn"] = qp.stats.qpn;
  j["remote_qpn"] = qp.stats.remote_qpn;
  if (qp.known) {
    j["job"] = job_label(results, qp.job);
    j["rank"] = qp.rank;
    j["peer"] = qp.peer;
  }
  return j;
}

std::string gbps_text(double bps) {
  return fmt::format("{:.2f}", bps / 1e9);
}

}  // namespace

std::string qp_port_name(const RunResults& results, uint32_t port) {
  if (port < results.ports.size()) return results.ports[port].name;
  const size_t host = port - results.ports.size();
  return host < results.aggregation_hosts.size() ? results.aggregation_hosts[host]
                                                 : std::to_string(port);
}

std::optional<uint32_t> qp_port_index(const RunResults& results, std::string_view name) {
  for (size_t p = 0; p < results.ports.size(); ++p) {
    if (results.ports[p].name == name) return static_cast<uint32_t>(p);
  }
  for (size_t k = 0; k < results.aggregation_hosts.size(); ++k) {
    if (results.aggregation_hosts[k] == name) {
      return static_cast<uint32_t>(results.ports.size() + k);
    }
  }
  return std::nullopt;
}

std::string_view qps_csv_header() {
  static const std::string header = [] {
    std::string text = "role,port,remote_port,qpn,remote_qpn,job,rank,peer,qp_index";
    for (const transport::QpCounterField& field : transport::kQpCounterFields) {
      text += ',';
      text += field.name;
    }
    text += ",rate_cuts,min_rate_bps,mean_rate_bps,busy_ns\n";
    return text;
  }();
  return header;
}

void write_qps_csv(const RunResults& results, const std::string& path) {
  StreamedFile file(path, StreamedFile::Mode::kReplaceAtClose);
  file.buffer() += qps_csv_header();
  file.appended();
  for (const QpRecord* qp : in_file_order(results)) {
    const transport::QpStats& s = qp->stats;
    std::string& line = file.buffer();
    line += transport::qp_role_name(s.role);
    line += ',';
    append_csv_text(qp_port_name(results, s.port), line);
    line += ',';
    append_csv_text(qp_port_name(results, s.remote_port), line);
    line += fmt::format(",{},{}", s.qpn, s.remote_qpn);
    if (qp->known) {
      line += ',';
      append_csv_text(job_label(results, qp->job), line);
      line += fmt::format(",{},{},{}", qp->rank, qp->peer, qp->qp_index);
    } else {
      line += ",,,,";
    }
    for (const transport::QpCounterField& field : transport::kQpCounterFields) {
      line += fmt::format(",{}", s.counters.*field.member);
    }
    if (s.role == QpRole::kRequester) {
      line += fmt::format(",{},{}", s.rate_cuts, std::llround(s.min_rate_bps));
      // A mean over no time is no figure: empty, not 0.
      line += s.busy_ns > 0 ? fmt::format(",{}", std::llround(s.mean_rate_bps)) : ",";
      line += fmt::format(",{}\n", s.busy_ns);
    } else {
      line += ",,,,\n";
    }
    file.appended();
  }
  file.close();
}

Json qps_summary_json(const RunResults& results) {
  if (!results.qps_counted) return nullptr;
  Json j;
  uint64_t requesters = 0;
  transport::QpCounters totals;
  uint64_t rate_cuts = 0;
  double min_rate = std::numeric_limits<double>::infinity();
  for (const QpRecord& qp : results.qps) {
    totals += qp.stats.counters;
    if (!is_requester(qp)) continue;
    ++requesters;
    rate_cuts += qp.stats.rate_cuts;
    min_rate = std::min(min_rate, qp.stats.min_rate_bps);
  }
  j["count"] = results.qps.size();
  j["requesters"] = requesters;
  j["responders"] = results.qps.size() - requesters;
  Json sums;
  for (const transport::QpCounterField& field : transport::kQpCounterFields) {
    sums[std::string(field.name)] = totals.*field.member;
  }
  sums["rate_cuts"] = rate_cuts;
  j["totals"] = std::move(sums);
  // The lowest rate any requester was cut to; null without requesters.
  if (requesters > 0) {
    j["min_rate_bps"] = std::llround(min_rate);
  } else {
    j["min_rate_bps"] = nullptr;
  }

  Json top;
  const auto ranking = [&](std::string_view name, auto value) {
    Json rows = Json::array();
    for (const QpRecord* qp : top_requesters(results, value)) {
      Json row = qp_reference_json(results, *qp);
      row[std::string(name)] = value(*qp);
      row["min_rate_bps"] = std::llround(qp->stats.min_rate_bps);
      rows.push_back(std::move(row));
    }
    top[std::string(name)] = std::move(rows);
  };
  ranking("retransmitted_packets",
          [](const QpRecord& qp) { return qp.stats.counters.retransmitted_packets; });
  ranking("cnps_received", [](const QpRecord& qp) { return qp.stats.counters.cnps_received; });
  ranking("rate_cuts", [](const QpRecord& qp) { return qp.stats.rate_cuts; });
  j["top"] = std::move(top);
  return j;
}

QpCongestion qp_congestion(const RunResults& results) {
  // Retransmissions cost the most, then rate cuts.
  const auto congestion = [](const QpRecord& qp) {
    return (qp.stats.counters.retransmitted_packets + qp.stats.counters.timeouts) * (1ull << 32) +
           qp.stats.rate_cuts;
  };
  QpCongestion out;
  out.table.header = {"qp",        "ranks",     "retransmits", "timeouts", "naks_recv",
                      "cnps_recv", "rate_cuts", "min_gbps",    "mean_gbps"};
  for (const QpRecord& qp : results.qps) {
    if (!is_requester(qp)) continue;
    ++out.requesters;
    if (congestion(qp) > 0) ++out.met;
  }
  for (const QpRecord* qp : top_requesters(results, congestion)) {
    const transport::QpStats& s = qp->stats;
    out.table.rows.push_back(
        {fmt::format("{} {} -> {}", qp_port_name(results, s.port), s.qpn,
                     qp_port_name(results, s.remote_port)),
         qp->known ? fmt::format("{} -> {}", qp->rank, qp->peer) : "-",
         std::to_string(s.counters.retransmitted_packets), std::to_string(s.counters.timeouts),
         std::to_string(s.counters.naks_received), std::to_string(s.counters.cnps_received),
         std::to_string(s.rate_cuts), gbps_text(s.min_rate_bps),
         s.busy_ns > 0 ? gbps_text(s.mean_rate_bps) : "-"});
  }
  return out;
}

void append_qp_report(const RunResults& results, std::string& out) {
  if (!results.qps_counted) return;
  const QpCongestion qps = qp_congestion(results);
  if (qps.met == 0) {
    out += fmt::format(
        "\nQPs: {} halves; no requester retransmitted or had its rate cut (every QP in "
        "qps.csv).\n",
        results.qps.size());
    return;
  }
  out += fmt::format(
      "\nQPs that met the most congestion ({} of {} requesters retransmitted or were cut; all "
      "in qps.csv)\n",
      qps.met, qps.requesters);
  out += render_text(qps.table);
}

}  // namespace etwire::outputs
