// The partial results of a split run: every field survives the byte encoding, malformed bytes are
// refused without reading past the end or allocating what they claim, and two processes' parts of
// one job merge into what a single process would have reported.
#include "engine/partial_results.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/fct_percentiles.h"

namespace etwire::engine {
namespace {

using collectives::Algorithm;
using trace::CollectiveType;

void expect_equal(const CollectiveRecord& a, const CollectiveRecord& b) {
  EXPECT_EQ(a.instance, b.instance);
  EXPECT_EQ(a.job, b.job);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.algorithm, b.algorithm);
  EXPECT_EQ(a.group, b.group);
  EXPECT_EQ(a.sequence, b.sequence);
  EXPECT_EQ(a.group_size, b.group_size);
  EXPECT_EQ(a.tag, b.tag);
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.dst, b.dst);
  EXPECT_EQ(a.trace_bytes, b.trace_bytes);
  EXPECT_EQ(a.algbw_bytes, b.algbw_bytes);
  EXPECT_EQ(a.wire_bytes, b.wire_bytes);
  EXPECT_EQ(a.iteration, b.iteration);
  EXPECT_EQ(a.warmup, b.warmup);
  EXPECT_EQ(a.first_arrival, b.first_arrival);
  EXPECT_EQ(a.last_arrival, b.last_arrival);
  EXPECT_EQ(a.end, b.end);
  EXPECT_EQ(a.flows, b.flows);
  EXPECT_EQ(a.failed_flows, b.failed_flows);
}

void expect_equal(const RankIteration& a, const RankIteration& b) {
  EXPECT_EQ(a.start, b.start);
  EXPECT_EQ(a.end, b.end);
  EXPECT_EQ(a.compute_ns, b.compute_ns);
  EXPECT_EQ(a.comm_ns, b.comm_ns);
  EXPECT_EQ(a.exposed_comm_ns, b.exposed_comm_ns);
}

void expect_equal(const IterationRecord& a, const IterationRecord& b) {
  EXPECT_EQ(a.job, b.job);
  EXPECT_EQ(a.iteration, b.iteration);
  EXPECT_EQ(a.warmup, b.warmup);
  EXPECT_EQ(a.start, b.start);
  EXPECT_EQ(a.end, b.end);
  ASSERT_EQ(a.ranks.size(), b.ranks.size());
  for (size_t r = 0; r < a.ranks.size(); ++r) {
    SCOPED_TRACE(r);
    expect_equal(a.ranks[r], b.ranks[r]);
  }
}

void expect_equal(const PortRecord& a, const PortRecord& b) {
  for (const dataplane::PortCounterField& field : dataplane::kPortCounterFields)
    EXPECT_EQ(a.*field.member, b.*field.member) << field.name;
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.speed_bps, b.speed_bps);
  ASSERT_EQ(a.queues.size(), b.queues.size());
  for (size_t q = 0; q < a.queues.size(); ++q) {
    EXPECT_EQ(a.queues[q].queue, b.queues[q].queue);
    EXPECT_EQ(a.queues[q].lcore, b.queues[q].lcore);
    EXPECT_EQ(a.queues[q].tx_bytes, b.queues[q].tx_bytes);
    EXPECT_EQ(a.queues[q].rx_bytes, b.queues[q].rx_bytes);
    EXPECT_EQ(a.queues[q].tx_packets, b.queues[q].tx_packets);
    EXPECT_EQ(a.queues[q].rx_packets, b.queues[q].rx_packets);
    EXPECT_EQ(a.queues[q].handed_over, b.queues[q].handed_over);
  }
  EXPECT_EQ(a.absent, b.absent);
  EXPECT_EQ(a.rate_limit_bps, b.rate_limit_bps);
  EXPECT_EQ(a.rate_limited_by, b.rate_limited_by);
  EXPECT_EQ(a.host, b.host);
}

void expect_equal(const FctPercentiles& a, const FctPercentiles& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.flows, b.flows);
  EXPECT_EQ(a.p50, b.p50);
  EXPECT_EQ(a.p90, b.p90);
  EXPECT_EQ(a.p99, b.p99);
  EXPECT_EQ(a.p999, b.p999);
  EXPECT_EQ(a.max, b.max);
}

void expect_equal(const QpRecord& a, const QpRecord& b) {
  EXPECT_EQ(a.stats.role, b.stats.role);
  EXPECT_EQ(a.stats.port, b.stats.port);
  EXPECT_EQ(a.stats.remote_port, b.stats.remote_port);
  EXPECT_EQ(a.stats.qpn, b.stats.qpn);
  EXPECT_EQ(a.stats.remote_qpn, b.stats.remote_qpn);
  for (const transport::QpCounterField& field : transport::kQpCounterFields) {
    EXPECT_EQ(a.stats.counters.*field.member, b.stats.counters.*field.member) << field.name;
  }
  EXPECT_EQ(a.stats.rate_cuts, b.stats.rate_cuts);
  EXPECT_EQ(a.stats.min_rate_bps, b.stats.min_rate_bps);
  EXPECT_EQ(a.stats.mean_rate_bps, b.stats.mean_rate_bps);
  EXPECT_EQ(a.stats.busy_ns, b.stats.busy_ns);
  EXPECT_EQ(a.known, b.known);
  EXPECT_EQ(a.job, b.job);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.peer, b.peer);
  EXPECT_EQ(a.qp_index, b.qp_index);
}

void expect_equal(const RunResults& a, const RunResults& b) {
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.diagnosis, b.diagnosis);
  EXPECT_EQ(a.run_name, b.run_name);
  EXPECT_EQ(a.config_file, b.config_file);
  EXPECT_EQ(a.config_digest, b.config_digest);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.topology, b.topology);
  EXPECT_EQ(a.world_size, b.world_size);
  EXPECT_EQ(a.end_time, b.end_time);
  EXPECT_EQ(a.wall_clock, b.wall_clock);
  EXPECT_EQ(a.wall_seconds, b.wall_seconds);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.goodput_bytes_per_second, b.goodput_bytes_per_second);
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t j = 0; j < a.jobs.size(); ++j) {
    EXPECT_EQ(a.jobs[j].name, b.jobs[j].name);
    EXPECT_EQ(a.jobs[j].trace, b.jobs[j].trace);
    EXPECT_EQ(a.jobs[j].world_size, b.jobs[j].world_size);
    EXPECT_EQ(a.jobs[j].iterations, b.jobs[j].iterations);
    EXPECT_EQ(a.jobs[j].warmup_iterations, b.jobs[j].warmup_iterations);
    EXPECT_EQ(a.jobs[j].nodes_issued, b.jobs[j].nodes_issued);
  }
  ASSERT_EQ(a.collectives.size(), b.collectives.size());
  for (size_t i = 0; i < a.collectives.size(); ++i) {
    SCOPED_TRACE(i);
    expect_equal(a.collectives[i], b.collectives[i]);
  }
  ASSERT_EQ(a.iterations.size(), b.iterations.size());
  for (size_t i = 0; i < a.iterations.size(); ++i) {
    SCOPED_TRACE(i);
    expect_equal(a.iterations[i], b.iterations[i]);
  }
  ASSERT_EQ(a.ports.size(), b.ports.size());
  for (size_t p = 0; p < a.ports.size(); ++p) {
    SCOPED_TRACE(p);
    expect_equal(a.ports[p], b.ports[p]);
  }
  ASSERT_EQ(a.fct.size(), b.fct.size());
  for (size_t k = 0; k < a.fct.size(); ++k) expect_equal(a.fct[k], b.fct[k]);
  EXPECT_EQ(a.qps_counted, b.qps_counted);
  ASSERT_EQ(a.qps.size(), b.qps.size());
  for (size_t q = 0; q < a.qps.size(); ++q) {
    SCOPED_TRACE(q);
    expect_equal(a.qps[q], b.qps[q]);
  }
  EXPECT_EQ(a.flows, b.flows);
  EXPECT_EQ(a.failed_flows, b.failed_flows);
  EXPECT_EQ(a.flows_by_status, b.flows_by_status);
  EXPECT_EQ(a.notes, b.notes);
}

CollectiveRecord collective(uint32_t job, CollectiveType type, int64_t group, uint64_t sequence) {
  CollectiveRecord c;
  c.job = job;
  c.kind = type;
  c.algorithm = Algorithm::kRing;
  c.group = group;
  c.sequence = sequence;
  c.group_size = 8;
  c.trace_bytes = 1 << 20;
  c.algbw_bytes = 1 << 20;
  return c;
}

CollectiveRecord send_recv(uint32_t job, int32_t src, int32_t dst, int32_t tag, uint64_t sequence) {
  CollectiveRecord c;
  c.job = job;
  c.group = kPointToPointGroup;
  c.sequence = sequence;
  c.group_size = 2;
  c.tag = tag;
  c.src = src;
  c.dst = dst;
  c.trace_bytes = 4096;
  c.algbw_bytes = 4096;
  return c;
}

void set_times(CollectiveRecord& c, clock::Nanos first, clock::Nanos last, clock::Nanos end) {
  c.first_arrival = first;
  c.last_arrival = last;
  c.end = end;
}

PortRecord port(const std::string& name, uint64_t base) {
  PortRecord p;
  uint64_t value = base;
  for (const dataplane::PortCounterField& field : dataplane::kPortCounterFields)
    p.*field.member = value++;
  p.name = name;
  p.speed_bps = 100'000'000'000;
  return p;
}

// Every field of every record set, each to a value of its own.
PartialResults rich_part() {
  PartialResults part;
  RunResults& r = part.results;
  r.status = RunStatus::kStuck;
  r.diagnosis = "rank 3 waits in collective #2 of group -1\n";
  r.run_name = "split";
  r.config_file = "/etc/etwire/split.yaml";
  r.config_digest = "fnv1a64:0123456789abcdef";
  r.seed = 42;
  r.topology = "rail-optimized";
  r.world_size = 8;
  r.end_time = 123'456'789;
  r.wall_clock = true;
  r.wall_seconds = 12.375;
  r.events = 987'654;
  r.goodput_bytes_per_second = 11.5e9;
  r.jobs.push_back({"train", "traces/train", 8, 5, 2, 4321});
  r.jobs.push_back({"infer", "traces/infer", 2, 3, 1, 77});

  CollectiveRecord c = collective(1, CollectiveType::kReduceScatter, 7, 11);
  c.instance = 5;
  c.algorithm = Algorithm::kHalvingDoubling;
  c.group_size = 4;
  c.tag = -3;
  c.src = 6;
  c.dst = 2;
  c.trace_bytes = 1001;
  c.algbw_bytes = 1002;
  c.wire_bytes = 1003;
  c.iteration = 4;
  c.warmup = true;
  set_times(c, 100, 200, -300);
  c.flows = 9;
  c.failed_flows = 2;
  r.collectives.push_back(c);
  CollectiveRecord p2p = send_recv(0, 1, 5, 9, 3);
  p2p.instance = 6;
  set_times(p2p, 400, 500, 600);
  r.collectives.push_back(p2p);

  IterationRecord it;
  it.job = 1;
  it.iteration = 3;
  it.warmup = true;
  it.start = 1000;
  it.end = 9000;
  it.ranks.push_back({1001, 8001, 11, 12, 13});
  it.ranks.push_back({1002, 8002, 21, 22, 23});
  r.iterations.push_back(it);

  PortRecord p = port("h0", 17);
  p.queues.push_back({1, 4, 10, 20, 30, 40, 50});
  p.queues.push_back({2, 5, 11, 21, 31, 41, 51});
  p.absent = dataplane::port_counter_bit(3) | dataplane::port_counter_bit(12);
  p.rate_limit_bps = 25'000'000'000;
  p.rate_limited_by = "rnic";
  p.host = "node-a";
  r.ports.push_back(p);
  r.ports.push_back(port("h1", 1000));

  r.fct.push_back({CollectiveType::kAllGather, 3, 10, 20, 30, 40, 50});
  r.fct.push_back({std::nullopt, 1, 5, 6, 7, 8, 9});
  r.qps_counted = true;
  QpRecord qp;
  qp.stats.role = transport::QpRole::kResponder;
  qp.stats.port = 1;
  qp.stats.remote_port = 0;
  qp.stats.qpn = 0x123456;
  qp.stats.remote_qpn = 77;
  uint64_t value = 1000;
  for (const transport::QpCounterField& field : transport::kQpCounterFields) {
    qp.stats.counters.*field.member = ++value;
  }
  qp.stats.rate_cuts = 12;
  qp.stats.min_rate_bps = 1.25e9;
  qp.stats.mean_rate_bps = 87.5e9;
  qp.stats.busy_ns = 4'567;
  qp.known = true;
  qp.job = 1;
  qp.rank = 5;
  qp.peer = -6;
  qp.qp_index = 3;
  r.qps.push_back(qp);
  r.qps.push_back(QpRecord{});
  r.flows = 31;
  r.failed_flows = 4;
  for (size_t s = 0; s < r.flows_by_status.size(); ++s) r.flows_by_status[s] = 100 + s;
  r.notes = {"mlx5_0 port 1: GID index 3", "rate limits held by the RNIC"};

  part.fct_samples.resize(trace::kCollectiveTypeCount + 1);
  part.fct_samples[2] = {10, 20, 50};
  part.fct_samples[trace::kCollectiveTypeCount] = {9};
  part.members_here = {3, 1};
  part.ranks_here = {{1, 1, 0, 0, 1, 1, 0, 0}, {0, 1}};
  part.ports_here = {1, 0};
  part.time_scale = 1.000'25;
  part.time_shift = -12'345;
  part.host = "node-a";
  part.emulator = "emu-a";
  return part;
}

TEST(PartialResults, RoundTripsEveryField) {
  const PartialResults part = rich_part();
  const PartialResults back = deserialize_partial(serialize_partial(part));
  expect_equal(back.results, part.results);
  EXPECT_EQ(back.fct_samples, part.fct_samples);
  EXPECT_EQ(back.members_here, part.members_here);
  EXPECT_EQ(back.ranks_here, part.ranks_here);
  EXPECT_EQ(back.ports_here, part.ports_here);
  EXPECT_EQ(back.time_scale, part.time_scale);
  EXPECT_EQ(back.time_shift, part.time_shift);
  EXPECT_EQ(back.host, part.host);
  EXPECT_EQ(back.emulator, part.emulator);
}

TEST(PartialResults, RefusesEveryTruncation) {
  const std::string bytes = serialize_partial(rich_part());
  for (size_t length = 0; length < bytes.size(); ++length) {
    SCOPED_TRACE(length);
    // A copy of exactly `length` bytes, so a read past its end is a sanitizer's finding.
    const std::string prefix = bytes.substr(0, length);
    try {
      deserialize_partial(prefix);
      ADD_FAILURE() << "accepted a truncation";
    } catch (const std::runtime_error& error) {
      EXPECT_EQ(std::string(error.what()).rfind("partial results: ", 0), 0u) << error.what();
    }
  }
  EXPECT_THROW(deserialize_partial(bytes + '\0'), std::runtime_error);
}

void put_u64(std::string& bytes, size_t offset, uint64_t value) {
  for (int i = 0; i < 8; ++i) bytes[offset + i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

TEST(PartialResults, RefusesAHugeCountWithoutAllocating) {
  PartialResults part;
  part.host = "h";
  const std::string bytes = serialize_partial(part);
  // The tail: ranks_here count (8), ports_here count (8), time_scale (8), time_shift (8), host
  // (8 + 1), emulator (8). The diagnosis length follows the magic (8), the version (4) and the
  // status (1).
  const size_t tail = 8 + 8 + 8 + 8 + 9 + 8;
  const size_t ranks_here = bytes.size() - tail;
  const size_t ports_here = ranks_here + 8;
  const size_t diagnosis = 13;
  for (size_t offset : {diagnosis, ranks_here, ports_here}) {
    SCOPED_TRACE(offset);
    std::string bad = bytes;
    put_u64(bad, offset, uint64_t{1} << 40);
    try {
      deserialize_partial(bad);
      ADD_FAILURE() << "accepted a count of 2^40";
    } catch (const std::runtime_error& error) {
      EXPECT_NE(std::string(error.what()).find("count of 1099511627776"), std::string::npos)
          << error.what();
    }
  }
  // Sanity: the offsets are the counts (zero), so the unmodified bytes read back.
  EXPECT_EQ(deserialize_partial(bytes).host, "h");
}

TEST(PartialResults, RefusesOtherBytesAndValuesOutOfRange) {
  EXPECT_THROW(deserialize_partial("not partial results at all"), std::runtime_error);
  std::string bytes = serialize_partial(PartialResults{});
  std::string version = bytes;
  version[8] = 9;
  EXPECT_THROW(deserialize_partial(version), std::runtime_error);
  std::string status = bytes;
  status[12] = 5;  // one past kFailed
  EXPECT_THROW(deserialize_partial(status), std::runtime_error);
}

// One 8-rank job, ranks 0-3 and ports 0-1 on process 0 (host a), ranks 4-7 and ports 2-3 on
// process 1 (host b), whose clock runs 1000 ns behind process 0's.
struct TwoParts {
  PartialResults a;
  PartialResults b;

  TwoParts() {
    a.host = "host-a";
    a.emulator = "emu-a";
    a.ranks_here = {{1, 1, 1, 1, 0, 0, 0, 0}};
    a.ports_here = {1, 1, 0, 0, 0};
    b.host = "host-b";
    b.ranks_here = {{0, 0, 0, 0, 1, 1, 1, 1}};
    b.ports_here = {0, 0, 1, 1, 0};
    b.time_shift = 1000;
    for (PartialResults* part : {&a, &b}) {
      part->results.world_size = 8;
      part->results.jobs.push_back({"train", "traces/train", 8, 2, 0, 0});
      part->fct_samples.resize(trace::kCollectiveTypeCount + 1);
    }
    a.results.run_name = "split";
    b.results.run_name = "other";
    a.results.config_digest = "fnv1a64:00000000000000aa";
    a.results.seed = 7;
    a.results.goodput_bytes_per_second = 12e9;
    a.results.wall_clock = true;
    for (int p = 0; p < 5; ++p) {
      a.results.ports.push_back(port("h" + std::to_string(p), 100 + p));
      b.results.ports.push_back(port("h" + std::to_string(p), 500 + p));
    }
  }
};

// Each process counted the QP halves on its own ports: merged, every half once; and a process
// that could not count its QPs makes the run's QPs uncounted rather than partly counted.
TEST(PartialResults, GathersEveryProcesssQps) {
  const auto half = [](uint32_t port, uint32_t qpn, uint64_t retransmitted) {
    QpRecord qp;
    qp.stats.port = port;
    qp.stats.qpn = qpn;
    qp.stats.counters.retransmitted_packets = retransmitted;
    return qp;
  };
  TwoParts parts;
  parts.a.results.qps_counted = true;
  parts.a.results.qps = {half(0, 10, 1), half(1, 11, 2)};
  parts.b.results.qps_counted = true;
  parts.b.results.qps = {half(2, 20, 3)};
  const RunResults merged = merge_partials({parts.a, parts.b});
  EXPECT_TRUE(merged.qps_counted);
  ASSERT_EQ(merged.qps.size(), 3u);
  EXPECT_EQ(merged.qps[0].stats.qpn, 10u);
  EXPECT_EQ(merged.qps[1].stats.qpn, 11u);
  EXPECT_EQ(merged.qps[2].stats.qpn, 20u);
  EXPECT_EQ(merged.qps[2].stats.counters.retransmitted_packets, 3u);

  parts.b.results.qps_counted = false;
  parts.b.results.qps.clear();
  const RunResults partly = merge_partials({parts.a, parts.b});
  EXPECT_FALSE(partly.qps_counted);
  EXPECT_TRUE(partly.qps.empty());
}

TEST(PartialResults, MergesTwoProcessesOfOneJob) {
  TwoParts parts;
  RunResults& a = parts.a.results;
  RunResults& b = parts.b.results;

  // An all-reduce both processes completed: b's first member arrived first, a's finished last.
  CollectiveRecord ar_a = collective(0, CollectiveType::kAllReduce, -1, 0);
  set_times(ar_a, 300, 600, 5000);
  ar_a.flows = 4;
  ar_a.failed_flows = 1;
  ar_a.wire_bytes = 400;
  ar_a.iteration = 1;
  CollectiveRecord ar_b = ar_a;
  ar_b.algorithm = Algorithm::kDirect;  // not taken: the first part's
  set_times(ar_b, -800, 0, 2000);       // shifted: 200, 1000, 3000
  ar_b.flows = 5;
  ar_b.failed_flows = 0;
  ar_b.wire_bytes = 500;
  a.collectives.push_back(ar_a);
  b.collectives.push_back(ar_b);
  parts.a.members_here.push_back(4);
  parts.b.members_here.push_back(4);

  // Rank 6 (process 1) sends to rank 2 (process 0). The SEND's issue is the sender's: 250 + 1000,
  // though the receiver's record holds a later time.
  CollectiveRecord sr_a = send_recv(0, 6, 2, 3, 0);
  set_times(sr_a, 100, 1700, 1800);
  sr_a.flows = 1;
  sr_a.wire_bytes = 4096;
  CollectiveRecord sr_b = sr_a;
  set_times(sr_b, 250, 250, 600);  // shifted: 1250, 1250, 1600
  sr_b.wire_bytes = 0;
  a.collectives.push_back(sr_a);
  b.collectives.push_back(sr_b);
  parts.a.members_here.push_back(1);
  parts.b.members_here.push_back(1);

  // A send between two ranks of process 0 concerns it alone.
  CollectiveRecord local = send_recv(0, 0, 3, 0, 0);
  set_times(local, 50, 60, 90);
  a.collectives.push_back(local);
  parts.a.members_here.push_back(2);

  // A second all-reduce process 1 never completed: not in the run's results.
  CollectiveRecord unfinished = collective(0, CollectiveType::kAllReduce, -1, 1);
  set_times(unfinished, 6000, 6100, 7000);
  a.collectives.push_back(unfinished);
  parts.a.members_here.push_back(4);  // process 1's four never completed it

  // Iteration 0 both completed, each with its own ranks' shares; iteration 1 only process 0 did.
  IterationRecord it_a;
  it_a.iteration = 0;
  it_a.start = 10;
  it_a.end = 5000;
  it_a.ranks.resize(8);
  IterationRecord it_b = it_a;
  it_b.start = -995;  // shifted: 5
  it_b.end = 3500;    // shifted: 4500
  for (int r = 0; r < 8; ++r) {
    it_a.ranks[r] = {10 + r, 5000 - r, 100 + r, 200 + r, 50 + r};
    it_b.ranks[r] = {-990 + r, 3500 - r, 300 + r, 400 + r, 60 + r};
  }
  a.iterations.push_back(it_a);
  b.iterations.push_back(it_b);
  IterationRecord it1 = it_a;
  it1.iteration = 1;
  a.iterations.push_back(it1);

  a.status = RunStatus::kFlowsFailed;
  b.status = RunStatus::kStuck;
  a.diagnosis = "rank 1 finished its trace";
  b.diagnosis = "rank 6 waits in collective #1 of group -1\n";
  a.notes = {"GID index 3", "GID index 3", "DCQCN on"};
  b.notes = {"GID index 3"};
  a.events = 10;
  b.events = 20;
  a.flows = 6;
  b.flows = 7;
  a.failed_flows = 1;
  b.failed_flows = 2;
  a.flows_by_status[0] = 5;
  a.flows_by_status[1] = 1;
  b.flows_by_status[0] = 5;
  b.flows_by_status[2] = 2;
  a.wall_seconds = 3.5;
  b.wall_seconds = 4.5;
  a.end_time = 5500;
  b.end_time = 4800;  // shifted: 5800
  a.jobs[0].nodes_issued = 30;
  b.jobs[0].nodes_issued = 12;

  parts.a.fct_samples[0] = {500, 100, 300};
  parts.a.fct_samples[trace::kCollectiveTypeCount] = {70};
  parts.b.fct_samples[0] = {200, 400, 9000};
  parts.b.fct_samples[7] = {900};

  const RunResults merged = merge_partials({parts.a, parts.b});

  EXPECT_EQ(merged.run_name, "split");
  EXPECT_EQ(merged.config_digest, "fnv1a64:00000000000000aa");
  EXPECT_EQ(merged.seed, 7u);
  EXPECT_EQ(merged.world_size, 8);
  EXPECT_TRUE(merged.wall_clock);
  EXPECT_EQ(merged.goodput_bytes_per_second, 12e9);
  ASSERT_EQ(merged.jobs.size(), 1u);
  EXPECT_EQ(merged.jobs[0].name, "train");
  EXPECT_EQ(merged.jobs[0].nodes_issued, 42u);
  EXPECT_EQ(merged.events, 30u);
  EXPECT_EQ(merged.flows, 13u);
  EXPECT_EQ(merged.failed_flows, 3u);
  EXPECT_EQ(merged.flows_by_status[0], 10u);
  EXPECT_EQ(merged.flows_by_status[1], 1u);
  EXPECT_EQ(merged.flows_by_status[2], 2u);
  EXPECT_EQ(merged.wall_seconds, 4.5);
  EXPECT_EQ(merged.end_time, 5800);

  EXPECT_EQ(merged.status, RunStatus::kStuck);
  EXPECT_EQ(merged.diagnosis,
            "emulator \"emu-a\" on host-a:\nrank 1 finished its trace\n"
            "process 1 on host-b:\nrank 6 waits in collective #1 of group -1\n");
  EXPECT_EQ(merged.notes, (std::vector<std::string>{"host-a: GID index 3", "host-a: DCQCN on",
                                                    "host-b: GID index 3"}));

  // In order of end: the local send (90), the send/recv (1800), the all-reduce (5000). Numbered
  // by first arrival: local 50, send/recv 100, all-reduce 200.
  ASSERT_EQ(merged.collectives.size(), 3u);
  const CollectiveRecord& first = merged.collectives[0];
  EXPECT_EQ(first.src, 0);
  EXPECT_EQ(first.dst, 3);
  EXPECT_EQ(first.instance, 0u);
  EXPECT_EQ(first.last_arrival, 60);

  const CollectiveRecord& sr = merged.collectives[1];
  EXPECT_EQ(sr.group, kPointToPointGroup);
  EXPECT_EQ(sr.src, 6);
  EXPECT_EQ(sr.dst, 2);
  EXPECT_EQ(sr.instance, 1u);
  EXPECT_EQ(sr.first_arrival, 100);
  EXPECT_EQ(sr.last_arrival, 1250);  // the sender's, not the later receiver's 1700
  EXPECT_EQ(sr.end, 1800);
  EXPECT_EQ(sr.flows, 2u);
  EXPECT_EQ(sr.wire_bytes, 4096u);

  const CollectiveRecord& ar = merged.collectives[2];
  EXPECT_EQ(ar.kind, CollectiveType::kAllReduce);
  EXPECT_EQ(ar.sequence, 0u);
  EXPECT_EQ(ar.instance, 2u);
  EXPECT_EQ(ar.algorithm, Algorithm::kRing);
  EXPECT_EQ(ar.iteration, 1u);
  EXPECT_EQ(ar.first_arrival, 200);
  EXPECT_EQ(ar.last_arrival, 1000);
  EXPECT_EQ(ar.end, 5000);
  EXPECT_EQ(ar.flows, 9u);
  EXPECT_EQ(ar.failed_flows, 1u);
  EXPECT_EQ(ar.wire_bytes, 900u);

  ASSERT_EQ(merged.iterations.size(), 1u);
  const IterationRecord& it = merged.iterations[0];
  EXPECT_EQ(it.iteration, 0u);
  EXPECT_EQ(it.start, 5);
  EXPECT_EQ(it.end, 5000);
  ASSERT_EQ(it.ranks.size(), 8u);
  for (int r = 0; r < 8; ++r) {
    SCOPED_TRACE(r);
    if (r < 4) {
      expect_equal(it.ranks[r], it_a.ranks[r]);
    } else {
      // Process 1's times shifted, its durations not.
      const RankIteration& own = it_b.ranks[r];
      expect_equal(it.ranks[r], {own.start + 1000, own.end + 1000, own.compute_ns, own.comm_ns,
                                 own.exposed_comm_ns});
    }
  }

  ASSERT_EQ(merged.ports.size(), 5u);
  for (int p = 0; p < 4; ++p) {
    SCOPED_TRACE(p);
    const bool on_a = p < 2;
    PortRecord expected = (on_a ? a : b).ports[p];
    expected.host = on_a ? "host-a" : "host-b";
    expect_equal(merged.ports[p], expected);
  }
  // Port 4 is no process's: process 0's record, as it is.
  expect_equal(merged.ports[4], a.ports[4]);

  std::vector<clock::Nanos> all_reduce = {500, 100, 300, 200, 400, 9000};
  std::vector<clock::Nanos> reduce_scatter = {900};
  std::vector<clock::Nanos> p2p = {70};
  ASSERT_EQ(merged.fct.size(), 3u);
  expect_equal(merged.fct[0], fct_percentiles(CollectiveType::kAllReduce, all_reduce));
  expect_equal(merged.fct[1], fct_percentiles(CollectiveType::kReduceScatter, reduce_scatter));
  expect_equal(merged.fct[2], fct_percentiles(std::nullopt, p2p));
  EXPECT_EQ(merged.fct[0].flows, 6u);
  EXPECT_EQ(merged.fct[0].max, 9000);
}

TEST(PartialResults, KeepsAnInstanceOfProcessesThatReplayNoMember) {
  // A second job all of whose ranks process 0 replays: its collectives need only process 0.
  TwoParts parts;
  parts.a.ranks_here.push_back({1, 1});
  parts.b.ranks_here.push_back({0, 0});
  CollectiveRecord own = collective(1, CollectiveType::kBroadcast, -1, 0);
  set_times(own, 10, 20, 30);
  parts.a.results.collectives.push_back(own);
  parts.a.members_here.push_back(8);
  IterationRecord it;
  it.job = 1;
  it.ranks.resize(2);
  parts.a.results.iterations.push_back(it);
  const RunResults merged = merge_partials({parts.a, parts.b});
  ASSERT_EQ(merged.collectives.size(), 1u);
  EXPECT_EQ(merged.collectives[0].job, 1u);
  ASSERT_EQ(merged.iterations.size(), 1u);
  EXPECT_EQ(merged.iterations[0].job, 1u);
}

TEST(PartialResults, KeepsACollectiveOfASubgroupOneProcessReplays) {
  // Group 3 is ranks 0-3, all on process 0: its all-gather needs nothing of process 1, which
  // replays other ranks of the same job.
  TwoParts parts;
  CollectiveRecord subgroup = collective(0, CollectiveType::kAllGather, 3, 0);
  subgroup.group_size = 4;
  set_times(subgroup, 10, 20, 30);
  parts.a.results.collectives.push_back(subgroup);
  parts.a.members_here.push_back(4);
  // Group 5 spans both processes; process 1 never reported it.
  CollectiveRecord spanning = collective(0, CollectiveType::kAllGather, 5, 0);
  spanning.group_size = 4;
  set_times(spanning, 10, 20, 30);
  parts.a.results.collectives.push_back(spanning);
  parts.a.members_here.push_back(2);
  const RunResults merged = merge_partials({parts.a, parts.b});
  ASSERT_EQ(merged.collectives.size(), 1u);
  EXPECT_EQ(merged.collectives[0].group, 3);
}

TEST(PartialResults, RefusesMemberCountsThatDoNotMatchItsInstances) {
  TwoParts parts;
  parts.a.results.collectives.push_back(collective(0, CollectiveType::kAllReduce, -1, 0));
  EXPECT_THROW(deserialize_partial(serialize_partial(parts.a)), std::runtime_error);
  parts.a.members_here.push_back(8);
  EXPECT_NO_THROW(deserialize_partial(serialize_partial(parts.a)));
}

TEST(PartialResults, MergeOfOnePartShiftsItsTimesAndComputesItsPercentiles) {
  PartialResults part = rich_part();
  // Its run clock ran at half the rate of the reference clock, and started 100 ns after it.
  part.time_scale = 2.0;
  part.time_shift = 100;
  const RunResults merged = merge_partials({part});

  RunResults expected = part.results;
  auto moved = [](clock::Nanos& t) { t = t * 2 + 100; };
  moved(expected.end_time);
  for (CollectiveRecord& c : expected.collectives) {
    moved(c.first_arrival);
    moved(c.last_arrival);
    moved(c.end);
  }
  for (IterationRecord& it : expected.iterations) {
    moved(it.start);
    moved(it.end);
    for (RankIteration& rank : it.ranks) {
      moved(rank.start);
      moved(rank.end);
    }
  }
  std::vector<clock::Nanos> all_gather = part.fct_samples[2];
  std::vector<clock::Nanos> p2p = part.fct_samples[trace::kCollectiveTypeCount];
  expected.fct = {fct_percentiles(CollectiveType::kAllGather, all_gather),
                  fct_percentiles(std::nullopt, p2p)};
  expect_equal(merged, expected);
}

TEST(PartialResults, MergeOfNoPartsIsRefused) {
  EXPECT_THROW(merge_partials({}), std::invalid_argument);
}

}  // namespace
}  // namespace etwire::engine
