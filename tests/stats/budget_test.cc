#include "stats/budget.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/float_compare.h"

namespace rtpulse::stats {
namespace {

TEST(BudgetParseTest, AcceptsEveryDocumentedForm) {
  struct Case {
    const char* text;
    int64_t latency_ns;
    std::optional<double> percentile;
    const char* canonical;
  };
  const Case cases[] = {
      {"100us@p99.99", 100'000, 99.99, "100us@p99.99"},
      {"2ms@p99", 2'000'000, 99.0, "2ms@p99"},
      {"500ns@p50", 500, 50.0, "500ns@p50"},
      {"1.5ms@p99.9", 1'500'000, 99.9, "1500us@p99.9"},
      {"50us", 50'000, std::nullopt, "50us@max"},
      {"50us@max", 50'000, std::nullopt, "50us@max"},
      {" 120ns@p99.999 ", 120, 99.999, "120ns@p99.999"},
      {"1s@p0.5", 1'000'000'000, 0.5, "1s@p0.5"},
      {"2000ms", 2'000'000'000, std::nullopt, "2s@max"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    auto b = ParseBudget(c.text);
    ASSERT_TRUE(b.has_value()) << b.error().message;
    EXPECT_EQ(b->latency_ns, c.latency_ns);
    ASSERT_EQ(b->percentile.has_value(), c.percentile.has_value());
    if (c.percentile) {
      EXPECT_TRUE(ExactlyEqual(*b->percentile, *c.percentile));
    }
    EXPECT_EQ(FormatBudget(*b), c.canonical);
    // The canonical spelling reads back to the same budget (result.json keeps it).
    auto again = ParseBudget(FormatBudget(*b));
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->latency_ns, b->latency_ns);
    EXPECT_EQ(StatisticLabel(again->percentile), StatisticLabel(b->percentile));
  }
}

TEST(BudgetParseTest, BadBudgetsNameTheValueAndTheAcceptedForms) {
  struct Case {
    const char* text;
    const char* must_mention;
  };
  const Case cases[] = {
      {"100", "the latency '100' has no unit"},
      {"100us@p101", "'p101' is not below p100"},
      {"100us@p100", "'@max'"},
      {"@p0", "'p0' is not above p0"},
      {"@p99", "the latency is missing"},
      {"100us@99", "'99' is not a percentile"},
      {"100us@p", "'p' is not a percentile"},
      {"100us@p9.9.9", "'p9.9.9' is not a percentile"},
      {"100us@p-1", "'p-1' is not a percentile"},
      {"100us@pmax", "'pmax' is not a percentile"},
      {"0us@p99", "the latency '0us' is not above 0"},
      {"-5us", "'-5us' is not a latency"},
      {"100xs@p99", "'100xs' is not a latency"},
      {"", "it is empty"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    auto b = ParseBudget(c.text);
    ASSERT_FALSE(b.has_value());
    EXPECT_EQ(b.error().code, ExitCode::kUsage);
    const std::string& m = b.error().message;
    EXPECT_NE(m.find("invalid budget '" + std::string(c.text) + "'"), std::string::npos) << m;
    EXPECT_NE(m.find(c.must_mention), std::string::npos) << m;
    EXPECT_NE(m.find("e.g. '100us@p99.99'"), std::string::npos) << m;
  }
}

TEST(BudgetRankRangeTest, HoldsTheTrueNearestRankValueAndEndsAtThePrintedPercentile) {
  // 1..20000 ns once each: the nearest-rank value of p is ceil(p/100 * 20000) itself.
  Histogram h;
  for (int64_t v = 1; v <= 20000; ++v) h.Record(v);
  for (double p : {50.0, 90.0, 99.0, 99.9, 99.99, 0.01, 2.5}) {
    SCOPED_TRACE(p);
    const auto truth = static_cast<int64_t>(Histogram::NearestRank(p, 20000));
    const ValueRange r = RankRange(h, p);
    ASSERT_TRUE(r.lo_ns && r.hi_ns);
    EXPECT_LE(*r.lo_ns, truth);
    EXPECT_GE(*r.hi_ns, truth);
    EXPECT_EQ(*r.hi_ns, h.Percentile(p));  // the value every other output prints
    // One bucket: at most 1/512 of its lower edge wide, one value wide below 512 ns.
    EXPECT_LE(*r.hi_ns - *r.lo_ns, *r.lo_ns / 512 + 1);
    if (truth < 512) {
      EXPECT_TRUE(r.exact());
    }
  }
  const ValueRange max = RankRange(h, std::nullopt);
  EXPECT_TRUE(max.exact());
  EXPECT_EQ(*max.hi_ns, 20000);
  EXPECT_FALSE(RankRange(Histogram(), 99.0).hi_ns.has_value());
}

TEST(BudgetRankRangeTest, ClampsToTheExactExtremesAndSeesNegativeLatencies) {
  Histogram h;
  h.RecordN(-700, 3);
  h.RecordN(1'000'003, 997);
  // The rank lies in the bucket of the maximum: the exact max is its upper end, the bucket's
  // lower edge its lower end (other samples of that bucket could lie below the max).
  const ValueRange top = RankRange(h, 99.0);
  EXPECT_EQ(*top.hi_ns, 1'000'003);
  EXPECT_EQ(*top.lo_ns, Histogram::MagnitudeRange(Histogram::IndexOf(1'000'003)).lo);
  EXPECT_FALSE(top.exact());
  // One value only: min = max pins the bucket to it.
  Histogram same;
  same.RecordN(1'000'003, 1000);
  EXPECT_TRUE(RankRange(same, 99.0).exact());
  EXPECT_EQ(*RankRange(same, 99.0).lo_ns, 1'000'003);
  const ValueRange low = RankRange(h, 0.2);  // rank 2 of 1000: a negative sample
  ASSERT_TRUE(low.lo_ns && low.hi_ns);
  EXPECT_EQ(*low.lo_ns, -700);
  EXPECT_LE(*low.lo_ns, *low.hi_ns);
}

TEST(BudgetJudgeTest, TheRuleOnEveryKindOfRange) {
  struct Case {
    ValueRange value;
    int64_t budget_ns;
    Outcome outcome;
    std::optional<int64_t> margin_ns;
  };
  const Case cases[] = {
      {{100, 100}, 100, Outcome::kPass, 0},                 // exact, at the budget: meets it
      {{101, 101}, 100, Outcome::kFail, -1},                // exact, 1 ns over
      {{90, 99}, 100, Outcome::kPass, 1},                   // upper edge below: pass, margin >= 1
      {{99, 101}, 100, Outcome::kUndecided, {}},            // straddles the budget
      {{100, 101}, 100, Outcome::kUndecided, {}},           // lower edge at the budget
      {{101, 120}, 100, Outcome::kFail, -1},                // lower edge above: over by >= 1
      {{50, std::nullopt}, 100, Outcome::kUndecided, {}},   // a lower bound below
      {{150, std::nullopt}, 100, Outcome::kFail, -50},      // a lower bound above
      {{std::nullopt, 50}, 100, Outcome::kPass, 50},        // an upper bound below
      {{std::nullopt, 150}, 100, Outcome::kUndecided, {}},  // an upper bound above
      {{std::nullopt, std::nullopt}, 100, Outcome::kUndecided, {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::to_string(c.value.lo_ns.value_or(-1)) + ".." +
                 std::to_string(c.value.hi_ns.value_or(-1)));
    EXPECT_EQ(Judge(c.budget_ns, c.value), c.outcome);
    EXPECT_EQ(GuaranteedMargin(c.budget_ns, c.value), c.margin_ns);
  }
}

TEST(BudgetJudgeTest, ABucketStraddlingTheBudgetIsUndecidedNotFail) {
  // 990 samples at 999500 ns, between 10 at 1 ns and 1 at 2 ms: p50 is 999500 ns, inside a
  // bucket about 1 us wide. A budget inside that bucket above the true value cannot be
  // decided from the histogram (the true p50 meets it; the bucket says only "somewhere in").
  Histogram h;
  h.RecordN(1, 10);
  h.RecordN(999'500, 990);
  h.Record(2'000'000);
  const ValueRange r = RankRange(h, 50.0);
  const Histogram::Range bucket = Histogram::MagnitudeRange(Histogram::IndexOf(999'500));
  EXPECT_EQ(*r.lo_ns, bucket.lo);
  EXPECT_EQ(*r.hi_ns, bucket.hi);
  ASSERT_LT(999'500, bucket.hi);
  EXPECT_EQ(Judge(bucket.hi - 1, r), Outcome::kUndecided);
  EXPECT_EQ(Judge(bucket.hi, r), Outcome::kPass);
  EXPECT_EQ(Judge(bucket.lo - 1, r), Outcome::kFail);
  EXPECT_EQ(GuaranteedMargin(bucket.lo - 1, r), -1);
}

TEST(BudgetSupportTest, TenSamplesBeyondThePercentile) {
  EXPECT_EQ(SamplesNeeded(99.99), 100'000u);
  EXPECT_EQ(SamplesNeeded(99.9), 10'000u);
  EXPECT_EQ(SamplesNeeded(99.0), 1'000u);
  EXPECT_EQ(SamplesNeeded(99.999), 1'000'000u);
  EXPECT_EQ(SamplesNeeded(95.0), 200u);
  EXPECT_EQ(SamplesNeeded(50.0), 20u);
  EXPECT_EQ(SamplesNeeded(99.5), 2'000u);
  EXPECT_EQ(SamplesNeeded(std::nullopt), 0u);
  EXPECT_EQ(std::string(OutcomeName(Outcome::kUndecided)), "UNDECIDED");
}

}  // namespace
}  // namespace rtpulse::stats
