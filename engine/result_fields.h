// The one list of fields of each result record that crosses a boundary: the binary partial results
// between emulator processes (engine/partial_results_encoding.cc) and summary.json, written
// (outputs/results_files.cc) and read back (outputs/report/summary_reader.cc). Every codec iterates
// these lists, so adding a member to a record is one line here. The order of a list is the order
// of summary.json's keys and of the binary encoding.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "dataplane/port_counters.h"
#include "engine/run_results.h"
#include "transport/qp_counters.h"

namespace etwire::engine {

// How summary.json shows a field. The binary encoding carries every member as it is, whatever
// its form.
enum class InSummary : uint8_t {
  kValue,        // the value; an enum by its name, a vector of records as an array of objects
  kUnlessEmpty,  // the value, left out when it is empty or zero
  kJobName,      // a job's index, shown as the job's name
  kGroupLabel,   // a process group's key: its number, or "all" (-1) or "p2p" (kPointToPointGroup)
  kNo,           // not in summary.json: it travels only between processes
};

template <typename Record, typename Member, InSummary Form>
struct ResultField {
  std::string_view name;  // summary.json key; for kNo, the name binary read errors give
  Member Record::*member;
};

template <InSummary Form = InSummary::kValue, typename Record, typename Member>
constexpr ResultField<Record, Member, Form> field(std::string_view name, Member Record::*member) {
  return {name, member};
}

// A value summary.json derives from the record, in its place among the fields; the writer of
// summary.json computes it, nothing reads it back, and the binary encoding has no such value.
struct SummaryValue {
  std::string_view name;
};

constexpr SummaryValue summary_value(std::string_view name) {
  return {name};
}

// Fields of the record that summary.json groups in an object of their own (RunResults' "run");
// the binary encoding has them in this place, as if listed here. `entries`: a tuple.
template <typename Entries>
struct SummaryObject {
  std::string_view name;
  Entries entries;
};

template <typename Entries>
constexpr SummaryObject<Entries> summary_object(std::string_view name, Entries entries) {
  return {name, entries};
}

// The record's base class in this place: a PortRecord's PortCounters.
template <typename Base>
struct BaseRecord {
  std::string_view name;
};

// Counters that a table of their own names (a row per member): the binary encoding writes the
// table's size and then every row, so a reader of another table refuses rather than misreads.
template <typename Counters>
struct CounterTable;
template <>
struct CounterTable<dataplane::PortCounters> {
  static constexpr const auto& fields = dataplane::kPortCounterFields;
};
template <>
struct CounterTable<transport::QpCounters> {
  static constexpr const auto& fields = transport::kQpCounterFields;
};
template <typename Counters>
concept CountersWithTable = requires {
  CounterTable<Counters>::fields;
};

// Specialized beside each record: `list`, a tuple of the entries above.
template <typename Record>
struct ResultFields;
template <typename Record>
concept ResultRecord = requires {
  ResultFields<Record>::list;
};

// Whether a summary.json must have `key` for a Record (its list's `required`; none without one).
template <typename Record>
constexpr bool required_in_summary(std::string_view key) {
  if constexpr (requires { ResultFields<Record>::required; }) {
    const auto& required = ResultFields<Record>::required;
    return std::find(required.begin(), required.end(), key) != required.end();
  } else {
    return false;
  }
}

template <typename Entries, typename Visit>
constexpr void for_each_entry(const Entries& entries, Visit&& visit) {
  std::apply([&](const auto&... entry) { (visit(entry), ...); }, entries);
}

template <>
struct ResultFields<JobSummary> {
  // The keys a summary.json must have (the others may be left out of one written by hand).
  static constexpr std::array<std::string_view, 1> required{"name"};
  static constexpr auto list = std::tuple{
      field("name", &JobSummary::name),
      field("trace", &JobSummary::trace),
      field("world_size", &JobSummary::world_size),
      field("iterations", &JobSummary::iterations),
      field("warmup_iterations", &JobSummary::warmup_iterations),
      field("nodes_issued", &JobSummary::nodes_issued),
  };
};

// collectives.csv has the columns of summary.json's collectives.
template <>
struct ResultFields<CollectiveRecord> {
  // The keys a summary.json must have (the others may be left out of one written by hand).
  static constexpr std::array<std::string_view, 11> required{
      "instance",    "job",       "type",   "group_size",       "trace_bytes",
      "algbw_bytes", "iteration", "warmup", "first_arrival_ns", "last_arrival_ns",
      "end_ns"};
  static constexpr auto list = std::tuple{
      field("instance", &CollectiveRecord::instance),
      field<InSummary::kJobName>("job", &CollectiveRecord::job),
      field("type", &CollectiveRecord::kind),
      field("algorithm", &CollectiveRecord::algorithm),
      field("protocol", &CollectiveRecord::protocol),
      field<InSummary::kGroupLabel>("group", &CollectiveRecord::group),
      field("sequence", &CollectiveRecord::sequence),
      field("tag", &CollectiveRecord::tag),
      field("group_size", &CollectiveRecord::group_size),
      field("trace_bytes", &CollectiveRecord::trace_bytes),
      field("algbw_bytes", &CollectiveRecord::algbw_bytes),
      field("wire_bytes", &CollectiveRecord::wire_bytes),
      field("iteration", &CollectiveRecord::iteration),
      field("warmup", &CollectiveRecord::warmup),
      field("first_arrival_ns", &CollectiveRecord::first_arrival),
      field("last_arrival_ns", &CollectiveRecord::last_arrival),
      field("end_ns", &CollectiveRecord::end),
      summary_value("cct_ns"),
      summary_value("algbw_GBps"),
      summary_value("busbw_GBps"),
      summary_value("ideal_percent"),
      field("flows", &CollectiveRecord::flows),
      field("failed_flows", &CollectiveRecord::failed_flows),
      // The merge of a split run's parts matches a SEND with its RECV by them.
      field<InSummary::kNo>("src", &CollectiveRecord::src),
      field<InSummary::kNo>("dst", &CollectiveRecord::dst),
  };
};

template <>
struct ResultFields<RankIteration> {
  static constexpr auto list = std::tuple{
      summary_value("rank"),
      field("compute_ns", &RankIteration::compute_ns),
      field("comm_ns", &RankIteration::comm_ns),
      field("exposed_comm_ns", &RankIteration::exposed_comm_ns),
      field("start_ns", &RankIteration::start),
      field("end_ns", &RankIteration::end),
  };
};

template <>
struct ResultFields<IterationRecord> {
  // The keys a summary.json must have (the others may be left out of one written by hand).
  static constexpr std::array<std::string_view, 5> required{"job", "iteration", "warmup",
                                                            "start_ns", "end_ns"};
  static constexpr auto list = std::tuple{
      field<InSummary::kJobName>("job", &IterationRecord::job),
      field("iteration", &IterationRecord::iteration),
      field("warmup", &IterationRecord::warmup),
      field("start_ns", &IterationRecord::start),
      field("end_ns", &IterationRecord::end),
      summary_value("jct_ns"),
      summary_value("max_exposed_comm_ns"),
      field("ranks", &IterationRecord::ranks),
  };
};

template <>
struct ResultFields<PortQueueRecord> {
  static constexpr auto list = std::tuple{
      field("queue", &PortQueueRecord::queue),
      field("lcore", &PortQueueRecord::lcore),
      field("tx_bytes", &PortQueueRecord::tx_bytes),
      field("rx_bytes", &PortQueueRecord::rx_bytes),
      field("tx_packets", &PortQueueRecord::tx_packets),
      field("rx_packets", &PortQueueRecord::rx_packets),
      field("handed_over", &PortQueueRecord::handed_over),
  };
};

template <>
struct ResultFields<PortRecord> {
  // The keys a summary.json must have (the others may be left out of one written by hand).
  static constexpr std::array<std::string_view, 1> required{"name"};
  static constexpr auto list = std::tuple{
      field("name", &PortRecord::name),
      // Split between emulator processes: the host whose process drove the port.
      field<InSummary::kUnlessEmpty>("host", &PortRecord::host),
      field("speed_bps", &PortRecord::speed_bps),
      // summary.json: each counter by its name, null where `absent` has its bit.
      BaseRecord<dataplane::PortCounters>{"counters"},
      field<InSummary::kUnlessEmpty>("rate_limit_bps", &PortRecord::rate_limit_bps),
      field<InSummary::kUnlessEmpty>("rate_limited_by", &PortRecord::rate_limited_by),
      field<InSummary::kUnlessEmpty>("queues", &PortRecord::queues),
      field<InSummary::kNo>("absent", &PortRecord::absent),
  };
};

template <>
struct ResultFields<FctPercentiles> {
  // The keys a summary.json must have (the others may be left out of one written by hand).
  static constexpr std::array<std::string_view, 6> required{"flows",  "p50_ns",  "p90_ns",
                                                            "p99_ns", "p999_ns", "max_ns"};
  static constexpr auto list = std::tuple{
      field("type", &FctPercentiles::kind),
      field("flows", &FctPercentiles::flows),
      // Nearest rank (engine/fct_percentiles.h).
      field("p50_ns", &FctPercentiles::p50),
      field("p90_ns", &FctPercentiles::p90),
      field("p99_ns", &FctPercentiles::p99),
      field("p999_ns", &FctPercentiles::p999),
      field("max_ns", &FctPercentiles::max),
  };
};

// Binary only: summary.json sums the QPs up (outputs/qp_results.h) rather than listing them.
template <>
struct ResultFields<transport::QpStats> {
  static constexpr auto list = std::tuple{
      field<InSummary::kNo>("role", &transport::QpStats::role),
      field<InSummary::kNo>("port", &transport::QpStats::port),
      field<InSummary::kNo>("remote_port", &transport::QpStats::remote_port),
      field<InSummary::kNo>("qpn", &transport::QpStats::qpn),
      field<InSummary::kNo>("remote_qpn", &transport::QpStats::remote_qpn),
      field<InSummary::kNo>("counters", &transport::QpStats::counters),
      field<InSummary::kNo>("rate_cuts", &transport::QpStats::rate_cuts),
      field<InSummary::kNo>("min_rate_bps", &transport::QpStats::min_rate_bps),
      field<InSummary::kNo>("mean_rate_bps", &transport::QpStats::mean_rate_bps),
      field<InSummary::kNo>("busy_ns", &transport::QpStats::busy_ns),
      field<InSummary::kNo>("rate_bps", &transport::QpStats::rate_bps),
  };
};

template <>
struct ResultFields<QpRecord> {
  static constexpr auto list = std::tuple{
      field<InSummary::kNo>("stats", &QpRecord::stats),
      field<InSummary::kNo>("known", &QpRecord::known),
      field<InSummary::kNo>("job", &QpRecord::job),
      field<InSummary::kNo>("rank", &QpRecord::rank),
      field<InSummary::kNo>("peer", &QpRecord::peer),
      field<InSummary::kNo>("qp_index", &QpRecord::qp_index),
  };
};

template <>
struct ResultFields<RunResults> {
  // The keys a summary.json must have (the others may be left out of one written by hand).
  static constexpr std::array<std::string_view, 8> required{
      "status", "run", "end_time_ns", "jobs", "collectives", "iterations", "ports", "fct"};
  static constexpr auto list = std::tuple{
      field("status", &RunResults::status),
      field<InSummary::kUnlessEmpty>("diagnosis", &RunResults::diagnosis),
      summary_object("run",
                     std::tuple{
                         field("name", &RunResults::run_name),
                         field("config_file", &RunResults::config_file),
                         field("config_digest", &RunResults::config_digest),
                         field("seed", &RunResults::seed),
                         field("topology", &RunResults::topology),
                         field("world_size", &RunResults::world_size),
                         field("end_time_ns", &RunResults::end_time),
                         // summary.json's reader tells it by the topology.
                         field<InSummary::kNo>("wall_clock", &RunResults::wall_clock),
                         field("wall_seconds", &RunResults::wall_seconds),
                         field("events", &RunResults::events),
                         field("goodput_bytes_per_second", &RunResults::goodput_bytes_per_second),
                     }),
      field("jobs", &RunResults::jobs),
      field("collectives", &RunResults::collectives),
      field("iterations", &RunResults::iterations),
      field("ports", &RunResults::ports),
      field("aggregation_hosts", &RunResults::aggregation_hosts),
      field("fct", &RunResults::fct),
      field<InSummary::kNo>("qps_counted", &RunResults::qps_counted),
      field<InSummary::kNo>("qps", &RunResults::qps),
      summary_value("qps"),  // their counts and sums, and the QPs that met the most congestion
      field("flows", &RunResults::flows),
      field("failed_flows", &RunResults::failed_flows),
      field<InSummary::kNo>("flows_by_status", &RunResults::flows_by_status),
      summary_value("failed_by_status"),  // the failed flows' counts by status name
      field("notes", &RunResults::notes),
  };
};

// ---- every member in its list ----------------------------------------------------------------

namespace result_fields_detail {

// Converts to any member type; only ever named in unevaluated braced initializers.
struct AnyMember {
  template <typename T>
  operator T() const;  // NOLINT(google-explicit-constructor)
};

// The number of members (and bases) of an aggregate: the most initializers it accepts.
template <typename Record, typename... Initializers>
constexpr size_t aggregate_members() {
  if constexpr (requires { Record{Initializers{}..., AnyMember{}}; }) {
    return aggregate_members<Record, Initializers..., AnyMember>();
  } else {
    return sizeof...(Initializers);
  }
}

template <typename Record, typename Member, InSummary Form>
constexpr size_t members_of(const ResultField<Record, Member, Form>&) {
  return 1;
}
constexpr size_t members_of(const SummaryValue&) {
  return 0;
}
template <typename Base>
constexpr size_t members_of(const BaseRecord<Base>&) {
  return 1;
}
template <typename Entries>
constexpr size_t members_of(const SummaryObject<Entries>& object) {
  size_t members = 0;
  for_each_entry(object.entries, [&](const auto& entry) { members += members_of(entry); });
  return members;
}

}  // namespace result_fields_detail

// True when a record's list has as many member entries as the record has members (and bases):
// a member added without its entry would otherwise be dropped between processes or from
// summary.json without a word. The round-trip tests catch an entry that names a member twice.
template <ResultRecord Record>
constexpr bool lists_every_member() {
  size_t listed = 0;
  for_each_entry(ResultFields<Record>::list,
                 [&](const auto& entry) { listed += result_fields_detail::members_of(entry); });
  return listed == result_fields_detail::aggregate_members<Record>();
}

static_assert(lists_every_member<JobSummary>(), "every JobSummary member needs its entry");
static_assert(lists_every_member<CollectiveRecord>(),
              "every CollectiveRecord member needs its entry");
static_assert(lists_every_member<RankIteration>(), "every RankIteration member needs its entry");
static_assert(lists_every_member<IterationRecord>(),
              "every IterationRecord member needs its entry");
static_assert(lists_every_member<PortQueueRecord>(),
              "every PortQueueRecord member needs its entry");
static_assert(lists_every_member<PortRecord>(), "every PortRecord member needs its entry");
static_assert(lists_every_member<FctPercentiles>(), "every FctPercentiles member needs its entry");
static_assert(lists_every_member<transport::QpStats>(), "every QpStats member needs its entry");
static_assert(lists_every_member<QpRecord>(), "every QpRecord member needs its entry");
static_assert(lists_every_member<RunResults>(), "every RunResults member needs its entry");

}  // namespace etwire::engine
