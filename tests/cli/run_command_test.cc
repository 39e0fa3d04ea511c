// `etwire run` as a user runs it: the results directory, the report, exit codes and the
// diagnosis of runs that cannot finish.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "control/resolve/config_loader.h"
#include "tests/testing/test_paths.h"

namespace etwire {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Joins strings without `"literal" + std::string`, which GCC 12 misreports under -Wrestrict.
template <typename... Parts>
std::string concat(const Parts&... parts) {
  std::string text;
  ((text += parts), ...);
  return text;
}

std::string quoted(const fs::path& path) {
  std::string text = "'";
  text += path.string();
  text += "'";
  return text;
}

fs::path demo_config() {
  return etwire::testing::source_dir() / "configs/loopback-demo.yaml";
}

// stdout and stderr of one run, kept apart: the report belongs on stdout, errors on stderr.
struct SplitResult {
  int code = -1;
  std::string out;
  std::string err;
};

SplitResult run_split(const std::string& args, const fs::path& scratch, const std::string& tag) {
  const fs::path out = scratch / concat(tag, ".stdout");
  const fs::path err = scratch / concat(tag, ".stderr");
  // A subshell, so that run_command's own trailing 2>&1 does not send stderr into `out`.
  std::string command = "(";
  command += etwire::testing::etwire_binary().string();
  command += ' ';
  command += args;
  command += " >";
  command += quoted(out);
  command += " 2>";
  command += quoted(err);
  command += ')';
  std::string ignored;
  SplitResult result;
  result.code = etwire::testing::run_command(command, ignored);
  result.out = slurp(out);
  result.err = slurp(err);
  return result;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

std::vector<std::string> split(const std::string& line, char separator) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, separator)) fields.push_back(field);
  if (!line.empty() && line.back() == separator) fields.emplace_back();
  return fields;
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}

bool empty_or_absent(const fs::path& dir) {
  return !fs::exists(dir) || (fs::is_directory(dir) && fs::is_empty(dir));
}

// A CSV file as its header and rows. Every line, the last included, must end with a newline: a
// missing one means a row was cut short.
struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

Csv read_csv(const fs::path& path) {
  Csv csv;
  const std::string text = slurp(path);
  if (text.empty()) {
    ADD_FAILURE() << path << " is empty or missing";
    return csv;
  }
  EXPECT_EQ(text.back(), '\n') << path << " ends in the middle of a line";
  auto lines = lines_of(text);
  if (lines.empty()) return csv;
  csv.header = split(lines.front(), ',');
  for (size_t i = 1; i < lines.size(); ++i) {
    csv.rows.push_back(split(lines[i], ','));
    EXPECT_EQ(csv.rows.back().size(), csv.header.size()) << path << " line " << i + 1;
  }
  return csv;
}

size_t column(const Csv& csv, const std::string& name) {
  auto it = std::find(csv.header.begin(), csv.header.end(), name);
  EXPECT_NE(it, csv.header.end()) << "no column " << name;
  return static_cast<size_t>(it - csv.header.begin());
}

// The summary as written, key order kept, so that collectives.csv's header can be compared with
// it.
nlohmann::ordered_json read_summary(const fs::path& dir) {
  const fs::path path = dir / "summary.json";
  if (!fs::exists(path)) {
    ADD_FAILURE() << path << " is missing";
    return nlohmann::ordered_json::object();
  }
  return nlohmann::ordered_json::parse(slurp(path));
}

// Writes a 2-rank, 2-port loopback configuration whose job replays the trace set `trace`
// (relative to the configuration file).
fs::path write_two_rank_config(const fs::path& dir, const std::string& trace) {
  const fs::path path = dir / "two-ranks.yaml";
  std::ofstream(path) << "run:\n"
                         "  name: two-ranks\n"
                         "  seed: 1\n"
                         "workload:\n"
                         "  iterations: 1\n"
                         "  warmup_iterations: 0\n"
                         "  jobs:\n"
                         "    - name: pair\n"
                         "      trace: "
                      << trace
                      << "\n"
                         "ports:\n"
                         "  - name: host\n"
                         "    count: 2\n"
                         "    backend: loopback\n"
                         "    speed: 100Gbps\n"
                         "    mtu: 4200\n"
                         "mapping:\n"
                         "  jobs:\n"
                         "    - job: pair\n"
                         "      placement: block\n"
                         "      ranks_per_port: 1\n"
                         "fabric:\n"
                         "  topology: single-switch\n";
  return path;
}

// Two 2-rank microbenchmark sets under `dir`, a (collective_a, iterations_a) and
// b (collective_b, iterations_b); rank 1 of b then replaces rank 1 of a. Returns a's prefix
// relative to `dir`.
std::string write_mismatched_traces(const fs::path& dir, const std::string& collective_a,
                                    int iterations_a, const std::string& collective_b,
                                    int iterations_b) {
  for (const auto& [set, collective, iterations] :
       {std::tuple{std::string("a"), collective_a, iterations_a},
        std::tuple{std::string("b"), collective_b, iterations_b}}) {
    std::string args = "synth microbench -c ";
    args += collective;
    args += " -b 64KiB -n 2 -i ";
    args += std::to_string(iterations);
    args += " -o ";
    args += quoted(dir / set / "t");
    auto r = etwire::testing::run_etwire(args);
    EXPECT_EQ(r.code, 0) << r.output;
  }
  fs::copy_file(dir / "b/t.1.et", dir / "a/t.1.et", fs::copy_options::overwrite_existing);
  return "a/t";
}

// The demo replays every rank's trace for its warm-up and measured iterations; every instance,
// warm-up included, lands in summary.json and collectives.csv, every flow in flows.csv, and the
// report goes to stdout.
TEST(RunCommand, DemoWritesEveryResultFile) {
  // What to expect, from the trace and the configuration rather than from a run.
  const fs::path trace = etwire::testing::source_dir() / "configs/traces/allreduce_8r/allreduce";
  auto inspected = etwire::testing::run_etwire(concat("inspect --json ", quoted(trace)));
  ASSERT_EQ(inspected.code, 0) << inspected.output;
  const auto facts = nlohmann::json::parse(inspected.output);
  const int world_size = facts["world_size"].get<int>();
  ASSERT_GT(world_size, 0);
  const uint64_t per_rank = facts["ranks"][0]["collectives"]["ALL_REDUCE"]["count"].get<uint64_t>();
  ASSERT_GT(per_rank, 0u);
  for (const auto& rank : facts["ranks"]) {
    ASSERT_EQ(rank["collectives"].size(), 1u) << "the demo trace holds only all-reduces";
    ASSERT_EQ(rank["collectives"]["ALL_REDUCE"]["count"].get<uint64_t>(), per_rank);
  }
  control::LoadOptions load;
  load.read_traces = false;
  const auto demo = control::load_config_file(demo_config().string(), load);
  ASSERT_TRUE(demo.ok()) << demo.diagnostics.to_text();
  ASSERT_EQ(demo.config.workload.jobs.size(), 1u);
  const uint64_t measured = demo.config.workload.jobs[0].iterations;
  const uint64_t warmup = demo.config.workload.jobs[0].warmup_iterations;
  ASSERT_GT(warmup, 0u) << "the demo is expected to have a warm-up iteration";
  // One all-ranks group: each all-reduce of a rank is one instance shared by every rank.
  const uint64_t measured_instances = per_rank * measured;
  const uint64_t instances = per_rank * (measured + warmup);

  auto scratch = etwire::testing::make_scratch_dir("run-demo");
  const fs::path out = scratch / "results";
  // Metrics served on a free port (the configured 9464 may be taken by a parallel test).
  auto r = run_split(concat("run ", quoted(demo_config()), " --out ", quoted(out),
                            " --no-progress --set telemetry.metrics.listen=127.0.0.1:0"),
                     scratch, "demo");
  ASSERT_EQ(r.code, 0) << r.out << r.err;

  auto summary = read_summary(out);
  EXPECT_EQ(summary["status"], "completed");
  EXPECT_FALSE(summary.contains("diagnosis"));
  EXPECT_EQ(summary["run"]["name"], "loopback-demo");
  EXPECT_EQ(summary["run"]["world_size"], world_size);
  EXPECT_EQ(summary["run"]["topology"], "single-switch");
  ASSERT_EQ(summary["jobs"].size(), 1u);
  EXPECT_EQ(summary["jobs"][0]["world_size"], world_size);
  EXPECT_EQ(summary["jobs"][0]["iterations"], measured);
  EXPECT_EQ(summary["jobs"][0]["warmup_iterations"], warmup);
  ASSERT_EQ(summary["collectives"].size(), instances);
  uint64_t warmup_instances = 0;
  uint64_t flows_in_instances = 0;
  for (const auto& c : summary["collectives"]) {
    EXPECT_EQ(c["type"], "all_reduce");
    EXPECT_EQ(c["group_size"], world_size);
    EXPECT_EQ(c["failed_flows"], 0);
    if (c["warmup"].get<bool>()) ++warmup_instances;
    flows_in_instances += c["flows"].get<uint64_t>();
  }
  EXPECT_EQ(warmup_instances, per_rank * warmup);
  EXPECT_EQ(summary["iterations"].size(), measured + warmup);
  EXPECT_EQ(summary["ports"].size(), static_cast<size_t>(world_size));
  const uint64_t flows = summary["flows"].get<uint64_t>();
  EXPECT_GT(flows, 0u);
  EXPECT_EQ(summary["failed_flows"], 0);
  // A completed run of collectives only: every flow belongs to exactly one instance.
  EXPECT_EQ(flows_in_instances, flows);

  // collectives.csv carries summary.json's collectives[], field for field and in order.
  auto collectives = read_csv(out / "collectives.csv");
  std::vector<std::string> keys;
  for (const auto& item : summary["collectives"][0].items()) keys.push_back(item.key());
  EXPECT_EQ(collectives.header, keys);
  ASSERT_EQ(collectives.rows.size(), instances);
  const size_t instance_column = column(collectives, "instance");
  const size_t type_column = column(collectives, "type");
  for (size_t i = 0; i < collectives.rows.size(); ++i) {
    EXPECT_EQ(collectives.rows[i].at(instance_column),
              summary["collectives"][i]["instance"].dump());
    EXPECT_EQ(collectives.rows[i].at(type_column), "all_reduce");
  }

  auto flow_rows = read_csv(out / "flows.csv");
  ASSERT_FALSE(flow_rows.header.empty());
  EXPECT_EQ(flow_rows.header.front(), "flow_id");
  EXPECT_EQ(flow_rows.rows.size(), flows);
  const size_t status_column = column(flow_rows, "status");
  for (const auto& row : flow_rows.rows) EXPECT_EQ(row.at(status_column), "completed");

  // The nccl-tests-style table: its title, its columns, and one row for the measured
  // all-reduces of the one size in the trace.
  const auto lines = lines_of(r.out);
  auto title = std::find(lines.begin(), lines.end(),
                         "Collectives, measured iterations (time: mean CCT from the last "
                         "arrival; GB/s = 1e9 B/s)");
  ASSERT_NE(title, lines.end()) << r.out;
  ASSERT_LT(title + 2, lines.end()) << r.out;
  EXPECT_EQ(words(*(title + 1)),
            (std::vector<std::string>{"job", "collective", "size", "count", "group", "time_us",
                                      "algbw_GBps", "busbw_GBps", "ideal_%"}));
  const auto row = words(*(title + 2));
  ASSERT_GE(row.size(), 6u) << *(title + 2);
  EXPECT_EQ(row[0], "allreduce");
  EXPECT_EQ(row[1], "all_reduce");
  EXPECT_EQ(row[4], std::to_string(measured_instances)) << *(title + 2);
  EXPECT_EQ(row[5], std::to_string(world_size)) << *(title + 2);
  EXPECT_THAT(r.out, HasSubstr("\nStatus completed: "));
  EXPECT_THAT(r.out, HasSubstr(concat(std::to_string(flows), " flows, 0 failed\n")));
  EXPECT_THAT(r.out, Not(HasSubstr("Diagnosis")));
  // Nothing went wrong, so stderr has only the one "running ..." line, and no progress line
  // (--no-progress, and stderr is not a terminal anyway).
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_THAT(r.err, HasSubstr("running loopback-demo: 1 job, "));
  EXPECT_THAT(r.err, HasSubstr("; metrics at http://127.0.0.1:"));
}

// The replay runs in virtual time: the same configuration gives the same flows and instances,
// to the byte, whatever the machine's load.
TEST(RunCommand, RunsAreDeterministic) {
  auto scratch = etwire::testing::make_scratch_dir("run-determinism");
  for (const char* name : {"first", "second"}) {
    auto r = run_split(concat("run ", quoted(demo_config()), " --out ", quoted(scratch / name),
                              " --no-progress --no-metrics"),
                       scratch, name);
    ASSERT_EQ(r.code, 0) << r.out << r.err;
  }
  for (const char* file : {"flows.csv", "collectives.csv"}) {
    const std::string first = slurp(scratch / "first" / file);
    EXPECT_FALSE(first.empty()) << file;
    EXPECT_TRUE(first == slurp(scratch / "second" / file)) << file << " differs between runs";
  }
  // summary.json too, except the wall time, the one measurement of the host.
  auto first = read_summary(scratch / "first");
  auto second = read_summary(scratch / "second");
  first["run"].erase("wall_seconds");
  second["run"].erase("wall_seconds");
  EXPECT_EQ(first, second);
}

// telemetry.record.queue_sample_interval writes queues.csv: rows at multiples of the interval,
// named switch ports, queues that fill under congestion, links no busier than their speed (a
// frame counts in the interval it starts in: at most one frame above it); and sampling changes
// nothing the run does. A run without the twin's queues refuses the key.
TEST(RunCommand, QueueSamplesGoToQueuesCsvWithoutChangingTheRun) {
  auto scratch = etwire::testing::make_scratch_dir("run-queues");
  const fs::path config = etwire::testing::source_dir() / "configs/twin-congestion.yaml";
  for (const char* name : {"plain", "sampled"}) {
    const std::string sampling = std::string(" --set telemetry.record.queue_sample_interval=") +
                                 (std::string(name) == "sampled" ? "10us" : "0");
    auto r = run_split(concat("run ", quoted(config), " --out ", quoted(scratch / name),
                              " --no-progress --no-metrics", sampling),
                       scratch, name);
    ASSERT_EQ(r.code, 0) << r.out << r.err;
  }
  EXPECT_FALSE(fs::exists(scratch / "plain/queues.csv"));
  EXPECT_TRUE(slurp(scratch / "plain/flows.csv") == slurp(scratch / "sampled/flows.csv"));
  EXPECT_EQ(read_summary(scratch / "plain")["run"]["events"],
            read_summary(scratch / "sampled")["run"]["events"]);

  std::istringstream rows(slurp(scratch / "sampled/queues.csv"));
  std::string line;
  std::getline(rows, line);
  EXPECT_EQ(line,
            "time_ns,switch_port,priority,depth_bytes,depth_packets,max_depth_bytes,ecn_marked,"
            "drops,trimmed,paused,utilization");
  size_t count = 0;
  size_t queued = 0;
  double busiest = 0;
  std::set<std::string> ports;
  while (std::getline(rows, line)) {
    std::vector<std::string> field;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) field.push_back(cell);
    ASSERT_EQ(field.size(), 11u) << line;
    ++count;
    EXPECT_EQ(std::stoll(field[0]) % 10'000, 0) << line;
    ports.insert(field[1]);
    if (std::stoull(field[3]) > 0) ++queued;
    EXPECT_LE(std::stoull(field[3]), std::stoull(field[5])) << line;
    busiest = std::max(busiest, std::stod(field[10]));
  }
  EXPECT_GT(count, 1000u);
  EXPECT_GT(queued, 0u);
  EXPECT_TRUE(ports.count("leaf0/spine1") == 1 && ports.count("leaf0/h1") == 1);
  // A 4,194-byte frame is 3.4 % of what 100 Gb/s carries in 10 us.
  EXPECT_GT(busiest, 0.9);
  EXPECT_LE(busiest, 1.0 + 4194.0 * 8 / (100e9 * 10e-6));

  auto r = run_split(
      concat("validate ", quoted(etwire::testing::source_dir() / "configs/dpdk-ring.yaml"),
             " --set telemetry.record.queue_sample_interval=10us"),
      scratch, "dpdk");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.out + r.err, HasSubstr("telemetry.record.queue_sample_interval: samples the fabric "
                                       "twin's switch queues, which only loopback ports have"));
}

// A configuration that does not validate is not run: exit 2 and nothing in the results
// directory.
TEST(RunCommand, InvalidConfigurationRunsNothing) {
  auto scratch = etwire::testing::make_scratch_dir("run-invalid");
  const fs::path syntax_error =
      etwire::testing::source_dir() / "tests/control/configs/syntax-error.yaml";
  auto r = run_split(concat("run ", quoted(syntax_error), " --out ", quoted(scratch / "syntax"),
                            " --no-progress --no-metrics"),
                     scratch, "syntax");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("invalid YAML"));
  EXPECT_THAT(r.err, HasSubstr("nothing was run"));
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(empty_or_absent(scratch / "syntax"));

  // A bad override, into a directory that already exists: it stays empty.
  fs::create_directories(scratch / "override");
  r = run_split(concat("run ", quoted(demo_config()), " --set workload.iterations=oops --out ",
                       quoted(scratch / "override"), " --no-progress --no-metrics"),
                scratch, "override");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("workload.iterations"));
  EXPECT_THAT(r.err, HasSubstr("\"oops\""));
  EXPECT_THAT(r.err, HasSubstr("nothing was run"));
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(empty_or_absent(scratch / "override"));
}

// Rank 0 issues two all-reduces, rank 1 one: a replay would wait forever in the second, so
// validate refuses the set as `inspect` flags it, and run refuses it before its first packet,
// naming both counts. (The engine's diagnosis of a replay stuck this way, for what the checks
// cannot see, is tested in tests/engine/engine_test.cc.)
TEST(RunCommand, MissingCollectiveIsRefusedBeforeTheRun) {
  auto scratch = etwire::testing::make_scratch_dir("run-missing");
  const std::string trace = write_mismatched_traces(scratch, "all_reduce", 2, "all_reduce", 1);
  const fs::path config = write_two_rank_config(scratch, trace);
  const std::string expected =
      "the members of the all-ranks group disagree on its collectives: rank 0 issues 2, rank 1 "
      "issues 1";
  auto validated = etwire::testing::run_etwire(concat("validate ", quoted(config)));
  EXPECT_EQ(validated.code, 2) << validated.output;
  EXPECT_THAT(validated.output, HasSubstr(expected));

  const fs::path out = scratch / "results";
  auto r = run_split(
      concat("run ", quoted(config), " --out ", quoted(out), " --no-progress --no-metrics"),
      scratch, "missing");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(expected));
  EXPECT_THAT(r.err, HasSubstr("nothing was run"));
  EXPECT_FALSE(fs::exists(out / "summary.json"));
}

// Rank 1 issues an all-gather where rank 0 issues an all-reduce: the members disagree about the
// instance, which the run reports at once, naming both collectives.
TEST(RunCommand, MismatchedCollectiveTypeIsDiagnosed) {
  auto scratch = etwire::testing::make_scratch_dir("run-mismatch");
  const std::string trace = write_mismatched_traces(scratch, "all_reduce", 2, "all_gather", 2);
  const fs::path config = write_two_rank_config(scratch, trace);
  const fs::path out = scratch / "results";
  auto r = run_split(
      concat("run ", quoted(config), " --out ", quoted(out), " --no-progress --no-metrics"),
      scratch, "mismatch");
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  // The rank file is named as the trace set resolves it: against the configuration's directory.
  const std::string expected = concat(
      "mismatched traces in job \"pair\": ", (scratch / "a/t.1.et").string(),
      ": record 1 (node id 1) issues ALL_GATHER of 65536 bytes as collective #0 of the all-ranks "
      "group, but rank 0 issued ALL_REDUCE of 65536 bytes there");
  EXPECT_THAT(r.out, HasSubstr(expected));
  EXPECT_THAT(r.err, HasSubstr(expected));
  EXPECT_THAT(r.out, HasSubstr("\nStatus stuck: "));

  auto summary = read_summary(out);
  EXPECT_EQ(summary["status"], "stuck");
  ASSERT_TRUE(summary.contains("diagnosis"));
  EXPECT_THAT(summary["diagnosis"].get<std::string>(), HasSubstr(expected));
  EXPECT_EQ(summary["collectives"].size(), 0u);
}

// SIGINT stops a long run at the next event: exit 130, and every result file is written and
// whole, with the flows and instances completed so far.
TEST(RunCommand, InterruptWritesResultsSoFar) {
  auto scratch = etwire::testing::make_scratch_dir("run-interrupt");
  const fs::path out = scratch / "results";
  // 5000 iterations of the demo take well over 5 s of wall time in a Release build (about 3 ms
  // an iteration), so the run is still going when the signal comes. flows.csv stays empty until
  // its first MiB is written, inside the event loop, so the script waits for that: the signal
  // then comes in the middle of the run (tests/cli/stop_signals_e2e_test.py sends them earlier).
  // A background job of a non-interactive shell starts with SIGINT ignored, which etwire keeps;
  // `timeout` catches SIGINT, so its child starts with the default, and forwards it. It also
  // bounds the test should the signal be lost anyway.
  const uint64_t iterations = 5000;
  std::string script = "timeout -s KILL 120 ";
  script += etwire::testing::etwire_binary().string();
  script += " run ";
  script += quoted(demo_config());
  script += " --set workload.iterations=";
  script += std::to_string(iterations);
  script += " --out ";
  script += quoted(out);
  script += " --no-progress --no-metrics >";
  script += quoted(scratch / "stdout");
  script += " 2>";
  script += quoted(scratch / "stderr");
  script += " & pid=$!; i=0; while [ ! -s ";
  script += quoted(out / "flows.csv");
  script +=
      " ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; kill -INT $pid; wait $pid; "
      "echo code=$?";
  std::string output;
  ASSERT_EQ(etwire::testing::run_command(script, output), 0) << output;
  const std::string report = slurp(scratch / "stdout");
  const std::string errors = slurp(scratch / "stderr");
  EXPECT_THAT(output, HasSubstr("code=130")) << report << errors;

  auto summary = read_summary(out);
  EXPECT_EQ(summary["status"], "interrupted");
  // Stopped early: some iterations completed, not all of them.
  EXPECT_GT(summary["iterations"].size(), 0u);
  EXPECT_LT(summary["iterations"].size(), iterations);
  auto flows = read_csv(out / "flows.csv");
  EXPECT_GT(flows.rows.size(), 0u);
  EXPECT_EQ(flows.rows.size(), summary["flows"].get<uint64_t>());
  EXPECT_EQ(read_csv(out / "collectives.csv").rows.size(), summary["collectives"].size());
  EXPECT_THAT(report, HasSubstr("\nStatus interrupted: "));
}

// A configuration that validates but names ports the engine cannot drive yet (DPDK) is bad
// input: exit 2, the port named, and no summary since nothing ran.
// The lab's PCI ports and cores are not on this machine: DPDK refuses to start, which is the
// environment's fault (exit 1), and nothing is written.
TEST(RunCommand, AbsentDpdkHardwareStopsTheRunBeforeResults) {
  auto scratch = etwire::testing::make_scratch_dir("run-dpdk");
  const fs::path config = etwire::testing::source_dir() / "configs/dpdk-lab.yaml";
  const fs::path out = scratch / "results";
  auto r = run_split(
      concat("run ", quoted(config), " --out ", quoted(out), " --no-progress --no-metrics"),
      scratch, "dpdk");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("error: DPDK's EAL did not start with arguments"));
  EXPECT_THAT(r.err, HasSubstr("-a 0000:3b:00.0 -a 0000:3b:00.1"));
  EXPECT_FALSE(fs::exists(out / "summary.json"));
  EXPECT_FALSE(fs::exists(out / "collectives.csv"));
}

// A lab's verbs configuration on a machine without RDMA devices: `run` stops with libibverbs'
// reason before anything is written (exit 2), and so does `validate --devices`; plain `validate`
// checks the settings only and passes.
TEST(RunCommand, VerbsRunWithoutRdmaDevicesSaysSo) {
  auto scratch = etwire::testing::make_scratch_dir("run-verbs");
  const fs::path config = etwire::testing::source_dir() / "configs/verbs-lab.yaml";
  const fs::path out = scratch / "results";
  auto r = run_split(
      concat("run ", quoted(config), " --out ", quoted(out), " --no-progress --no-metrics"),
      scratch, "verbs");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("error: no RDMA device"));
  EXPECT_TRUE(empty_or_absent(out));

  auto v = run_split(concat("validate --devices ", quoted(config)), scratch, "verbs-validate");
  EXPECT_EQ(v.code, 2) << v.out << v.err;
  EXPECT_THAT(v.err, HasSubstr("error: no RDMA device"));
  EXPECT_THAT(v.err, HasSubstr("the devices failed the checks `run` makes"));

  auto plain = run_split(concat("validate ", quoted(config)), scratch, "verbs-settings");
  EXPECT_EQ(plain.code, 0) << plain.out << plain.err;
}

// The same lab configuration on the software RNIC runs end to end: the GID index the lab names
// (3, RoCE v2 IPv4) is the one the software RNIC's table has there too.
TEST(RunCommand, VerbsLabConfigRunsOnTheSoftwareRnic) {
  auto scratch = etwire::testing::make_scratch_dir("run-verbs-software");
  const fs::path config = etwire::testing::source_dir() / "configs/verbs-lab.yaml";
  const fs::path out = scratch / "results";
  auto r = run_split(concat("run ", quoted(config), " --out ", quoted(out),
                            " --no-progress --no-metrics --set verbs.rnic=software"),
                     scratch, "verbs-software");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Status completed"));
  EXPECT_THAT(r.out, HasSubstr("Note: rail3: mlx5_3 port 1, GID 3: 172.16.0.4 (ipv4)"));
  const auto summary = read_summary(out);
  EXPECT_EQ(summary["failed_flows"], 0);
  EXPECT_GT(summary["flows"].get<uint64_t>(), 0u);
  ASSERT_EQ(summary["ports"].size(), 8u);
  EXPECT_GT(summary["ports"][0]["tx_bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(summary["notes"].size(), 9u);  // a GID per port, and how DCQCN runs
}

// The case study's configuration runs as docs/case-study-moe-mix.md runs it, shortened from 12 and
// 96 iterations to 3 and 24 (about 5 ms of virtual time instead of 20): both jobs together, and
// the all-reduce alone through the documented override that leaves the all-to-all job only its
// compute. Together, DCQCN acts (CNPs) on a lossless fabric (no drops); alone, the all-reduce
// runs near the link's goodput, and sharing the hosts with the all-to-all costs it over a quarter.
TEST(RunCommand, CaseStudyConfigRunsMixedAndAlone) {
  auto scratch = etwire::testing::make_scratch_dir("run-case-study");
  const fs::path config = etwire::testing::source_dir() / "configs/case-study-moe-mix.yaml";
  const std::string shorter =
      " --no-progress --no-metrics --set workload.jobs[0].iterations=3"
      " --set workload.jobs[1].iterations=24";
  struct Busbw {
    double sum = 0;
    int count = 0;
    double mean() const { return count == 0 ? 0 : sum / count; }
  };
  auto all_reduce_busbw = [](const nlohmann::ordered_json& summary, double min_ideal_percent) {
    Busbw busbw;
    for (const auto& collective : summary["collectives"]) {
      if (collective["job"] != "allreduce") continue;
      EXPECT_GE(collective["ideal_percent"].get<double>(), min_ideal_percent) << collective;
      busbw.sum += collective["busbw_GBps"].get<double>();
      ++busbw.count;
    }
    return busbw;
  };
  auto count_of = [](const nlohmann::ordered_json& summary, const std::string& job) {
    return std::count_if(summary["collectives"].begin(), summary["collectives"].end(),
                         [&](const auto& collective) { return collective["job"] == job; });
  };
  auto port_total = [](const nlohmann::ordered_json& summary, const char* counter) {
    uint64_t total = 0;
    for (const auto& port : summary["ports"]) total += port[counter].get<uint64_t>();
    return total;
  };

  auto mixed =
      run_split(concat("run ", quoted(config), " --out ", quoted(scratch / "mixed"), shorter),
                scratch, "mixed");
  ASSERT_EQ(mixed.code, 0) << mixed.out << mixed.err;
  const auto together = read_summary(scratch / "mixed");
  EXPECT_EQ(together["status"], "completed");
  EXPECT_EQ(together["failed_flows"], 0);
  EXPECT_EQ(count_of(together, "allreduce"), 3);
  EXPECT_EQ(count_of(together, "alltoall"), 24);
  EXPECT_GT(port_total(together, "cnps_received"), 0u);
  EXPECT_EQ(port_total(together, "drops"), 0u);
  const Busbw shared = all_reduce_busbw(together, 0);

  auto alone_run =
      run_split(concat("run ", quoted(config), " --out ", quoted(scratch / "alone"), shorter,
                       " --set 'workload.jobs[1].filter.node_types=[COMP_NODE]'"),
                scratch, "alone");
  ASSERT_EQ(alone_run.code, 0) << alone_run.out << alone_run.err;
  const auto alone = read_summary(scratch / "alone");
  EXPECT_EQ(alone["status"], "completed");
  EXPECT_EQ(count_of(alone, "allreduce"), 3);
  EXPECT_EQ(count_of(alone, "alltoall"), 0);
  const Busbw own = all_reduce_busbw(alone, 85);
  ASSERT_EQ(own.count, 3);
  ASSERT_EQ(shared.count, 3);
  EXPECT_LT(shared.mean(), 0.75 * own.mean()) << shared.mean() << " vs " << own.mean();
}

TEST(RunCommand, HelpNamesTheResultFiles) {
  auto r = etwire::testing::run_etwire("run --help");
  EXPECT_EQ(r.code, 0) << r.output;
  for (const char* text : {"summary.json", "collectives.csv", "flows.csv", "--watchdog", "--out"}) {
    EXPECT_THAT(r.output, HasSubstr(text));
  }
}

// A bad --watchdog is a command-line error, found before anything is loaded or written.
TEST(RunCommand, BadWatchdogIsRejected) {
  auto scratch = etwire::testing::make_scratch_dir("run-watchdog");
  for (const char* value : {"banana", "0"}) {
    std::string args = "run ";
    args += quoted(demo_config());
    args += " --out ";
    args += quoted(scratch / "results");
    args += " --no-progress --no-metrics --watchdog ";
    args += value;
    auto r = run_split(args, scratch, "watchdog");
    EXPECT_EQ(r.code, 2) << value << ": " << r.out << r.err;
    std::string expected = "--watchdog ";
    expected += value;
    expected += ": expected a positive duration";
    EXPECT_THAT(r.err, HasSubstr(expected));
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(empty_or_absent(scratch / "results"));
  }
}

}  // namespace
}  // namespace etwire
