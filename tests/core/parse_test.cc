#include "core/parse.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/clock.h"

namespace rtpulse {
namespace {

// Every rejection must be a usage error whose message quotes the bad input.
template <typename T>
void ExpectRejected(const Expected<T>& result, const std::string& input) {
  ASSERT_FALSE(result.has_value()) << "accepted '" << input << "'";
  EXPECT_EQ(result.error().code, ExitCode::kUsage) << input;
  EXPECT_NE(result.error().message.find("'" + input + "'"), std::string::npos)
      << "message does not name '" << input << "': " << result.error().message;
}

// ---- CPU lists -------------------------------------------------------------------------

std::vector<int> Cpus(std::string_view text) {
  auto r = ParseCpuList(text);
  EXPECT_TRUE(r.has_value()) << text << ": " << (r ? "" : r.error().message);
  return r ? *r : std::vector<int>{-1};
}

TEST(ParseCpuListTest, SingleCpu) {
  EXPECT_EQ(Cpus("0"), (std::vector<int>{0}));
}

TEST(ParseCpuListTest, RangesAndSingles) {
  EXPECT_EQ(Cpus("0-3,6"), (std::vector<int>{0, 1, 2, 3, 6}));
  EXPECT_EQ(Cpus("5-5"), (std::vector<int>{5}));
  EXPECT_EQ(Cpus("0,2-3,8-9"), (std::vector<int>{0, 2, 3, 8, 9}));
}

TEST(ParseCpuListTest, SurroundingWhitespaceIsTrimmedAndOutputSorted) {
  EXPECT_EQ(Cpus(" 2,0-1 "), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(Cpus("0-3\n"), (std::vector<int>{0, 1, 2, 3}));  // as read from sysfs
  EXPECT_EQ(Cpus("\t7,1\t"), (std::vector<int>{1, 7}));
}

TEST(ParseCpuListTest, DuplicatesAndOverlapsCollapse) {
  EXPECT_EQ(Cpus("1,1,1"), (std::vector<int>{1}));
  EXPECT_EQ(Cpus("0-3,2-5,4"), (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(ParseCpuListTest, LargestCpuNumberIsAccepted) {
  EXPECT_EQ(Cpus("8191"), (std::vector<int>{8191}));
  EXPECT_EQ(Cpus("0-8191").size(), 8192u);
}

TEST(ParseCpuListTest, EmptyIsRejected) {
  for (const char* text : {"", "   ", "\n"}) {
    auto r = ParseCpuList(text);
    ASSERT_FALSE(r.has_value()) << "'" << text << "'";
    EXPECT_EQ(r.error().code, ExitCode::kUsage);
    EXPECT_NE(r.error().message.find("empty"), std::string::npos) << r.error().message;
  }
}

TEST(ParseCpuListTest, MalformedListsAreRejectedNamingTheInput) {
  for (const char* text : {"a", "3-1", "-1", "0-", "1,,2", "99999", "8192", "1,", ",1", "0x1",
                           "1-2-3", "+1", "1.5", "0-a", "99999999999999999999"}) {
    SCOPED_TRACE(text);
    ExpectRejected(ParseCpuList(text), text);
  }
}

TEST(ParseCpuListTest, ErrorPointsAtTheBadItem) {
  auto r = ParseCpuList("0-3,x,6");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("'x'"), std::string::npos) << r.error().message;
}

TEST(FormatCpuListTest, CompactsRuns) {
  EXPECT_EQ(FormatCpuList({}), "");
  EXPECT_EQ(FormatCpuList({5}), "5");
  EXPECT_EQ(FormatCpuList({1, 2}), "1-2");
  EXPECT_EQ(FormatCpuList({0, 1, 2, 3, 6}), "0-3,6");
  EXPECT_EQ(FormatCpuList({1, 3, 5}), "1,3,5");
  EXPECT_EQ(FormatCpuList({0, 2, 3, 4, 9, 10}), "0,2-4,9-10");
}

TEST(FormatCpuListTest, RoundTripsCanonicalText) {
  for (const char* text : {"0", "0-3,6", "0-1,3-5,7", "1,3,5", "0-8191", "4094-4095,8191"}) {
    EXPECT_EQ(FormatCpuList(Cpus(text)), text);
  }
  EXPECT_EQ(FormatCpuList(Cpus(" 6,3,0-2,2 ")), "0-3,6");
}

TEST(FormatCpuListTest, RoundTripsRandomSets) {
  std::mt19937 rng(7);
  std::bernoulli_distribution take(0.4);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<int> cpus;
    for (int c = 0; c < 64; ++c) {
      if (take(rng)) cpus.push_back(c);
    }
    if (cpus.empty()) continue;
    const std::string text = FormatCpuList(cpus);
    EXPECT_EQ(Cpus(text), cpus) << text;
  }
}

// ---- Durations (-D) --------------------------------------------------------------------

int64_t Duration(std::string_view text) {
  auto r = ParseDurationNs(text);
  EXPECT_TRUE(r.has_value()) << text << ": " << (r ? "" : r.error().message);
  return r ? *r : -1;
}

TEST(ParseDurationTest, BareNumberIsSeconds) {
  EXPECT_EQ(Duration("10"), 10 * kNsPerSec);
  EXPECT_EQ(Duration("0"), 0);  // "no limit"
  EXPECT_EQ(Duration(" 30 "), 30 * kNsPerSec);
}

TEST(ParseDurationTest, Suffixes) {
  EXPECT_EQ(Duration("10s"), 10 * kNsPerSec);
  EXPECT_EQ(Duration("5m"), 300 * kNsPerSec);
  EXPECT_EQ(Duration("2h"), 7200 * kNsPerSec);
  EXPECT_EQ(Duration("1d"), 86'400 * kNsPerSec);
  EXPECT_EQ(Duration("1.5m"), 90 * kNsPerSec);
  EXPECT_EQ(Duration("0.5h"), 1800 * kNsPerSec);
  EXPECT_EQ(Duration("500ms"), 500 * kNsPerMs);
  EXPECT_EQ(Duration("2.5s"), 2'500 * kNsPerMs);
}

TEST(ParseDurationTest, UppercaseSuffixesAsCyclictestAcceptsThem) {
  // rt-tests' parse_time_string() takes m/M, h/H, d/D: scripts written for cyclictest -D
  // must keep working.
  EXPECT_EQ(Duration("5M"), 300 * kNsPerSec);
  EXPECT_EQ(Duration("2H"), 7200 * kNsPerSec);
  EXPECT_EQ(Duration("1D"), 86'400 * kNsPerSec);
  EXPECT_EQ(Duration("10S"), 10 * kNsPerSec);
}

TEST(ParseDurationTest, MalformedDurationsAreRejectedNamingTheInput) {
  // "1e3": exponents are not a duration syntax anyone types for -D; rejecting it beats
  // silently reading "1" with an unknown unit.
  for (const char* text :
       {"", "abc", "10x", "-5", "1e3", "m", ".", "1.2.3", "10 m", "5mm", "1sec", "10us"}) {
    SCOPED_TRACE(text);
    ExpectRejected(ParseDurationNs(text), text);
  }
}

TEST(ParseDurationTest, UnknownUnitIsNamed) {
  auto r = ParseDurationNs("10x");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("'x'"), std::string::npos) << r.error().message;
}

TEST(ParseDurationTest, AbsurdlyLongIsRejected) {
  ExpectRejected(ParseDurationNs("99999999d"), "99999999d");
  EXPECT_EQ(Duration("10000d"), 10'000 * 86'400 * kNsPerSec);
}

// ---- Times with units ------------------------------------------------------------------

int64_t Time(std::string_view text, int64_t default_unit_ns = 0) {
  auto r = ParseTimeNs(text, default_unit_ns);
  EXPECT_TRUE(r.has_value()) << text << ": " << (r ? "" : r.error().message);
  return r ? *r : -1;
}

TEST(ParseTimeTest, Units) {
  EXPECT_EQ(Time("2ms"), 2'000'000);
  EXPECT_EQ(Time("500us"), 500'000);
  EXPECT_EQ(Time("100ns"), 100);
  EXPECT_EQ(Time("1.5s"), 1'500'000'000);
  EXPECT_EQ(Time("0.25ms"), 250'000);
  EXPECT_EQ(Time("0ns"), 0);
  EXPECT_EQ(Time(" 3us "), 3000);
}

TEST(FormatTimeTest, LargestExactUnitAndParsesBack) {
  EXPECT_EQ(FormatTimeNs(0), "0s");
  EXPECT_EQ(FormatTimeNs(60'000'000'000), "60s");
  EXPECT_EQ(FormatTimeNs(1'500'000'000), "1500ms");
  EXPECT_EQ(FormatTimeNs(400'000), "400us");
  EXPECT_EQ(FormatTimeNs(1'001), "1001ns");
  for (const int64_t ns : {int64_t{0}, int64_t{7}, int64_t{20'000}, int64_t{4'000'000},
                           int64_t{3'000'000'000}, int64_t{123'456'789}}) {
    EXPECT_EQ(ParseTimeNs(FormatTimeNs(ns)).value(), ns) << ns;
  }
}

TEST(ParseTimeTest, BareNumberNeedsADefaultUnit) {
  ExpectRejected(ParseTimeNs("100"), "100");
  EXPECT_EQ(Time("100", kNsPerUs), 100'000);
  EXPECT_EQ(Time("1.5", kNsPerMs), 1'500'000);
  EXPECT_EQ(Time("7", 1), 7);
  // An explicit unit wins over the default.
  EXPECT_EQ(Time("100ns", kNsPerUs), 100);
}

TEST(ParseTimeTest, MalformedTimesAreRejectedNamingTheInput) {
  for (const char* text : {"", "ms", "abc", "-2ms", "2 ms", "2sec", "2m", "1e3ns", "2MS", "5h"}) {
    SCOPED_TRACE(text);
    ExpectRejected(ParseTimeNs(text), text);
  }
  ExpectRejected(ParseTimeNs("abc", kNsPerUs), "abc");
  ExpectRejected(ParseTimeNs("99999999999s"), "99999999999s");  // beyond 1e18 ns
}

// ---- Rates -----------------------------------------------------------------------------

double Rate(std::string_view text) {
  auto r = ParseRateHz(text);
  EXPECT_TRUE(r.has_value()) << text << ": " << (r ? "" : r.error().message);
  return r ? *r : -1;
}

TEST(ParseRateTest, HzAndKHz) {
  EXPECT_EQ(Rate("10Hz"), 10.0);
  EXPECT_EQ(Rate("10"), 10.0);
  EXPECT_EQ(Rate("10hz"), 10.0);
  EXPECT_EQ(Rate("2.5kHz"), 2500.0);
  EXPECT_EQ(Rate("1khz"), 1000.0);
  EXPECT_EQ(Rate("0.5"), 0.5);
}

TEST(ParseRateTest, ZeroNegativeAndUnknownUnitsAreRejected) {
  for (const char* text : {"0", "0Hz", "0.0kHz", "-1", "10MHz", "", "Hz", "abc", "10 Hz", "1e3"}) {
    SCOPED_TRACE(text);
    ExpectRejected(ParseRateHz(text), text);
  }
  auto zero = ParseRateHz("0");
  ASSERT_FALSE(zero.has_value());
  EXPECT_NE(zero.error().message.find("above zero"), std::string::npos) << zero.error().message;
  auto mhz = ParseRateHz("10MHz");
  ASSERT_FALSE(mhz.has_value());
  EXPECT_NE(mhz.error().message.find("'MHz'"), std::string::npos) << mhz.error().message;
}

// ---- Whole numbers ---------------------------------------------------------------------

TEST(ParseIntTest, WholeNumbers) {
  auto r = ParseInt("42", "thread count");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, 42);
  EXPECT_EQ(*ParseInt("0", "x"), 0);
  EXPECT_EQ(*ParseInt(" 7 ", "x"), 7);
  EXPECT_EQ(*ParseInt("9223372036854775807", "x"), INT64_MAX);
}

TEST(ParseIntTest, RejectsGarbageOverflowAndNegatives) {
  for (const char* text :
       {"", "abc", "12abc", "1.5", "0x10", "+5", "-5", "-1", "9223372036854775808", "1 2"}) {
    SCOPED_TRACE(text);
    auto r = ParseInt(text, "thread count (-t)");
    ExpectRejected(r, text);
    if (!r) {
      EXPECT_NE(r.error().message.find("thread count (-t)"), std::string::npos)
          << r.error().message;
    }
  }
}

TEST(ParseSignedIntTest, AcceptsNegativesAndRejectsGarbage) {
  EXPECT_EQ(*ParseSignedInt("-1", "x"), -1);
  EXPECT_EQ(*ParseSignedInt(" 950000\n", "x"), 950000);
  auto bad = ParseSignedInt("-1x", "runtime");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("'-1x'"), std::string::npos);
}

TEST(ParseErrorsTest, BinaryBytesOfTheInputAreEscapedInTheMessage) {
  const std::string raw = std::string("1\x1b[2J\0", 6) + "x";
  for (const auto& message :
       {ParseDurationNs(raw).error().message, ParseTimeNs(raw).error().message,
        ParseRateHz(raw).error().message, ParseCpuList(raw).error().message,
        ParseInt(raw, "count").error().message}) {
    EXPECT_NE(message.find("1\\x1b[2J\\x00x"), std::string::npos) << message;
    EXPECT_EQ(message.find('\x1b'), std::string::npos) << message;
    EXPECT_EQ(message.find('\0'), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace rtpulse

namespace rtpulse {
namespace {

TEST(SplitFieldsTest, KeepsEmptyFieldsAtEitherEndAndBetween) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(SplitFields("a,,b,"), (V{"a", "", "b", ""}));
  EXPECT_EQ(SplitFields(",x"), (V{"", "x"}));
  EXPECT_EQ(SplitFields(""), (V{""}));
  EXPECT_EQ(SplitFields("1 2", ' '), (V{"1", "2"}));
  const std::string line = "job,release_ns";
  const V fields = SplitFields(line);
  ASSERT_EQ(fields.size(), 2u);
  EXPECT_EQ(fields[1].data(), line.data() + 4);  // views into the line, not copies
}

}  // namespace
}  // namespace rtpulse

namespace rtpulse {
namespace {

TEST(ParseByteSizeTest, BinaryUnitsWithOrWithoutIbAndB) {
  EXPECT_EQ(ParseByteSize("--x", "4096").value(), 4096u);
  EXPECT_EQ(ParseByteSize("--x", "512K").value(), 512u << 10);
  EXPECT_EQ(ParseByteSize("--x", "64M").value(), 64u << 20);
  EXPECT_EQ(ParseByteSize("--x", "32MiB").value(), 32u << 20);
  EXPECT_EQ(ParseByteSize("--x", "1g").value(), uint64_t{1} << 30);
  EXPECT_EQ(ParseByteSize("--x", "2TB").value(), uint64_t{2} << 40);
  EXPECT_EQ(ParseByteSize("--x", " 7B ").value(), 7u);
}

TEST(ParseByteSizeTest, BadTextUnknownUnitAndOverflowNameTheOption) {
  auto text = ParseByteSize("--work-set", "lots");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().code, ExitCode::kUsage);
  EXPECT_EQ(text.error().message,
            "--work-set 'lots' is not a size; give bytes with an optional unit, e.g. 64M, 512K");
  auto unit = ParseByteSize("--work-set", "64Q");
  ASSERT_FALSE(unit);
  EXPECT_EQ(unit.error().message,
            "--work-set '64Q': unknown unit 'Q'; use K, M, G or T (e.g. 64M)");
  auto big = ParseByteSize("--work-set", "16777216T");  // 2^24 * 2^40 = 2^64
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().message.find("past 2^64 bytes"), std::string::npos);
  EXPECT_EQ(ParseByteSize("--x", "16777215T").value(), uint64_t{16777215} << 40);
}

}  // namespace
}  // namespace rtpulse
