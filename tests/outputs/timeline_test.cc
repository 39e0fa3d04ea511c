// The pieces of `etwire timeline`: lanes for overlapping slices, the trace event writer's JSON,
// and nodes.csv's rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "outputs/node_csv_writer.h"
#include "outputs/timeline/lane_assigner.h"
#include "outputs/timeline/trace_event_writer.h"
#include "tests/testing/test_paths.h"
#include "trace/node.h"

namespace etwire::outputs::timeline {
namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(LaneAssigner, OverlappingSlicesTakeSeparateLanesAndTouchingOnesShare) {
  LaneAssigner lanes;
  lanes.add(7, 0, 10);   // 0: lane 0
  lanes.add(7, 5, 15);   // 1: overlaps 0 -> lane 1
  lanes.add(7, 10, 20);  // 2: starts where 0 ends -> lane 0 again
  lanes.add(7, 12, 13);  // 3: overlaps 1 and 2 -> lane 2
  lanes.add(7, 16, 30);  // 4: 1 ended at 15 -> lane 1
  lanes.add(8, 5, 15);   // 5: another track starts at lane 0
  lanes.assign();
  EXPECT_EQ(lanes.lane(0), 0u);
  EXPECT_EQ(lanes.lane(1), 1u);
  EXPECT_EQ(lanes.lane(2), 0u);
  EXPECT_EQ(lanes.lane(3), 2u);
  EXPECT_EQ(lanes.lane(4), 1u);
  EXPECT_EQ(lanes.lane(5), 0u);
}

TEST(LaneAssigner, SlicesAddedOutOfOrderNeverShareALaneWhileOverlapping) {
  LaneAssigner lanes;
  // Completion order, as nodes.csv and flows.csv list them: the long slice ends last.
  const int64_t slices[][2] = {{10, 20}, {30, 40}, {0, 50}, {45, 60}, {20, 30}};
  for (const auto& s : slices) lanes.add(1, s[0], s[1]);
  lanes.assign();
  for (size_t a = 0; a < std::size(slices); ++a) {
    for (size_t b = a + 1; b < std::size(slices); ++b) {
      const bool overlap = slices[a][0] < slices[b][1] && slices[b][0] < slices[a][1];
      if (overlap) {
        EXPECT_NE(lanes.lane(a), lanes.lane(b)) << a << " and " << b;
      }
    }
  }
  uint32_t most = 0;
  for (size_t i = 0; i < std::size(slices); ++i) most = std::max(most, lanes.lane(i));
  EXPECT_EQ(most, 1u);  // at most two slices overlap at any time: two lanes do
}

TEST(TraceEventWriter, WritesJsonWithExactMicrosecondsAndEscapedNames) {
  const std::filesystem::path dir = testing::make_scratch_dir("timeline-writer");
  const std::filesystem::path path = dir / "t.json";
  TraceEventWriter out(path.string());
  out.process(3, "job \"a\"", 3);
  out.thread(3, 9, "rank 0 compute", 0);
  out.slice(3, 9, "aten::mm,\n\"x\"", "compute", 1'234'567'890'123, 1'234'567'890'124,
            {{"node_id", 5}});
  out.counter(4, "throughput (Gb/s)", 999, {{"tx", 1.5}});
  out.close({{"run", "r"}});
  EXPECT_EQ(out.events(), 6u);
  const nlohmann::json trace = nlohmann::json::parse(read_file(path));
  const nlohmann::json& events = trace.at("traceEvents");
  ASSERT_EQ(events.size(), 6u);
  EXPECT_EQ(events[0].at("args").at("name"), "job \"a\"");
  EXPECT_EQ(events[1].at("name"), "process_sort_index");
  EXPECT_EQ(events[2].at("tid"), 9);
  const nlohmann::json& slice = events[4];
  EXPECT_EQ(slice.at("ph"), "X");
  EXPECT_EQ(slice.at("name"), "aten::mm,\n\"x\"");
  // Digit for digit: 1234567890.123 us would not survive a double's default formatting.
  EXPECT_NE(read_file(path).find("\"ts\":1234567890.123,\"dur\":0.001"), std::string::npos);
  EXPECT_EQ(events[5].at("ph"), "C");
  EXPECT_DOUBLE_EQ(events[5].at("ts").get<double>(), 0.999);
  EXPECT_EQ(trace.at("otherData").at("run"), "r");
  std::filesystem::remove_all(dir);
}

TEST(TraceEventWriter, UnwritablePathThrowsNamingIt) {
  try {
    TraceEventWriter out("/proc/version/no/t.json");
    out.close({});
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/proc/version/no/t.json"), std::string::npos);
  }
}

TEST(NodeCsvWriter, QuotesNamesAndLeavesComputeInstancesEmpty) {
  const std::filesystem::path dir = testing::make_scratch_dir("nodes-csv");
  const std::filesystem::path path = dir / "nodes.csv";
  NodeCsvWriter out(path.string(), {"train, step"});
  trace::TraceNode compute;
  compute.id = 12;
  compute.name = "aten::mm";
  compute.type = trace::NodeType::kComp;
  trace::TraceNode coll;
  coll.id = 13;
  coll.name = "nccl:all_reduce \"x\"";
  coll.type = trace::NodeType::kCommColl;
  out.append({0, 3, 1, &compute, -1, 100, 250});
  out.append({0, 3, 1, &coll, 7, 250, 900});
  out.append({4, 0, 0, &compute, -1, 0, 1});  // a job without a name prints its index
  out.close();
  EXPECT_EQ(out.rows(), 3u);
  EXPECT_EQ(read_file(path),
            "job,rank,iteration,node_id,name,type,instance,start_ns,end_ns\n"
            "\"train, step\",3,1,12,aten::mm,COMP_NODE,,100,250\n"
            "\"train, step\",3,1,13,\"nccl:all_reduce \"\"x\"\"\",COMM_COLL_NODE,7,250,900\n"
            "4,0,0,12,aten::mm,COMP_NODE,,0,1\n");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace etwire::outputs::timeline
