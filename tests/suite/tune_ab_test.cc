// suite --tune-ab's design and statistics (src/suite/tune_ab.h): the block order, the
// sign-test interval against binomial values worked out by hand, and the pairs a clipped or
// unfinished block takes out.
#include "suite/tune_ab.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rtpulse::suite {
namespace {

using nlohmann::json;
using sys::TuneKnob;

TEST(TuneAbPlanTest, SignTestIntervalNeedsSixPairs) {
  EXPECT_FALSE(SignTestInterval({}).measurable);
  EXPECT_FALSE(SignTestInterval({1, 2, 3, 4, 5}).measurable);
  // n = 6: k = 1, coverage 1 - 2/64; the extremes.
  const MedianInterval six = SignTestInterval({5, -3, 2, 8, -1, 4});
  ASSERT_TRUE(six.measurable);
  EXPECT_DOUBLE_EQ(six.median, 3.0);  // sorted -3 -1 2 4 5 8
  EXPECT_DOUBLE_EQ(six.low, -3.0);
  EXPECT_DOUBLE_EQ(six.high, 8.0);
  EXPECT_DOUBLE_EQ(six.coverage, 1.0 - 2.0 / 64.0);
}

TEST(TuneAbPlanTest, SignTestIntervalWidensItsRankWithMorePairs) {
  // n = 10: P(Bin <= 1) = 11/1024, so k = 2 (coverage 1 - 22/1024); P(Bin <= 2) = 56/1024 is
  // too much.
  std::vector<double> ten = {10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
  const MedianInterval c10 = SignTestInterval(ten);
  ASSERT_TRUE(c10.measurable);
  EXPECT_DOUBLE_EQ(c10.low, 2.0);
  EXPECT_DOUBLE_EQ(c10.high, 9.0);
  EXPECT_DOUBLE_EQ(c10.median, 5.5);
  EXPECT_DOUBLE_EQ(c10.coverage, 1.0 - 22.0 / 1024.0);
  // n = 20: P(Bin <= 5) = 21700/1048576 (k = 6); P(Bin <= 6) = 60460/1048576 > 0.025.
  std::vector<double> twenty;
  for (int i = 20; i >= 1; --i) twenty.push_back(i * 100.0);
  const MedianInterval c20 = SignTestInterval(twenty);
  ASSERT_TRUE(c20.measurable);
  EXPECT_DOUBLE_EQ(c20.low, 600.0);
  EXPECT_DOUBLE_EQ(c20.high, 1500.0);
  EXPECT_DOUBLE_EQ(c20.coverage, 1.0 - 2.0 * 21700.0 / 1048576.0);
}

SuiteConfig TwoScenarios() {
  SuiteConfig c;
  for (const char* name : {"idle", "heavy"}) {
    Scenario s;
    s.name = name;
    s.description = name;
    c.scenarios.push_back(s);
  }
  return c;
}

TEST(TuneAbPlanTest, BlocksRunAbbaKnobByKnobAndSkipKnobsThatDoNotApply) {
  SuiteConfig c = TwoScenarios();
  const json applied = json::array(
      {{{"what", "RT throttling"}, {"status", "applied"}, {"before", "950000"}, {"after", "-1"}}});
  const json skipped = json::array(
      {{{"what", "cpufreq"}, {"status", "skipped"}, {"detail", "no cpufreq: nothing to tune"}}});
  std::vector<AbKnob> knobs = {KnobFromRecords(TuneKnob::kGovernor, skipped),
                               KnobFromRecords(TuneKnob::kRtThrottling, applied)};
  EXPECT_FALSE(knobs[0].applies);
  EXPECT_EQ(knobs[0].detail, "does not apply here: cpufreq skipped: no cpufreq: nothing to tune");
  EXPECT_TRUE(knobs[1].applies);
  EXPECT_EQ(knobs[1].detail, "RT throttling: 950000 -> -1");
  const TuneAbPlan plan = ExpandTuneAb(c, knobs, 3);
  std::vector<std::string> names;
  for (const auto& s : c.scenarios) names.push_back(s.name);
  const std::vector<std::string> expected = {
      "idle-rt-throttling-01-off",  "heavy-rt-throttling-01-off", "idle-rt-throttling-01-on",
      "heavy-rt-throttling-01-on",  "idle-rt-throttling-02-on",   "heavy-rt-throttling-02-on",
      "idle-rt-throttling-02-off",  "heavy-rt-throttling-02-off", "idle-rt-throttling-03-off",
      "heavy-rt-throttling-03-off", "idle-rt-throttling-03-on",   "heavy-rt-throttling-03-on"};
  EXPECT_EQ(names, expected);
  ASSERT_EQ(plan.blocks.size(), expected.size());
  EXPECT_TRUE(plan.blocks[2].on);
  EXPECT_EQ(plan.blocks[2].pair, 1);
  EXPECT_EQ(plan.blocks[5].scenario, "heavy");
}

TEST(TuneAbPlanTest, AClippedOrUnfinishedBlockTakesItsPairOut) {
  SuiteConfig c = TwoScenarios();
  c.scenarios.pop_back();
  const json applied = json::array({{{"what", "RT throttling"},
                                     {"status", "applied"},
                                     {"before", "950000"},
                                     {"after", "-1"},
                                     {"restored", true}}});
  const TuneAbPlan plan = ExpandTuneAb(c, {KnobFromRecords(TuneKnob::kRtThrottling, applied)}, 7);
  std::vector<AbValue> values(plan.blocks.size());
  std::vector<json> tuning(plan.blocks.size());
  for (size_t i = 0; i < plan.blocks.size(); ++i) {
    values[i].measured = true;
    values[i].status = "complete";
    values[i].p999_ns = plan.blocks[i].on ? 1000 * plan.blocks[i].pair : 5000;
    values[i].max_ns = values[i].p999_ns + 1;
    if (plan.blocks[i].on) tuning[i] = applied;
  }
  values[13].max_exact = false;  // pair 7 on: clipped max, p99.9 still exact
  const json j = TuneAbJson(plan, values, tuning);
  const json& effects = j["knobs"][0]["effects"];
  ASSERT_EQ(effects.size(), 2u);
  const json& p999 = effects[0];
  EXPECT_EQ(p999["pairs_used"], 7);
  // on - off = 1000 p - 5000 for p = 1..7: -4000 ... 2000; median -1000; k = 1.
  EXPECT_EQ(p999["median_difference_ns"], -1000.0);
  EXPECT_EQ(p999["ci_low_ns"], -4000.0);
  EXPECT_EQ(p999["ci_high_ns"], 2000.0);
  EXPECT_EQ(p999["on_lower_pairs"], 4);
  const json& max = effects[1];
  EXPECT_EQ(max["pairs_used"], 6);
  ASSERT_EQ(max["pairs_excluded"].size(), 1u);
  EXPECT_NE(max["pairs_excluded"][0].get<std::string>().find("pair 7"), std::string::npos);
  EXPECT_TRUE(max["measurable"].get<bool>());

  values[1].measured = false;  // pair 1 on: interrupted
  values[1].status = "interrupted";
  const json k = TuneAbJson(plan, values, tuning)["knobs"][0]["effects"][1];
  EXPECT_FALSE(k["measurable"].get<bool>());
  EXPECT_EQ(k["note"], "not measurable: fewer than 6 complete pairs (5)");
  EXPECT_TRUE(k["median_difference_ns"].is_null());
  const std::string text = FormatTuneAb(TuneAbJson(plan, values, tuning));
  EXPECT_NE(text.find("idle max    not measurable: fewer than 6 complete pairs (5)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("excluded pair 1: idle-rt-throttling-01-on interrupted"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace rtpulse::suite
