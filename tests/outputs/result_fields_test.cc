// The field lists of the result records (engine/result_fields.h) against the records themselves:
// results with every member set to a value of its own go through the bytes between processes and
// through summary.json, and come back equal member by member (operator==, which knows nothing of
// the lists). A member whose entry is missing, names another member, or has the wrong form fails
// here; one with no entry at all already fails to compile (lists_every_member).
#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <vector>

#include "engine/partial_results.h"
#include "engine/result_fields.h"
#include "engine/run_results.h"
#include "outputs/report/summary_reader.h"
#include "outputs/results_files.h"
#include "tests/testing/test_paths.h"

namespace etwire::engine {
namespace {

using collectives::Algorithm;
using trace::CollectiveType;

// The entries of `a`'s list whose members differ from `b`'s, "collectives[1].end_ns" for a member
// of an element: what a failure names, beside the records' bytes.
template <ResultRecord Record>
void list_differences(const Record& a, const Record& b, const std::string& where,
                      std::vector<std::string>& out);

template <typename Member>
void member_differences(const Member& a, const Member& b, const std::string& name,
                        std::vector<std::string>& out) {
  if (a == b) return;
  if constexpr (requires { requires ResultRecord<typename Member::value_type>; }) {
    if (a.size() == b.size()) {
      for (size_t i = 0; i < a.size(); ++i)
        list_differences(a[i], b[i], name + "[" + std::to_string(i) + "].", out);
      return;
    }
  } else if constexpr (ResultRecord<Member>) {
    list_differences(a, b, name + ".", out);
    return;
  }
  out.push_back(name);
}

template <typename Record, typename Base>
bool same_base(const Record& a, const Record& b, const BaseRecord<Base>&) {
  return static_cast<const Base&>(a) == static_cast<const Base&>(b);
}

template <ResultRecord Record>
void list_differences(const Record& a, const Record& b, const std::string& where,
                      std::vector<std::string>& out) {
  auto visit = [&](const auto& self, const auto& entry) -> void {
    using Entry = std::decay_t<decltype(entry)>;
    if constexpr (requires { entry.member; }) {
      member_differences(a.*entry.member, b.*entry.member, where + std::string(entry.name), out);
    } else if constexpr (requires { entry.entries; }) {
      for_each_entry(entry.entries, [&](const auto& inner) { self(self, inner); });
    } else if constexpr (!std::is_same_v<Entry, SummaryValue>) {
      if (!same_base(a, b, entry)) out.push_back(where + std::string(entry.name));
    }
  };
  for_each_entry(ResultFields<Record>::list, [&](const auto& entry) { visit(visit, entry); });
}

template <ResultRecord Record>
std::string differences(const Record& a, const Record& b) {
  std::vector<std::string> names;
  list_differences(a, b, "", names);
  std::string text = "differing: ";
  for (const std::string& name : names) text += name + " ";
  if (names.empty()) text += "none an entry names (a member with no entry, or named twice)";
  return text;
}

CollectiveRecord collective_with_every_member() {
  CollectiveRecord c;
  c.instance = 5;
  c.job = 1;
  c.kind = CollectiveType::kReduceScatter;
  c.algorithm = Algorithm::kHalvingDoubling;
  c.group = 7;
  c.sequence = 11;
  c.group_size = 4;
  c.tag = -3;
  c.src = 6;
  c.dst = 2;
  c.trace_bytes = 1001;
  c.algbw_bytes = 1002;
  c.wire_bytes = 1003;
  c.iteration = 14;
  c.warmup = true;
  c.first_arrival = 100;
  c.last_arrival = 200;
  c.end = 300;
  c.flows = 9;
  c.failed_flows = 2;
  return c;
}

// The counters a port does not count hold 0, as PortRecord says they do.
PortRecord port_with_every_member() {
  PortRecord port;
  uint64_t value = 17;
  for (const dataplane::PortCounterField& field : dataplane::kPortCounterFields)
    port.*field.member = value++;
  port.name = "h0";
  port.speed_bps = 100'000'000'000;
  port.queues = {{1, 4, 10, 20, 30, 40, 50}, {2, 5, 11, 21, 31, 41, 51}};
  port.absent = dataplane::port_counter_bit(3) | dataplane::port_counter_bit(12);
  for (size_t f = 0; f < dataplane::kPortCounterFields.size(); ++f)
    if (!port.counted(f)) port.*dataplane::kPortCounterFields[f].member = 0;
  port.rate_limit_bps = 25'000'000'000;
  port.rate_limited_by = "rnic";
  port.host = "node-a";
  return port;
}

QpRecord qp_with_every_member() {
  QpRecord qp;
  qp.stats.role = transport::QpRole::kResponder;
  qp.stats.port = 1;
  qp.stats.remote_port = 2;
  qp.stats.qpn = 0x123456;
  qp.stats.remote_qpn = 77;
  uint64_t value = 1000;
  for (const transport::QpCounterField& field : transport::kQpCounterFields)
    qp.stats.counters.*field.member = ++value;
  qp.stats.rate_cuts = 12;
  qp.stats.min_rate_bps = 1.25e9;
  qp.stats.mean_rate_bps = 87.5e9;
  qp.stats.busy_ns = 4'567;
  qp.stats.rate_bps = 50e9;
  qp.known = true;
  qp.job = 1;
  qp.rank = 5;
  qp.peer = -6;
  qp.qp_index = 3;
  return qp;
}

// Every member of every record set, each to a value of its own and none to its default, the jobs
// named apart so that summary.json's job names lead back to them.
RunResults every_member_set() {
  RunResults r;
  r.status = RunStatus::kStuck;
  r.diagnosis = "rank 3 waits in collective #2 of group -1\n";
  r.run_name = "fields";
  r.config_file = "/etc/etwire/fields.yaml";
  r.config_digest = "fnv1a64:0123456789abcdef";
  r.seed = 42;
  // summary.json's reader tells the wall clock by this topology.
  r.topology = "device-under-test";
  r.world_size = 8;
  r.end_time = 123'456'789;
  r.wall_clock = true;
  r.wall_seconds = 12.375;
  r.events = 987'654;
  r.goodput_bytes_per_second = 11.5e9;
  r.jobs = {{"train", "traces/train", 8, 5, 2, 4321}, {"infer", "traces/infer", 2, 3, 1, 77}};

  // A collective of a comm group, a send/recv and one of the all-ranks group: each group form.
  const CollectiveRecord c = collective_with_every_member();
  CollectiveRecord p2p = c;
  p2p.instance = 6;
  p2p.job = 0;
  p2p.kind = std::nullopt;
  p2p.group = kPointToPointGroup;
  CollectiveRecord all = c;
  all.instance = 7;
  all.kind = CollectiveType::kAllReduce;
  all.algorithm = Algorithm::kDoubleBinaryTree;
  all.group = -1;
  r.collectives = {c, p2p, all};

  IterationRecord it;
  it.job = 1;
  it.iteration = 3;
  it.warmup = true;
  it.start = 1000;
  it.end = 9000;
  it.ranks = {{1001, 8001, 11, 12, 13}, {1002, 8002, 21, 22, 23}};
  r.iterations = {it};

  r.ports = {port_with_every_member()};
  r.fct = {{CollectiveType::kAllGather, 3, 10, 20, 30, 40, 50}, {std::nullopt, 1, 5, 6, 7, 8, 9}};
  r.qps_counted = true;
  r.qps = {qp_with_every_member()};
  r.flows = 31;
  r.failed_flows = 4;
  for (size_t s = 0; s < r.flows_by_status.size(); ++s) r.flows_by_status[s] = 100 + s;
  r.notes = {"mlx5_0 port 1: GID index 3", "rate limits held by the RNIC"};
  return r;
}

TEST(ResultFields, PartialResultsBytesKeepEveryMember) {
  PartialResults part;
  part.results = every_member_set();
  part.fct_samples = {{10, 20, 50}, {}, {9}};
  part.members_here = {3, 1, 2};
  part.ranks_here = {{1, 1, 0, 0, 1, 1, 0, 0}, {0, 1}};
  part.ports_here = {1};
  part.time_scale = 1.000'25;
  part.time_shift = -12'345;
  part.host = "node-a";
  part.emulator = "emu-a";
  const PartialResults back = deserialize_partial(serialize_partial(part));
  EXPECT_TRUE(back == part) << differences(back, part);
}

TEST(ResultFields, SummaryJsonKeepsEveryMemberItShows) {
  const RunResults original = every_member_set();
  const auto path = testing::make_scratch_dir("result-fields") / "summary.json";
  outputs::write_summary_json(original, path.string());
  const RunResults back = outputs::report::read_summary_json(path.string());

  // What summary.json does not show: the members of the kNo entries.
  RunResults expected = original;
  for (CollectiveRecord& c : expected.collectives) c.src = c.dst = 0;
  expected.qps_counted = false;
  expected.qps.clear();
  expected.flows_by_status = {};
  EXPECT_TRUE(back == expected) << differences(back, expected);
}

}  // namespace
}  // namespace etwire::engine
