// The configuration's JSON Schema as the section parsers state it
// (control/resolve/config_schema.h): the recorder's merge of what is asked at a path, and keys that
// only a probe reaches (an element of a list, a choice's branch) in the schema. Validating
// documents against it is tests/cli/config_schema_test.py's part, with a JSON Schema validator.
#include <gtest/gtest.h>

#include <algorithm>

#include "control/load/schema_recorder.h"
#include "control/load/value_readers.h"
#include "control/resolve/config_schema.h"

namespace etwire::control {
namespace {

TEST(ConfigSchema, GeneralPathsDropListIndexes) {
  EXPECT_EQ(general_path("ports[3].dpdk.lcores[10]"), "ports[].dpdk.lcores[]");
  EXPECT_EQ(general_path("fabric.faults"), "fabric.faults");
  EXPECT_EQ(general_path(""), "");
}

TEST(ConfigSchema, ARecorderKeepsWhatSaysMost) {
  SchemaRecorder recorder;
  recorder.expect("run.iterations", expected_plain(ValueKind::kAny));
  recorder.expect("run.iterations", expected_integer(1, 100));
  recorder.expect("run.iterations", expected_plain(ValueKind::kAny));
  recorder.expect("fabric.faults[0].kind", expected_plain(ValueKind::kText));
  recorder.expect("fabric.faults[1].kind", expected_plain(ValueKind::kChoice));
  recorder.expect("fabric.faults[2].kind", expected_plain(ValueKind::kText));
  ASSERT_EQ(recorder.expected().size(), 2u);
  const ExpectedValue& iterations = recorder.expected().at("run.iterations");
  EXPECT_EQ(iterations.kind, ValueKind::kInteger);
  EXPECT_EQ(iterations.max, 100);
  EXPECT_EQ(recorder.expected().at("fabric.faults[].kind").kind, ValueKind::kChoice);
}

TEST(ConfigSchema, ReachesKeysBehindListsAndChoices) {
  const nlohmann::json schema = config_json_schema("test");
  EXPECT_EQ(schema.at("additionalProperties"), false);
  const auto& top = schema.at("properties");
  for (const char* section : {"run", "workload", "ports", "mapping", "collectives", "transport",
                              "fabric", "telemetry", "dpdk", "verbs", "emulators"}) {
    EXPECT_TRUE(top.contains(section)) << section;
  }
  // An element of a list of sections, with its own keys.
  const auto& port = top.at("ports").at("items");
  EXPECT_EQ(port.at("type"), nlohmann::json({"object", "null"}));
  EXPECT_EQ(port.at("additionalProperties"), false);
  EXPECT_TRUE(port.at("properties").at("speed").contains("pattern"));
  // A choice lists its names; a fault list's element reaches the fault kinds.
  const auto& fault = top.at("fabric").at("properties").at("faults").at("items");
  const auto& names = fault.at("properties").at("kind").at("anyOf").at(0).at("enum");
  EXPECT_NE(std::find(names.begin(), names.end(), "link-down"), names.end()) << names;
  // A range as the reader checks it.
  const auto& mtu = port.at("properties").at("mtu");
  EXPECT_TRUE(mtu.contains("minimum") && mtu.contains("maximum")) << mtu;
}

}  // namespace
}  // namespace etwire::control
