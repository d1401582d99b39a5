// Parsers of vcgencmd output, the vcgencmd source on a fake runner, and the statistics, on
// exact values. (get_throttled is parsed by core/throttled.h; the runner is core's.)

#include "monitor/vcgencmd.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/clock.h"
#include "monitor/sources.h"
#include "monitor/stats.h"
#include "support/fake_commands.h"

namespace rtpulse::monitor {
namespace {

TEST(ParseVolts, Values) {
  EXPECT_EQ(ParseVolts("volt=0.7200V\n"), 0.72);
  EXPECT_FALSE(ParseVolts("volt=V"));
  EXPECT_FALSE(ParseVolts("temp=51.6'C"));
}

TEST(ParsePmicReadAdc, PairsRailsByNameNotChannel) {
  // The reference example: channels 1/9 and 7/15 pair by name; EXT5V has no current.
  const auto r = ParsePmicReadAdc(
      "     3V3_SYS_A current(1)=0.09120000A\n    VDD_CORE_A current(7)=1.48300000A\n"
      "     3V3_SYS_V volt(9)=3.31200000V\n    VDD_CORE_V volt(15)=0.79800000V\n"
      "       EXT5V_V volt(24)=5.11000000V\n        BATT_V volt(25)=0.00000000V\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rails, 2);
  EXPECT_DOUBLE_EQ(r->power_w, 0.0912 * 3.312 + 1.483 * 0.798);
  EXPECT_EQ(r->ext5v_v, 5.11);
}

TEST(ParsePmicReadAdc, NanAndUnpairedRailsAreSkipped) {
  const auto r = ParsePmicReadAdc(
      "  HDMI_A current(2)=0.01000000A\n  BATT_V volt(25)=nanV\n  DDR_VDDQ_A current(3)=0.5A\n"
      "  DDR_VDDQ_V volt(11)=0.6V\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rails, 1);
  EXPECT_DOUBLE_EQ(r->power_w, 0.3);
  EXPECT_FALSE(r->ext5v_v);
}

TEST(ParsePmicReadAdc, BoardWithoutPmic) {
  EXPECT_FALSE(ParsePmicReadAdc("error=1 error_msg=\"Command not registered\"\n"));
  EXPECT_FALSE(ParsePmicReadAdc(""));
}

TEST(DescribeThrottled, Bits) {
  EXPECT_EQ(DescribeThrottled(0), "none");
  EXPECT_EQ(DescribeThrottled(0x5), "under-voltage, throttled");
  EXPECT_EQ(DescribeThrottled(0x50005 >> kThrottledSinceBootShift), "under-voltage, throttled");
}

// The source reads through any CommandRunner: here the table-driven fake, so what each
// answer becomes is checked without a script or a process.
TEST(VcgencmdSource, ColumnsAndValuesFromTheRunnersAnswers) {
  testutil::FakeCommands commands;
  commands.Install("vcgencmd")
      .Answer("vcgencmd get_throttled", {0, false, "throttled=0x50005\n", "", 0})
      .Answer("vcgencmd measure_volts core", {0, false, "volt=0.7200V\n", "", 0});
  // pmic_read_adc has no answer: the fake's Run fails, as a board without the PMIC would.
  auto source = MakeVcgencmdSource(commands);
  std::vector<std::string> notes;
  const auto columns = source->Start(notes);
  ASSERT_EQ(columns.size(), 6u);
  EXPECT_EQ(columns[0].name, "throttled_raw");
  EXPECT_EQ(columns[1].name, "under_voltage_now");
  EXPECT_EQ(columns[5].name, "core_v");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rfind("vcgencmd pmic_read_adc: cannot run vcgencmd pmic_read_adc", 0), 0u)
      << notes[0];

  std::vector<double> values(columns.size());
  source->Sample(0, values);
  EXPECT_EQ(values[0], 0x50005);
  EXPECT_EQ(values[1], 1) << "under-voltage now";
  EXPECT_EQ(values[2], 0);
  EXPECT_EQ(values[3], 1) << "throttled now";
  EXPECT_EQ(values[4], 0);
  EXPECT_DOUBLE_EQ(values[5], 0.72);

  // A call that timed out leaves that sample's throttling cells empty (NaN).
  commands.Answer("vcgencmd get_throttled", {-1, true, "", "", 0});
  source->Sample(1, values);
  for (size_t i = 0; i < 5; ++i) EXPECT_TRUE(std::isnan(values[i])) << i;
  EXPECT_DOUBLE_EQ(values[5], 0.72);
}

TEST(VcgencmdSource, AbsentVcgencmdDropsItsColumnsWithANote) {
  const testutil::FakeCommands nothing;
  auto source = MakeVcgencmdSource(nothing);
  std::vector<std::string> notes;
  EXPECT_TRUE(source->Start(notes).empty());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rfind("vcgencmd: not found on PATH", 0), 0u) << notes[0];
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(FormatValue, Cells) {
  EXPECT_EQ(FormatValue(kNaN), "");
  EXPECT_EQ(FormatValue(51.75), "51.75");
  EXPECT_EQ(FormatValue(1.0 / 3.0), "0.3333");
  EXPECT_EQ(FormatValue(-0.00001), "0");
  EXPECT_EQ(FormatValue(2400), "2400");
  EXPECT_EQ(FormatValue(1e12), "1000000000000");
  EXPECT_EQ(FormatValue(0x50005, ColumnKind::kHex), "0x50005");
}

TEST(StatsAccumulator, EmptyAndOneSample) {
  StatsAccumulator empty({{"t_c", "C", ColumnKind::kTemperature}}, {80});
  EXPECT_EQ(empty.rows(), 0u);
  EXPECT_EQ(empty.logged_ns(), 0);
  const std::string text = FormatStats(empty, {kNsPerSec, {}, false});
  EXPECT_NE(text.find("samples    0 every 1.000 s, 0.000 s logged\n"), std::string::npos) << text;
  EXPECT_NE(text.find("t_c                               C        0            -"),
            std::string::npos)
      << text;

  StatsAccumulator one({{"t_c", "C", ColumnKind::kTemperature}}, {80});
  const double v[] = {90};
  one.Add(5, v);
  EXPECT_EQ(one.columns()[0].samples, 1u);
  EXPECT_EQ(one.columns()[0].above_ns[0], 0) << "a last sample holds for no time";
}

TEST(StatsAccumulator, EdgesHoldTimesAndGaps) {
  StatsAccumulator s(
      {{"flag", "0/1", ColumnKind::kThrottleFlag}, {"t_c", "C", ColumnKind::kTemperature}},
      {80, 85});
  const double rows[][2] = {{1, 85}, {0, 80}, {1, kNaN}, {kNaN, 79}, {1, 90}, {0, 70}};
  const int64_t times[] = {0, 100, 300, 400, 500, 1500};
  for (size_t i = 0; i < 6; ++i) s.Add(times[i], rows[i]);
  // The first sample's 1 is not an edge (its past is unknown); 0 -> 1 at 300; the 1 at 500
  // follows a gap (NaN), so it is not counted either.
  EXPECT_EQ(s.columns()[0].rising_edges, 1u);
  EXPECT_EQ(s.columns()[0].samples, 5u);
  EXPECT_DOUBLE_EQ(s.columns()[0].avg(), 0.6);
  // 85 holds 0..100 (>=80, >=85), 80 holds 100..300 (>=80), the gap holds nothing,
  // 79 nothing, 90 holds 500..1500 (both).
  EXPECT_EQ(s.columns()[1].above_ns[0], 100 + 200 + 1000);
  EXPECT_EQ(s.columns()[1].above_ns[1], 100 + 1000);
  EXPECT_EQ(s.columns()[1].min, 70);
  EXPECT_EQ(s.columns()[1].max, 90);
  EXPECT_EQ(s.logged_ns(), 1500);
}

}  // namespace
}  // namespace rtpulse::monitor
