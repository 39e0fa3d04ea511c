// Configurations that are not YAML text get a message that says what is wrong with the file,
// at its place: a NUL byte (a binary or damaged file, which the parser would read as UTF-16),
// nesting past the parser's depth limit (which yaml-cpp reports as "bad file"), lists far longer
// than the schema uses (the parser would take a gigabyte for a million entries), a quote that
// never closes (which the parser reads to the end of the file).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "control/resolve/config_loader.h"
#include "tests/control/test_configs.h"

namespace etwire::control {
namespace {

using ::testing::HasSubstr;
using testing::load_inline;

TEST(MalformedYaml, ANulByteIsNamedAtItsLineAndColumn) {
  const auto first = load_inline(std::string("\0workload: x\n", 13));
  ASSERT_EQ(first.diagnostics.items().size(), 1u) << first.diagnostics.to_text();
  EXPECT_THAT(first.diagnostics.items()[0].message, HasSubstr("NUL byte (byte 1)"));
  EXPECT_EQ(first.diagnostics.items()[0].where.line, 1);
  EXPECT_EQ(first.diagnostics.items()[0].where.column, 1);

  const auto later = load_inline(std::string("run:\n  name: ab\0c\n", 19));
  ASSERT_EQ(later.diagnostics.items().size(), 1u) << later.diagnostics.to_text();
  EXPECT_EQ(later.diagnostics.items()[0].where.line, 2);
  EXPECT_EQ(later.diagnostics.items()[0].where.column, 11);
}

TEST(MalformedYaml, DeepNestingSaysSo) {
  const auto flow = load_inline("a: " + std::string(3000, '[') + std::string(3000, ']') + "\n");
  ASSERT_FALSE(flow.ok());
  ASSERT_EQ(flow.diagnostics.items().size(), 1u) << flow.diagnostics.to_text();
  EXPECT_THAT(flow.diagnostics.items()[0].message, HasSubstr("nested deeper than"));
  EXPECT_THAT(flow.diagnostics.items()[0].message, ::testing::Not(HasSubstr("bad file")));

  std::string block = "a:\n";
  for (int i = 0; i < 1000; ++i) block += std::string(2 * i + 2, ' ') + "k:\n";
  const auto nested = load_inline(block);
  ASSERT_FALSE(nested.ok());
  EXPECT_THAT(nested.diagnostics.items()[0].message, HasSubstr("nested deeper than"));
}

TEST(MalformedYaml, AHugeListIsRefusedBeforeItIsParsed) {
  std::string flow = "workload: {jobs: [{trace: x}]}\nports: [{name: p}]\nmapping: [";
  for (int i = 0; i < 300'000; ++i) flow += "p,";
  flow += "p]\n";
  const auto loaded = load_inline(flow);
  ASSERT_EQ(loaded.diagnostics.items().size(), 1u) << loaded.diagnostics.to_text();
  EXPECT_THAT(loaded.diagnostics.items()[0].message, HasSubstr("more than 262144 lines and list"));
  EXPECT_EQ(loaded.diagnostics.items()[0].where.line, 3);

  std::string block = "workload:\n  jobs:\n    - trace: x\nports:\n";
  for (int i = 0; i < 300'000; ++i) block += "  - name: p" + std::to_string(i) + "\n";
  const auto lines = load_inline(block);
  ASSERT_EQ(lines.diagnostics.items().size(), 1u);
  EXPECT_THAT(lines.diagnostics.items()[0].message, HasSubstr("more than 262144"));
}

// yaml-cpp reads a quote that never closes as a value running to the end of the file: the keys
// after it vanished into the value, and the schema reported them missing at line 1.
TEST(MalformedYaml, AQuoteThatNeverClosesIsNamedWhereItOpens) {
  for (const char quote : {'"', '\''}) {
    std::string text = "run:\n  name: ";
    text += quote;
    text += "unterminated\nworkload:\n  jobs:\n    - trace: traces/allreduce_8r/allreduce\n";
    const auto loaded = load_inline(text);
    ASSERT_EQ(loaded.diagnostics.items().size(), 1u) << loaded.diagnostics.to_text();
    const Diagnostic& d = loaded.diagnostics.items()[0];
    EXPECT_THAT(d.message, HasSubstr("this quote is never closed")) << quote;
    EXPECT_EQ(d.where.line, 2) << quote;
    EXPECT_EQ(d.where.column, 9) << quote;
  }
  // Closed quotes, escapes and values over several lines are fine.
  const std::string closed = std::string(testing::kMinimalConfig) +
                             "run:\n  name: \"a \\\" b\n    c\"\n"
                             "telemetry:\n  output_dir: 'it''s'\n";
  const auto loaded = load_inline(closed);
  EXPECT_TRUE(loaded.ok()) << loaded.diagnostics.to_text();
  EXPECT_EQ(loaded.config.run.name, "a \" b c");
  EXPECT_EQ(
      loaded.config.telemetry.output_dir.substr(loaded.config.telemetry.output_dir.size() - 4),
      "it's");
}

}  // namespace
}  // namespace etwire::control
