#include "stats/inflation.h"

#include <gtest/gtest.h>

#include <algorithm>
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

std::string TruthScript() {
  return std::string(RTPULSE_SOURCE_DIR) + "/tests/stats/inflation_truth.py";
}

struct Truth {
  double base = 0, cond = 0, pct = 0, low = 0, high = 0, df = 0;
};

/// tests/stats/inflation_truth.py (scipy, nothing of rtpulse) over the same medians, written
/// to a file here.
Truth PythonTruth(const std::vector<double>& base, const std::vector<double>& cond,
                  double confidence) {
  testutil::TempDir dir;
  {
    std::ofstream out(dir.File("medians.txt"));
    out.precision(17);
    out << "base";
    for (const double v : base) out << ' ' << v;
    out << "\ncond";
    for (const double v : cond) out << ' ' << v;
    out << '\n';
  }
  const auto r = testutil::RunProcess(
      {"/usr/bin/python3", TruthScript(), dir.File("medians.txt"), std::to_string(confidence)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Truth t;
  std::istringstream in(r.out);
  in >> t.base >> t.cond >> t.pct >> t.low >> t.high >> t.df;
  EXPECT_FALSE(in.fail()) << r.out;
  return t;
}

/// Per-repetition medians around `median_ns`, lognormal with log-sd `sd_log`.
std::vector<double> Medians(size_t n, double median_ns, double sd_log, std::mt19937_64& rng) {
  std::normal_distribution<double> dist(0, sd_log);
  std::vector<double> out;
  for (size_t i = 0; i < n; ++i) out.push_back(median_ns * std::exp(dist(rng)));
  return out;
}

// Published two-sided critical values (any t table): df 1, 2, 4, 8, 30 at 95 %, df 10 at 99 %.
TEST(StudentTQuantileTest, MatchesTheTablesAndScipy) {
  EXPECT_NEAR(StudentTQuantile(0.975, 1), 12.7062047, 1e-6);
  EXPECT_NEAR(StudentTQuantile(0.975, 2), 4.30265273, 1e-7);
  EXPECT_NEAR(StudentTQuantile(0.975, 4), 2.77644511, 1e-7);
  EXPECT_NEAR(StudentTQuantile(0.975, 8), 2.30600414, 1e-7);
  EXPECT_NEAR(StudentTQuantile(0.975, 30), 2.04227246, 1e-7);
  EXPECT_NEAR(StudentTQuantile(0.995, 10), 3.16927267, 1e-7);
  EXPECT_NEAR(StudentTQuantile(0.5, 7), 0.0, 1e-12);
  EXPECT_NEAR(StudentTQuantile(0.025, 8), -2.30600414, 1e-7);  // symmetric
  for (const auto& [p, df] : std::vector<std::pair<double, double>>{
           {0.975, 3.7}, {0.95, 1.2}, {0.999, 5.5}, {0.9, 200}, {0.6, 2.5}}) {
    const auto r = testutil::RunProcess(
        {"/usr/bin/python3", TruthScript(), "--quantile", std::to_string(p), std::to_string(df)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NEAR(StudentTQuantile(p, df), std::stod(r.out), 1e-9) << p << " " << df;
  }
}

TEST(InflationTest, AgreesWithAnIndependentScipyComputation) {
  struct Case {
    size_t base_n, cond_n;
    double factor, base_sd, cond_sd, confidence;
  };
  const Case cases[] = {{2, 2, 1.0, 0.02, 0.02, 0.95},
                        {5, 5, 1.05, 0.03, 0.01, 0.95},
                        {5, 4, 0.97, 0.05, 0.05, 0.9},
                        {20, 30, 1.31, 0.01, 0.04, 0.95},
                        {100, 100, 1.01, 0.002, 0.003, 0.99}};
  std::mt19937_64 rng(7);
  for (const auto& c : cases) {
    SCOPED_TRACE(testing::Message() << c.base_n << " vs " << c.cond_n << " x" << c.factor);
    const auto base = Medians(c.base_n, 100'000, c.base_sd, rng);
    const auto cond = Medians(c.cond_n, 100'000 * c.factor, c.cond_sd, rng);
    auto inf = RepetitionInflation(base, cond, c.confidence);
    ASSERT_TRUE(inf.has_value()) << inf.error().message;
    const Truth t = PythonTruth(base, cond, c.confidence);
    EXPECT_NEAR(inf->base_median_ns, t.base, 1e-9 * t.base);
    EXPECT_NEAR(inf->cond_median_ns, t.cond, 1e-9 * t.cond);
    EXPECT_NEAR(inf->pct, t.pct, 1e-9);
    EXPECT_NEAR(inf->ci_low_pct, t.low, 1e-7);
    EXPECT_NEAR(inf->ci_high_pct, t.high, 1e-7);
    EXPECT_NEAR(inf->df, t.df, 1e-9 * t.df);
    EXPECT_EQ(inf->base_n, c.base_n);
    EXPECT_EQ(inf->cond_n, c.cond_n);
    EXPECT_TRUE(ExactlyEqual(inf->confidence, c.confidence));
  }
}

TEST(InflationTest, RepetitionsAllAlikeGiveTheExactRatioAndAZeroWidthInterval) {
  auto inf = RepetitionInflation({100'000, 100'000, 100'000}, {130'000, 130'000});
  ASSERT_TRUE(inf.has_value()) << inf.error().message;
  EXPECT_NEAR(inf->pct, 30.0, 1e-9);
  EXPECT_NEAR(inf->ci_low_pct, 30.0, 1e-9);
  EXPECT_NEAR(inf->ci_high_pct, 30.0, 1e-9);
  EXPECT_EQ(FormatInflation(*inf), "+30.0 % [30.0, 30.0]");
}

// docs/control.md#interference: the interval's promise, checked by simulation. Each simulated
// experiment has 5 repetitions per side; a repetition's jobs (400 of them, their own spread
// 5 %) share a repetition effect (log-sd 2 %) that the jobs cannot average away. The true
// ratio is known (1.10). Over 2000 experiments the 95 % interval over repetitions covers it
// in about 95 % (binomial sd 0.5 %: 93..97 % allowed); an interval that pooled the jobs as if
// independent, as rtpulse did before, covers it far less often (checked below 60 %).
TEST(InflationTest, TheIntervalOverRepetitionsCoversTheTrueRatioNinetyFivePercentOfTheTime) {
  constexpr int kExperiments = 2000;
  constexpr int kReps = 5;
  constexpr int kJobs = 400;
  constexpr double kTrue = 1.10;
  std::mt19937_64 rng(20261207);
  std::normal_distribution<double> rep_effect(0, 0.02);
  std::normal_distribution<double> job_noise(0, 0.05);
  int covered = 0, pooled_covered = 0;
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  for (int e = 0; e < kExperiments; ++e) {
    std::vector<double> base_medians, cond_medians;
    std::vector<double> base_all, cond_all;
    for (int side = 0; side < 2; ++side) {
      for (int r = 0; r < kReps; ++r) {
        const double level = 100'000 * (side == 0 ? 1.0 : kTrue) * std::exp(rep_effect(rng));
        std::vector<double> jobs;
        for (int j = 0; j < kJobs; ++j) jobs.push_back(level * std::exp(job_noise(rng)));
        (side == 0 ? base_medians : cond_medians).push_back(median(jobs));
        auto& all = side == 0 ? base_all : cond_all;
        all.insert(all.end(), jobs.begin(), jobs.end());
      }
    }
    auto inf = RepetitionInflation(base_medians, cond_medians);
    ASSERT_TRUE(inf.has_value());
    const double truth_pct = 100 * (kTrue - 1);
    covered += inf->ci_low_pct <= truth_pct && truth_pct <= inf->ci_high_pct ? 1 : 0;
    // The pooled-jobs interval: the medians' log standard errors from the jobs' own spread
    // (1.2533 sd / sqrt(n) for a median), as if every job were independent.
    const double n = kReps * kJobs;
    const double se = std::sqrt(2.0) * 1.2533 * 0.05 / std::sqrt(n);
    const double log_ratio = std::log(median(cond_all) / median(base_all));
    const double low = 100 * (std::exp(log_ratio - 1.96 * se) - 1);
    const double high = 100 * (std::exp(log_ratio + 1.96 * se) - 1);
    pooled_covered += low <= truth_pct && truth_pct <= high ? 1 : 0;
  }
  const double coverage = static_cast<double>(covered) / kExperiments;
  EXPECT_GE(coverage, 0.93);
  EXPECT_LE(coverage, 0.97);
  EXPECT_LT(static_cast<double>(pooled_covered) / kExperiments, 0.60);
}

TEST(InflationTest, BadInputIsAUsageErrorNamingTheValue) {
  auto few = RepetitionInflation({5'000}, {5'000, 5'100});
  ASSERT_FALSE(few.has_value());
  EXPECT_EQ(few.error().code, ExitCode::kUsage);
  EXPECT_NE(few.error().message.find("baseline has 1 measured repetition(s)"), std::string::npos)
      << few.error().message;
  EXPECT_NE(few.error().message.find("--repetitions 5"), std::string::npos);
  auto few_cond = RepetitionInflation({5'000, 5'100}, {});
  ASSERT_FALSE(few_cond.has_value());
  EXPECT_NE(few_cond.error().message.find("condition has 0"), std::string::npos);
  auto zero = RepetitionInflation({5'000, 5'100}, {5'000, 0});
  ASSERT_FALSE(zero.has_value());
  EXPECT_NE(zero.error().message.find("repetition 2 has the median execution time 0 ns"),
            std::string::npos)
      << zero.error().message;
  for (const double bad : {0.0, 1.0, 1.5, -0.2}) {
    auto conf = RepetitionInflation({1, 2}, {1, 2}, bad);
    ASSERT_FALSE(conf.has_value());
    EXPECT_EQ(conf.error().code, ExitCode::kUsage);
    EXPECT_NE(conf.error().message.find("0.95"), std::string::npos);
  }
}

}  // namespace
}  // namespace rtpulse::stats
