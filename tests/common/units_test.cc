#include "common/units.h"

#include <gtest/gtest.h>

namespace etwire {
namespace {

TEST(ParseBytes, PlainNumbersAndBinaryUnits) {
  EXPECT_EQ(parse_bytes("0"), 0u);
  EXPECT_EQ(parse_bytes("4096"), 4096u);
  EXPECT_EQ(parse_bytes("1K"), 1024u);
  EXPECT_EQ(parse_bytes("1KiB"), 1024u);
  EXPECT_EQ(parse_bytes("64kib"), 65536u);
  EXPECT_EQ(parse_bytes("1MiB"), 1048576u);
  EXPECT_EQ(parse_bytes("500MiB"), 524288000u);
  EXPECT_EQ(parse_bytes("4G"), 4294967296u);
  EXPECT_EQ(parse_bytes("1 TiB"), 1099511627776u);
  EXPECT_EQ(parse_bytes(" 12B "), 12u);
}

TEST(ParseBytes, DecimalUnitsAndFractions) {
  EXPECT_EQ(parse_bytes("1KB"), 1000u);
  EXPECT_EQ(parse_bytes("2MB"), 2000000u);
  EXPECT_EQ(parse_bytes("1.5K"), 1536u);
  EXPECT_EQ(parse_bytes("0.5MiB"), 524288u);
}

TEST(ParseBytes, RejectsNonsense) {
  EXPECT_FALSE(parse_bytes(""));
  EXPECT_FALSE(parse_bytes("abc"));
  EXPECT_FALSE(parse_bytes("-1"));
  EXPECT_FALSE(parse_bytes("1X"));
  EXPECT_FALSE(parse_bytes("1.2.3"));
  EXPECT_FALSE(parse_bytes("1.3B"));  // not a whole number of bytes
  EXPECT_FALSE(parse_bytes("99999999999999999999"));
  EXPECT_FALSE(parse_bytes("20000000TiB"));
}

TEST(FormatBytes, PicksBinaryUnits) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1 KiB");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(1048576), "1 MiB");
  EXPECT_EQ(format_bytes(524288000), "500 MiB");
}

TEST(FormatSi, ThreeSignificantDigits) {
  EXPECT_EQ(format_si(950), "950");
  EXPECT_EQ(format_si(18234), "18.2k");
  EXPECT_EQ(format_si(5310000), "5.31M");
  EXPECT_EQ(format_si(999999), "1.00M");
  EXPECT_EQ(format_si(1.2e9), "1.20G");
}

TEST(FormatMicros, ScalesUnits) {
  EXPECT_EQ(format_micros(850), "850 us");
  EXPECT_EQ(format_micros(1500), "1.50 ms");
  EXPECT_EQ(format_micros(4.2e6), "4.20 s");
}

}  // namespace
}  // namespace etwire
