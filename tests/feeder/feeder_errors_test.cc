// Bad graphs: each error names the file, the record and the node id, and says what is wrong.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/feeder/contains.h"
#include "tests/feeder/drain.h"
#include "tests/feeder/vector_source.h"
#include "trace/feeder/feeder.h"
#include "trace/trace_error.h"

namespace etwire::feeder {
namespace {

using testing::contains;
using testing::drain;
using testing::make_node;
using testing::source_of;

// Drains the feeder and returns the TraceError it throws; fails the test if it throws none.
trace::TraceError drain_error(Feeder& feeder, uint32_t max_in_flight = 1) {
  try {
    drain(feeder, max_in_flight);
  } catch (const trace::TraceError& error) {
    return error;
  }
  ADD_FAILURE() << "no TraceError thrown";
  return trace::TraceError({}, "none");
}

FeederOptions with_window(uint32_t window) {
  FeederOptions options;
  options.window = window;
  return options;
}

TEST(FeederErrors, DuplicateIdNamesBothRecords) {
  Feeder feeder(
      source_of({make_node(41), make_node(42), make_node(43), make_node(42)}, "dup.3.et"));
  trace::TraceError error = drain_error(feeder);
  EXPECT_EQ(error.where().file, "dup.3.et");
  EXPECT_EQ(error.where().record_index, 4u);
  EXPECT_EQ(error.where().node_id, 42u);
  EXPECT_TRUE(contains(error.what(), "dup.3.et: record 4 (node id 42)"));
  EXPECT_TRUE(contains(error.problem(), "node id 42 appears again at record 4"));
  EXPECT_TRUE(contains(error.problem(), "first read at record 2"));
}

TEST(FeederErrors, DuplicateOfAnEvictedNodeIsStillCaught) {
  // With a window of 1 the first node 42 is completed and forgotten long before the second.
  std::vector<trace::TraceNode> nodes;
  for (uint64_t id = 0; id < 100; ++id) nodes.push_back(make_node(id));
  nodes.push_back(make_node(42));
  Feeder feeder(source_of(nodes, "dup.0.et"), with_window(1));
  trace::TraceError error = drain_error(feeder);
  EXPECT_EQ(error.where().record_index, 101u);
  EXPECT_EQ(error.where().node_id, 42u);
  EXPECT_TRUE(contains(error.problem(), "node id 42 appears again at record 101"));
  EXPECT_TRUE(contains(error.problem(), "first read earlier in the file"));
}

TEST(FeederErrors, SelfDataDependencyIsACycleOfOne) {
  Feeder feeder(source_of({make_node(1), make_node(7, {1, 7})}, "self.0.et"));
  trace::TraceError error = drain_error(feeder);
  EXPECT_EQ(error.where().file, "self.0.et");
  EXPECT_EQ(error.where().record_index, 2u);
  EXPECT_EQ(error.where().node_id, 7u);
  EXPECT_TRUE(contains(error.problem(), "node id 7 lists itself in data_deps"));
  EXPECT_TRUE(contains(error.problem(), "cycle of one node"));
}

TEST(FeederErrors, CycleNamesEveryNodeInIt) {
  // 1 waits for 3, 3 for 2, 2 for 1. Node 0 is fine and runs first.
  Feeder feeder(source_of(
      {make_node(0), make_node(1, {3}), make_node(2, {1}), make_node(3, {2, 0})}, "cycle.1.et"));
  trace::TraceError error = drain_error(feeder);
  EXPECT_EQ(error.where().file, "cycle.1.et");
  EXPECT_EQ(error.where().record_index, 2u);
  EXPECT_EQ(error.where().node_id, 1u);
  EXPECT_TRUE(contains(error.problem(), "dependency cycle of 3 nodes"));
  EXPECT_TRUE(contains(error.problem(), "1 -> 3 -> 2 -> 1"));
  EXPECT_EQ(feeder.stats().nodes_completed, 1u) << "node 0 ran before the cycle was found";
}

TEST(FeederErrors, CycleIsFoundWithoutReadingTheRestOfTheFile) {
  // A two-node cycle at the start of a long file: once the window holds nothing but the cycle
  // and no parent is missing, nothing can ever run, so the feeder reports it right away.
  std::vector<trace::TraceNode> nodes{make_node(1, {2}), make_node(2, {1})};
  for (uint64_t id = 3; id < 10000; ++id) nodes.push_back(make_node(id, {id - 1}));
  Feeder feeder(source_of(nodes), with_window(2));
  trace::TraceError error = drain_error(feeder);
  EXPECT_TRUE(contains(error.problem(), "1 -> 2 -> 1"));
  EXPECT_LE(feeder.stats().nodes_read, 2u);
}

TEST(FeederErrors, LongCycleIsShortenedInTheMessage) {
  std::vector<trace::TraceNode> nodes;
  for (uint64_t id = 0; id < 100; ++id) nodes.push_back(make_node(id, {(id + 1) % 100}));
  Feeder feeder(source_of(nodes));
  trace::TraceError error = drain_error(feeder);
  EXPECT_TRUE(contains(error.problem(), "dependency cycle of 100 nodes"));
  EXPECT_TRUE(contains(error.problem(), "0 -> 1 -> 2 -> "));
  EXPECT_TRUE(contains(error.problem(), "(84 more) -> 0"));
}

TEST(FeederErrors, CycleBehindAForwardReferenceIsFoundOnceItsNodesAreRead) {
  // 5 and 6 form a cycle and 4 waits for 6. Once 6 is read no node waits for an unread parent,
  // so the cycle is certain and node 7 need not be read.
  Feeder feeder(source_of({make_node(4, {6}), make_node(5, {6}), make_node(6, {5}), make_node(7)},
                          "cyc.0.et"),
                with_window(1));
  trace::TraceError error = drain_error(feeder);
  EXPECT_TRUE(contains(error.problem(), "5 -> 6 -> 5"));
  EXPECT_EQ(error.where().node_id, 5u);
  EXPECT_EQ(error.where().record_index, 2u);
  EXPECT_EQ(feeder.stats().nodes_read, 3u);
}

TEST(FeederErrors, DataDependencyThatNeverResolvesNamesChildRecordAndParent) {
  Feeder feeder(source_of({make_node(1), make_node(2, {1, 99}), make_node(3)}, "miss.2.et"));
  trace::TraceError error = drain_error(feeder);
  EXPECT_EQ(error.where().file, "miss.2.et");
  EXPECT_EQ(error.where().record_index, 2u);
  EXPECT_EQ(error.where().node_id, 2u);
  EXPECT_TRUE(contains(error.problem(), "node id 2 has a data dependency on node id 99"));
  EXPECT_TRUE(contains(error.problem(), "never appears in the file"));
}

TEST(FeederErrors, MissingParentsReportTheFirstChildInTheFileAndCountTheRest) {
  Feeder feeder(
      source_of({make_node(10, {500}), make_node(11, {501}), make_node(12, {500}), make_node(13)}));
  trace::TraceError error = drain_error(feeder);
  EXPECT_EQ(error.where().node_id, 10u);
  EXPECT_EQ(error.where().record_index, 1u);
  EXPECT_TRUE(contains(error.problem(), "node id 500"));
  EXPECT_TRUE(contains(error.problem(), "2 more data dependencies"));
}

TEST(FeederErrors, MissingParentIsReportedEvenWhileOtherNodesRun) {
  // The error comes when the file ends, whatever is in flight then.
  std::vector<trace::TraceNode> nodes{make_node(0, {12345})};
  for (uint64_t id = 1; id < 50; ++id) nodes.push_back(make_node(id));
  Feeder feeder(source_of(nodes), with_window(4));
  trace::TraceError error = drain_error(feeder, 8);
  EXPECT_EQ(error.where().node_id, 0u);
  EXPECT_TRUE(contains(error.problem(), "node id 12345"));
}

}  // namespace
}  // namespace etwire::feeder
