// Text values of a configuration are UTF-8 without control characters: they end up in names,
// paths and summary.json, so a value that is not is refused where it is read, naming the key and
// the byte.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "control/resolve/config_loader.h"
#include "tests/control/test_configs.h"

namespace etwire::control {
namespace {

using ::testing::HasSubstr;
using testing::load_inline;

TEST(TextValues, BytesThatAreNotUtf8AreRefusedAtTheirKey) {
  const auto loaded = load_inline(
      "run:\n  name: \"lab-\xFF\xFE run\"\n"
      "workload:\n  jobs:\n    - trace: traces/allreduce_8r/allreduce\n"
      "ports:\n  - name: p\n    count: 8\n    speed: 100Gbps\n");
  ASSERT_FALSE(loaded.ok());
  const auto& items = loaded.diagnostics.items();
  ASSERT_EQ(items.size(), 1u) << loaded.diagnostics.to_text();
  EXPECT_EQ(items[0].key_path, "run.name");
  EXPECT_EQ(items[0].where.line, 2);
  EXPECT_THAT(items[0].message, HasSubstr("not UTF-8 (byte 5 of the value)"));
}

TEST(TextValues, ControlCharactersAreRefusedAtTheirKey) {
  // YAML's escapes make them: "\0" a NUL, "\b" a backspace.
  const auto loaded = load_inline(
      "run:\n  name: \"loop\\0back\"\n"
      "workload:\n  jobs:\n    - trace: traces/allreduce_8r/allreduce\n"
      "ports:\n  - name: \"p\\bq\"\n    count: 8\n    speed: 100Gbps\n");
  ASSERT_FALSE(loaded.ok());
  const auto& items = loaded.diagnostics.items();
  ASSERT_GE(items.size(), 2u) << loaded.diagnostics.to_text();
  EXPECT_EQ(items[0].key_path, "run.name");
  EXPECT_THAT(items[0].message, HasSubstr("control character U+0000 (byte 5 of the value)"));
  EXPECT_EQ(items[1].key_path, "ports[0].name");
  EXPECT_THAT(items[1].message, HasSubstr("control character U+0008 (byte 2 of the value)"));
}

// C1 controls (U+0080..U+009F) as well: a YAML escape ("\x85", "\u009B") or the raw UTF-8 bytes
// C2 80..C2 9F make one, and U+009B is a terminal's CSI (issue 39, N25).
TEST(TextValues, C1ControlCharactersAreRefusedAtTheirPlace) {
  const auto loaded = load_inline(
      "run:\n  name: \"next\\x85line\"\n"
      "workload:\n  jobs:\n    - trace: traces/allreduce_8r/allreduce\n"
      "ports:\n  - name: \"p\\u009Bq\"\n    count: 8\n    speed: 100Gbps\n"
      "  - name: r\xC2\x80s\n    count: 1\n");
  ASSERT_FALSE(loaded.ok());
  const auto& items = loaded.diagnostics.items();
  ASSERT_GE(items.size(), 3u) << loaded.diagnostics.to_text();
  EXPECT_EQ(items[0].key_path, "run.name");
  EXPECT_EQ(items[0].where.line, 2);
  EXPECT_EQ(items[0].where.column, 9);
  EXPECT_THAT(items[0].message, HasSubstr("control character U+0085 (byte 5 of the value)"));
  EXPECT_EQ(items[1].key_path, "ports[0].name");
  EXPECT_EQ(items[1].where.line, 7);
  EXPECT_THAT(items[1].message, HasSubstr("control character U+009B (byte 2 of the value)"));
  EXPECT_EQ(items[2].key_path, "ports[1].name");
  EXPECT_EQ(items[2].where.line, 10);
  EXPECT_THAT(items[2].message, HasSubstr("control character U+0080 (byte 2 of the value)"));
}

TEST(TextValues, TabsAndLineBreaksAreText) {
  const auto loaded = load_inline(
      "run:\n  name: \"a\\tb\"\n"
      "workload:\n  jobs:\n    - trace: traces/allreduce_8r/allreduce\n"
      "ports:\n  - name: p\n    count: 8\n    speed: 100Gbps\n");
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  EXPECT_EQ(loaded.config.run.name, "a\tb");
}

TEST(TextValues, Utf8TextIsKept) {
  const auto loaded = load_inline(
      "run:\n  name: \"d\xC3\xA9j\xC3\xA0-vu\"\n"
      "workload:\n  jobs:\n    - trace: traces/allreduce_8r/allreduce\n"
      "ports:\n  - name: p\n    count: 8\n    speed: 100Gbps\n");
  ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  EXPECT_EQ(loaded.config.run.name, "d\xC3\xA9j\xC3\xA0-vu");
  // The first code point past C1 (U+00A0, a no-break space) is text.
  const auto nbsp = load_inline(
      "run:\n  name: \"a\xC2\xA0"
      "b\"\n"
      "workload:\n  jobs:\n    - trace: traces/allreduce_8r/allreduce\n"
      "ports:\n  - name: p\n    count: 8\n    speed: 100Gbps\n");
  ASSERT_TRUE(nbsp.ok()) << nbsp.diagnostics.to_text();
}

}  // namespace
}  // namespace etwire::control
