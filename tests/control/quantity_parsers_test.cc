// Rates, durations and exact sizes: the unit parsers every config key with a unit goes through.
#include <gtest/gtest.h>

#include "common/duration.h"
#include "common/exact_bytes.h"
#include "common/rate.h"
#include "common/scaled_decimal.h"
#include "common/units.h"

namespace etwire {
namespace {

TEST(ScaleDecimal, ExactWithoutFloatingPoint) {
  EXPECT_EQ(scale_decimal("12", 0), 12u);
  EXPECT_EQ(scale_decimal("2.5", 9), 2'500'000'000u);
  EXPECT_EQ(scale_decimal("67.108864", 6), 67'108'864u);
  EXPECT_EQ(scale_decimal(".5", 1), 5u);
  EXPECT_EQ(scale_decimal("1.50", 1), 15u);  // trailing zeros beyond the scale are fine
  EXPECT_FALSE(scale_decimal("1.25", 1));    // not whole
  EXPECT_FALSE(scale_decimal("1.2.3", 3));
  EXPECT_FALSE(scale_decimal(".", 3));
  EXPECT_FALSE(scale_decimal("", 3));
  EXPECT_FALSE(scale_decimal("18446744073709551616", 0));  // 2^64
  EXPECT_EQ(scale_decimal("18446744073709551615", 0), UINT64_MAX);
  EXPECT_FALSE(scale_decimal("1", -1));
}

TEST(ParseRate, BitsBytesAndPrefixes) {
  EXPECT_EQ(parse_rate_bps("100Gbps"), 100'000'000'000u);
  EXPECT_EQ(parse_rate_bps("400G"), 400'000'000'000u);
  EXPECT_EQ(parse_rate_bps("2.5 Gb/s"), 2'500'000'000u);
  EXPECT_EQ(parse_rate_bps("5Mbps"), 5'000'000u);
  EXPECT_EQ(parse_rate_bps("5mbps"), 5'000'000u);  // a milli-bit rate means nothing: mega
  EXPECT_EQ(parse_rate_bps("1.6Tbps"), 1'600'000'000'000u);
  EXPECT_EQ(parse_rate_bps("10kbit/s"), 10'000u);
  EXPECT_EQ(parse_rate_bps("12.5GB/s"), 100'000'000'000u);  // bytes
  EXPECT_EQ(parse_rate_bps("1GBps"), 8'000'000'000u);
  EXPECT_EQ(parse_rate_bps("800"), 800u);
  EXPECT_EQ(parse_rate_bps(" 25 Gbps "), 25'000'000'000u);
}

TEST(ParseRate, RejectsNonsense) {
  for (const char* bad :
       {"", "fast", "100Gbpx", "G", "-5Gbps", "1.5bps", "100 parsecs", "10Xbps", "100Gbps extra"}) {
    EXPECT_FALSE(parse_rate_bps(bad)) << bad;
  }
}

TEST(FormatRate, ReadsLikeADataSheet) {
  EXPECT_EQ(format_rate(100'000'000'000), "100 Gb/s");
  EXPECT_EQ(format_rate(2'500'000'000), "2.5 Gb/s");
  EXPECT_EQ(format_rate(1'600'000'000'000), "1.6 Tb/s");
  EXPECT_EQ(format_rate(5'000'000), "5 Mb/s");
  EXPECT_EQ(format_rate(2'999'999'999), "3 Gb/s");  // rounds up into the next whole number
  EXPECT_EQ(format_rate(800), "800 b/s");
  EXPECT_EQ(format_rate(0), "0 b/s");
}

TEST(ParseDuration, UnitsAndExactFractions) {
  EXPECT_EQ(parse_duration_ns("2us"), 2'000u);
  EXPECT_EQ(parse_duration_ns("2 \xC2\xB5s"), 2'000u);  // micro sign
  EXPECT_EQ(parse_duration_ns("1.5ms"), 1'500'000u);
  EXPECT_EQ(parse_duration_ns("500ns"), 500u);
  EXPECT_EQ(parse_duration_ns("3s"), 3'000'000'000u);
  EXPECT_EQ(parse_duration_ns("67.108864ms"), 67'108'864u);
  EXPECT_EQ(parse_duration_ns("0"), 0u);
  EXPECT_EQ(parse_duration_ns("0.5us"), 500u);
}

TEST(ParseDuration, RejectsAmbiguousAndInexact) {
  for (const char* bad : {"", "5", "2 minutes", "1.5ns", "us", "2uss", "-1us"}) {
    EXPECT_FALSE(parse_duration_ns(bad)) << bad;
  }
}

TEST(FormatDuration, LargestUnitUpToThreeDecimals) {
  EXPECT_EQ(format_duration_ns(0), "0 s");
  EXPECT_EQ(format_duration_ns(850), "850 ns");
  EXPECT_EQ(format_duration_ns(2'000), "2 us");
  EXPECT_EQ(format_duration_ns(1'500'000), "1.5 ms");
  EXPECT_EQ(format_duration_ns(67'108'864), "67.109 ms");
  EXPECT_EQ(format_duration_ns(4'000'000'000), "4 s");
}

TEST(FormatBytesExact, ReadsBackToTheSameValue) {
  for (uint64_t value : {0ull, 1ull, 1000ull, 1024ull, 150'000ull, 1'500'000ull, 1ull << 20,
                         32ull << 20, 12345ull, 3'000'000'000ull}) {
    std::string text = format_bytes_exact(value);
    EXPECT_EQ(parse_bytes(text), value) << text;
  }
  EXPECT_EQ(format_bytes_exact(150'000), "150 KB");
  EXPECT_EQ(format_bytes_exact(1ull << 20), "1 MiB");
  EXPECT_EQ(format_bytes_exact(12345), "12345 B");
}

}  // namespace
}  // namespace etwire
