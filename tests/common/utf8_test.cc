// UTF-8 validity: well-formed text of every sequence length passes; stray continuation bytes,
// truncated sequences, overlong forms, surrogates and code points past U+10FFFF are found at
// their first byte.
#include "common/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace etwire {
namespace {

TEST(Utf8, WellFormedTextOfEveryLengthPasses) {
  EXPECT_FALSE(first_invalid_utf8(""));
  EXPECT_FALSE(first_invalid_utf8("run-1"));
  EXPECT_FALSE(first_invalid_utf8("d\xC3\xA9j\xC3\xA0"));            // two bytes: é, à
  EXPECT_FALSE(first_invalid_utf8("\xE2\x82\xAC 100"));              // three: €
  EXPECT_FALSE(first_invalid_utf8("\xF0\x9F\x9A\x80"));              // four: U+1F680
  EXPECT_FALSE(first_invalid_utf8("\xED\x9F\xBF\xEE\x80\x80"));      // around the surrogates
  EXPECT_FALSE(first_invalid_utf8("\xF4\x8F\xBF\xBF"));              // U+10FFFF
  EXPECT_FALSE(first_invalid_utf8(std::string("nul\0inside", 10)));  // NUL is UTF-8
}

TEST(Utf8, MalformedSequencesAreFoundAtTheirFirstByte) {
  const struct {
    std::string text;
    size_t at;
  } cases[] = {
      {"ab\xFF", 2},               // never valid
      {"a\x80z", 1},               // a continuation byte alone
      {"caf\xC3", 3},              // truncated at the end
      {"\xE2\x82z", 0},            // truncated before another character
      {"\xC0\xAF", 0},             // overlong '/'
      {"\xE0\x80\xAF", 0},         // overlong, three bytes
      {"\xED\xA0\x80", 0},         // a surrogate, U+D800
      {"\xF4\x90\x80\x80", 0},     // past U+10FFFF
      {"ok \xF5\x80\x80\x80", 3},  // lead byte past F4
      {"x\xC3\xA9\xA9", 3},        // one continuation too many
  };
  for (const auto& c : cases) {
    const auto bad = first_invalid_utf8(c.text);
    ASSERT_TRUE(bad) << c.at;
    EXPECT_EQ(*bad, c.at);
  }
}

// Control characters of every kind, at their first byte: C0 but tab and line breaks, DEL, and C1
// (U+0080..U+009F) in its two UTF-8 bytes.
TEST(Utf8, ControlCharactersAreFoundAtTheirFirstByte) {
  EXPECT_FALSE(first_control_character(""));
  EXPECT_FALSE(first_control_character("a\tb\r\nc"));
  EXPECT_FALSE(first_control_character("d\xC3\xA9j\xC2\xA0\xC2\xBF"));  // é, U+00A0, U+00BF
  const struct {
    std::string text;
    size_t at;
    char32_t code_point;
  } cases[] = {
      {std::string("nul\0", 4), 3, 0x00},
      {"a\x1B[31m", 1, 0x1B},
      {"del\x7F", 3, 0x7F},
      {"\xC2\x80x", 0, 0x80},
      {"next\xC2\x85line", 4, 0x85},
      {"\xC3\xA9\xC2\x9B", 2, 0x9B},
      {"\xC2\x9F", 0, 0x9F},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const auto found = first_control_character(c.text);
    ASSERT_TRUE(found);
    EXPECT_EQ(found->offset, c.at);
    EXPECT_EQ(found->code_point, c.code_point);
  }
}

}  // namespace
}  // namespace etwire
