// ctrl_deps: ignored by default; honoured on request, forgiving self-references and ids that never
// appear (converters write both), but not cycles.
#include <gtest/gtest.h>

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
using Ids = std::vector<uint64_t>;

trace::TraceNode with_ctrl(trace::TraceNode node, std::vector<uint64_t> ctrl_deps) {
  node.ctrl_deps = std::move(ctrl_deps);
  return node;
}

FeederOptions honouring_ctrl_deps(uint32_t window = 4096) {
  FeederOptions options;
  options.ctrl_deps = CtrlDeps::kHonour;
  options.window = window;
  return options;
}

// Node 2 has a ctrl dep on 3 (read later), a ctrl self-reference and a ctrl dep on an id that
// is nowhere in the file.
std::vector<trace::TraceNode> converter_style_nodes() {
  return {make_node(1), with_ctrl(make_node(2), {3, 2, 777}), make_node(3)};
}

TEST(FeederCtrlDeps, IgnoredByDefault) {
  Feeder feeder(source_of(converter_style_nodes()));
  EXPECT_EQ(drain(feeder), (Ids{1, 2, 3}));
  EXPECT_EQ(feeder.stats().ctrl_self_refs_dropped, 0u);
  EXPECT_EQ(feeder.stats().ctrl_dangling_dropped, 0u);
  EXPECT_EQ(feeder.stats().peak_unresolved, 0u);
}

TEST(FeederCtrlDeps, HonouredTheyOrderNodesAndBadLinksAreDroppedAndCounted) {
  Feeder feeder(source_of(converter_style_nodes()), honouring_ctrl_deps());
  EXPECT_EQ(drain(feeder), (Ids{1, 3, 2}));
  EXPECT_EQ(feeder.stats().ctrl_self_refs_dropped, 1u);
  EXPECT_EQ(feeder.stats().ctrl_dangling_dropped, 1u);
}

TEST(FeederCtrlDeps, DanglingCtrlDepHoldsItsNodeUntilTheFileEnds) {
  // Only at the end of the file is it certain that id 777 never comes.
  std::vector<trace::TraceNode> nodes{with_ctrl(make_node(0), {777})};
  for (uint64_t id = 1; id < 10; ++id) nodes.push_back(make_node(id));
  Feeder feeder(source_of(nodes), honouring_ctrl_deps(2));
  Ids order = drain(feeder);
  EXPECT_EQ(order.back(), 0u);
  EXPECT_EQ(order.size(), 10u);
  EXPECT_EQ(feeder.stats().ctrl_dangling_dropped, 1u);
  EXPECT_EQ(feeder.stats().peak_live_nodes, 2u);
}

TEST(FeederCtrlDeps, DataAndCtrlDepsOnTheSameParentBothHold) {
  Feeder feeder(source_of({with_ctrl(make_node(1, {2}), {2}), make_node(2), make_node(3)}),
                honouring_ctrl_deps());
  EXPECT_EQ(drain(feeder), (Ids{2, 3, 1}));
}

TEST(FeederCtrlDeps, HonouredCtrlCycleIsAnError) {
  Feeder feeder(source_of({with_ctrl(make_node(1), {2}), with_ctrl(make_node(2), {1})}, "c.0.et"),
                honouring_ctrl_deps());
  try {
    drain(feeder);
    FAIL() << "expected a cycle error";
  } catch (const trace::TraceError& error) {
    EXPECT_EQ(error.where().file, "c.0.et");
    EXPECT_EQ(error.where().node_id, 1u);
    EXPECT_TRUE(contains(error.problem(), "1 -ctrl-> 2 -ctrl-> 1"));
    EXPECT_TRUE(contains(error.problem(), "replay with ctrl deps ignored"));
  }
}

TEST(FeederCtrlDeps, CycleThroughBothKindsLabelsEachLink) {
  Feeder feeder(
      source_of({make_node(0), make_node(1, {2}), with_ctrl(make_node(2), {1})}, "m.0.et"),
      honouring_ctrl_deps());
  try {
    drain(feeder);
    FAIL() << "expected a cycle error";
  } catch (const trace::TraceError& error) {
    EXPECT_EQ(error.where().record_index, 2u);
    EXPECT_TRUE(contains(error.problem(), "1 -data-> 2 -ctrl-> 1"));
  }
}

TEST(FeederCtrlDeps, IgnoredCtrlCycleIsNotAnError) {
  Feeder feeder(source_of({with_ctrl(make_node(1), {2}), with_ctrl(make_node(2), {1})}));
  EXPECT_EQ(drain(feeder), (Ids{1, 2}));
}

TEST(FeederCtrlDeps, MissingDataParentIsStillAnErrorWhenCtrlDepsAreHonoured) {
  Feeder feeder(source_of({with_ctrl(make_node(1, {50}), {60}), make_node(2)}),
                honouring_ctrl_deps());
  try {
    drain(feeder);
    FAIL() << "expected an unresolved data dependency";
  } catch (const trace::TraceError& error) {
    EXPECT_EQ(error.where().node_id, 1u);
    EXPECT_TRUE(contains(error.problem(), "data dependency on node id 50"));
  }
}

}  // namespace
}  // namespace etwire::feeder
