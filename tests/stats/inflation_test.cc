#include "stats/inflation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/float_compare.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse::stats {
namespace {

std::vector<int64_t> NormalTimes(size_t n, double mean_ns, double sd_ns, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> dist(mean_ns, sd_ns);
  std::vector<int64_t> out;
  for (size_t i = 0; i < n; ++i) out.push_back(std::max<int64_t>(1, std::llround(dist(rng))));
  return out;
}

std::vector<int64_t> Scaled(const std::vector<int64_t>& v, double factor) {
  std::vector<int64_t> out;
  for (const int64_t x : v) out.push_back(std::llround(static_cast<double>(x) * factor));
  return out;
}

struct Truth {
  double base_median = 0, cond_median = 0, pct = 0, low = 0, high = 0;
};

/// tests/stats/inflation_truth.py (scipy, nothing of rtpulse) over the same values, written to
/// a file here.
Truth PythonTruth(const std::vector<int64_t>& base, const std::vector<int64_t>& cond,
                  double confidence) {
  testutil::TempDir dir;
  {
    std::ofstream out(dir.File("values.txt"));
    out << "base";
    for (const int64_t v : base) out << ' ' << v;
    out << "\ncond";
    for (const int64_t v : cond) out << ' ' << v;
    out << '\n';
  }
  const auto r = testutil::RunProcess(
      {"/usr/bin/python3", std::string(RTPULSE_SOURCE_DIR) + "/tests/stats/inflation_truth.py",
       dir.File("values.txt"), std::to_string(confidence)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Truth t;
  std::istringstream in(r.out);
  in >> t.base_median >> t.cond_median >> t.pct >> t.low >> t.high;
  EXPECT_FALSE(in.fail()) << r.out;
  return t;
}

TEST(InflationTest, ConstantTimesGiveTheExactRatioAndAZeroWidthInterval) {
  const std::vector<int64_t> base(10, 100'000);
  const std::vector<int64_t> cond(12, 130'000);
  auto inf = ExecInflation(base, cond);
  ASSERT_TRUE(inf.has_value()) << inf.error().message;
  EXPECT_TRUE(ExactlyEqual(inf->base_median_ns, 100'000));
  EXPECT_TRUE(ExactlyEqual(inf->cond_median_ns, 130'000));
  EXPECT_NEAR(inf->pct, 30.0, 1e-12);
  EXPECT_NEAR(inf->ci_low_pct, 30.0, 1e-12);
  EXPECT_NEAR(inf->ci_high_pct, 30.0, 1e-12);
  EXPECT_EQ(inf->base_n, 10u);
  EXPECT_EQ(inf->cond_n, 12u);
  EXPECT_EQ(FormatInflation(*inf), "+30.0 % [30.0, 30.0]");
}

// The worked example of Bonett's statpsych R package (ci.ratio.median2, the Price & Bonett
// interval): medians 43 and 37, ratio 1.162162 [0.927667, 1.455933].
TEST(InflationTest, MatchesThePublishedWorkedExample) {
  const std::vector<int64_t> cond = {36, 44, 47, 42, 49, 39, 46, 31, 33, 48};
  const std::vector<int64_t> base = {32, 39, 26, 35, 43, 27, 40, 37, 34, 29, 49, 42, 40};
  auto inf = ExecInflation(base, cond);
  ASSERT_TRUE(inf.has_value()) << inf.error().message;
  EXPECT_TRUE(ExactlyEqual(inf->cond_median_ns, 43));
  EXPECT_TRUE(ExactlyEqual(inf->base_median_ns, 37));
  EXPECT_NEAR(inf->pct, 16.2162, 1e-4);
  EXPECT_NEAR(inf->ci_low_pct, -7.2333, 1e-4);
  EXPECT_NEAR(inf->ci_high_pct, 45.5933, 1e-4);
  EXPECT_EQ(FormatInflation(*inf), "+16.2 % [-7.2, 45.6]");
}

TEST(InflationTest, AgreesWithAnIndependentScipyComputation) {
  struct Case {
    size_t base_n, cond_n;
    double factor, confidence;
  };
  const Case cases[] = {{10, 10, 1.0, 0.95},
                        {11, 25, 1.05, 0.95},
                        {49, 50, 0.97, 0.9},
                        {1000, 999, 1.31, 0.95},
                        {12'500, 12'500, 1.01, 0.99}};
  uint64_t seed = 7;
  for (const auto& c : cases) {
    SCOPED_TRACE(testing::Message() << c.base_n << " vs " << c.cond_n << " x" << c.factor);
    const auto base = NormalTimes(c.base_n, 100'000, 8'000, seed++);
    const auto cond = Scaled(NormalTimes(c.cond_n, 100'000, 8'000, seed++), c.factor);
    auto inf = ExecInflation(base, cond, c.confidence);
    ASSERT_TRUE(inf.has_value()) << inf.error().message;
    const Truth t = PythonTruth(base, cond, c.confidence);
    EXPECT_NEAR(inf->base_median_ns, t.base_median, 1e-9 * t.base_median);
    EXPECT_NEAR(inf->cond_median_ns, t.cond_median, 1e-9 * t.cond_median);
    EXPECT_NEAR(inf->pct, t.pct, 1e-9);
    EXPECT_NEAR(inf->ci_low_pct, t.low, 1e-8);
    EXPECT_NEAR(inf->ci_high_pct, t.high, 1e-8);
    EXPECT_TRUE(ExactlyEqual(inf->confidence, c.confidence));
  }
}

TEST(InflationTest, IdenticalInputsGiveZeroWithAnIntervalAroundZero) {
  const auto base = NormalTimes(2'000, 100'000, 5'000, 11);
  auto inf = ExecInflation(base, base);
  ASSERT_TRUE(inf.has_value()) << inf.error().message;
  EXPECT_TRUE(ExactlyEqual(inf->pct, 0.0));
  EXPECT_LT(inf->ci_low_pct, 0.0);
  EXPECT_GT(inf->ci_high_pct, 0.0);
}

TEST(InflationTest, AThirtyPercentSlowerConditionGivesThirtyWithAnIntervalExcludingZero) {
  const auto base = NormalTimes(2'000, 100'000, 5'000, 13);
  const auto cond = Scaled(base, 1.3);
  auto inf = ExecInflation(base, cond);
  ASSERT_TRUE(inf.has_value()) << inf.error().message;
  EXPECT_NEAR(inf->pct, 30.0, 1e-3);  // Rounding to whole ns moves the median by < 1 ns.
  EXPECT_LT(inf->ci_low_pct, 30.0);
  EXPECT_GT(inf->ci_high_pct, 30.0);
  EXPECT_GT(inf->ci_low_pct, 0.0);
  // Slower baseline than condition: a negative inflation, the interval mirrored.
  auto back = ExecInflation(cond, base);
  ASSERT_TRUE(back.has_value());
  EXPECT_NEAR(back->pct, 100 * (1 / 1.3 - 1), 1e-3);
  EXPECT_LT(back->ci_high_pct, 0.0);
}

TEST(InflationTest, BadInputIsAUsageErrorNamingTheValue) {
  const std::vector<int64_t> ten(10, 5'000);
  const std::vector<int64_t> nine(9, 5'000);
  auto few = ExecInflation(nine, ten);
  ASSERT_FALSE(few.has_value());
  EXPECT_EQ(few.error().code, ExitCode::kUsage);
  EXPECT_NE(few.error().message.find("baseline has 9 execution times"), std::string::npos)
      << few.error().message;
  EXPECT_NE(few.error().message.find("at least 10"), std::string::npos);
  auto few_cond = ExecInflation(ten, nine);
  ASSERT_FALSE(few_cond.has_value());
  EXPECT_NE(few_cond.error().message.find("condition has 9"), std::string::npos);

  std::vector<int64_t> zeros(10, 0);
  auto zero = ExecInflation(ten, zeros);
  ASSERT_FALSE(zero.has_value());
  EXPECT_EQ(zero.error().code, ExitCode::kUsage);
  EXPECT_NE(zero.error().message.find("0 ns (job 0)"), std::string::npos) << zero.error().message;
  std::vector<int64_t> one_negative = ten;
  one_negative[7] = -3;
  auto negative = ExecInflation(one_negative, ten);
  ASSERT_FALSE(negative.has_value());
  EXPECT_NE(negative.error().message.find("-3 ns (job 7)"), std::string::npos);

  for (const double bad : {0.0, 1.0, 1.5, -0.2}) {
    auto conf = ExecInflation(ten, ten, bad);
    ASSERT_FALSE(conf.has_value());
    EXPECT_EQ(conf.error().code, ExitCode::kUsage);
    EXPECT_NE(conf.error().message.find("0.95"), std::string::npos);
  }
}

}  // namespace
}  // namespace rtpulse::stats
