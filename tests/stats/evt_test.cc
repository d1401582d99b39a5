// Extreme value estimates against synthetic data whose tails are known exactly. Every
// generator is seeded, so each assertion is deterministic. Tolerances (relative error of an
// estimated quantile against the true one): 15 % for exponential / Gumbel tails, 25 % for the
// Pareto tail (xi = 0.2); xi within 0.05 (POT, ~1e4 exceedances) or 0.1 (GEV, 1000 maxima).
//
// The Golden tests pin the text table, the JSON and the exceedance curve of a few reports to
// tests/data/golden/evt (RTPULSE_UPDATE_GOLDEN=1 rewrites them and skips). Text and curve
// must match byte for byte; JSON numbers to 1e-9 relative, so a libm or FMA difference in the
// last bits on another architecture does not fail them while a changed estimate does.

#include "stats/evt.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/float_compare.h"
#include "support/test_paths.h"

namespace rtpulse::stats {

// GoogleTest prints the status enums by their output names (found by ADL).
void PrintTo(GpdMethod m, std::ostream* os) {
  *os << '"' << GpdMethodName(m) << '"';
}
void PrintTo(GevMethod m, std::ostream* os) {
  *os << '"' << GevMethodName(m) << '"';
}
void PrintTo(CheckVerdict v, std::ostream* os) {
  *os << CheckVerdictName(v);
}
void PrintTo(BlockMaximaModel m, std::ostream* os) {
  *os << '"' << BlockMaximaModelName(m) << '"';
}

namespace {

class Uniform {
 public:
  explicit Uniform(uint64_t seed) : engine_(seed) {}
  double operator()() { return (static_cast<double>(engine_() >> 11) + 0.5) * 0x1.0p-53; }

 private:
  std::mt19937_64 engine_;
};

constexpr size_t kSamples = 1'000'000;
constexpr double kExpOffsetNs = 20'000;
constexpr double kExpMeanNs = 10'000;
constexpr double kParetoMinNs = 10'000;
constexpr double kParetoXi = 0.2;

std::vector<double> Exponential(uint64_t seed) {
  Uniform u(seed);
  std::vector<double> x(kSamples);
  for (auto& v : x) v = kExpOffsetNs - kExpMeanNs * std::log(u());
  return x;
}
double ExponentialQuantile(double p) {
  return kExpOffsetNs + kExpMeanNs * std::log(1 / p);
}

std::vector<double> Pareto(uint64_t seed) {
  Uniform u(seed);
  std::vector<double> x(kSamples);
  for (auto& v : x) v = kParetoMinNs * std::pow(u(), -kParetoXi);
  return x;
}
double ParetoQuantile(double p) {
  return kParetoMinNs * std::pow(p, -kParetoXi);
}

std::vector<double> Ar1(double phi, size_t n, uint64_t seed) {
  Uniform u(seed);
  std::vector<double> x(n);
  double prev = 0;
  for (auto& v : x) {
    const double z = std::sqrt(-2 * std::log(u())) * std::cos(2 * M_PI * u());
    prev = phi * prev + z;
    v = prev;
  }
  return x;
}

EvtOptions TestOptions() {
  EvtOptions o;
  o.threshold_quantile = 0.99;  // 1e4 exceedances; the automatic choice has its own test
  o.bootstrap = 60;             // enough for the 95 % interval ends; keeps the test to seconds
  o.seed = 7;
  o.probabilities = {1e-4, 1e-5, 1e-6};
  return o;
}

void ExpectLevels(const std::vector<ReturnLevel>& levels, double (*truth)(double), double tolerance,
                  const char* what) {
  ASSERT_EQ(levels.size(), 3u) << what;
  for (const auto& l : levels) {
    const double t = truth(l.probability);
    const double error = (l.estimate_ns - t) / t;
    std::printf("%s p=%.0e: estimate %.0f true %.0f error %+.2f%% CI [%.0f, %.0f]\n", what,
                l.probability, l.estimate_ns, t, 100 * error, l.ci_low_ns, l.ci_high_ns);
    EXPECT_LT(std::fabs(error), tolerance) << what << " p=" << l.probability;
    EXPECT_LE(l.ci_low_ns, t) << what << " p=" << l.probability;
    EXPECT_GE(l.ci_high_ns, t) << what << " p=" << l.probability;
    EXPECT_LT(l.ci_low_ns, l.estimate_ns);
    EXPECT_GT(l.ci_high_ns, l.estimate_ns);
  }
}

TEST(ChiSquareTest, KnownValues) {
  EXPECT_NEAR(1 - ChiSquarePValue(3.841458820694124, 1), 0.95, 1e-9);
  EXPECT_NEAR(ChiSquarePValue(5.991464547107979, 2), 0.05, 1e-9);
  EXPECT_NEAR(ChiSquarePValue(18.307038053275146, 10), 0.05, 1e-9);  // continued fraction
  EXPECT_NEAR(ChiSquarePValue(124.34211340400407, 100), 0.05, 1e-8);
  EXPECT_NEAR(ChiSquarePValue(0.454936423119572, 1), 0.5, 1e-9);  // median, series branch
  EXPECT_EQ(ChiSquarePValue(0, 3), 1.0);
  EXPECT_NEAR(RegularizedGammaP(1, 2.5), 1 - std::exp(-2.5), 1e-14);
  EXPECT_NEAR(RegularizedGammaP(0.5, 0.7), std::erf(std::sqrt(0.7)), 1e-14);
  EXPECT_NEAR(RegularizedGammaP(3, 10), 1 - std::exp(-10) * (1 + 10 + 50), 1e-14);
  EXPECT_TRUE(std::isnan(RegularizedGammaP(0, 1)));
}

TEST(GpdTest, RecoversShapeAndScale) {
  Uniform u(11);
  for (const double xi : {-0.3, 0.0, 0.2, 0.6}) {
    std::vector<double> y(20'000);
    for (auto& v : y) {
      v = ExactlyEqual(xi, 0) ? -1000 * std::log(u()) : 1000 * std::expm1(-xi * std::log(u())) / xi;
    }
    const GpdFit f = FitGpd(y);
    ASSERT_TRUE(f.ok) << xi;
    EXPECT_EQ(f.method, GpdMethod::kMle) << xi;
    EXPECT_NEAR(f.xi, xi, 0.05) << xi;
    EXPECT_NEAR(f.sigma_ns / 1000, 1.0, 0.05) << xi;
    EXPECT_NEAR(f.xi_se, (1 + f.xi) / std::sqrt(20'000.0), 1e-12);
  }
}

TEST(GpdTest, UniformExcessesFallBackToMoments) {
  // Uniform excesses are GPD with xi = -1, where maximum likelihood is not regular.
  Uniform u(3);
  std::vector<double> y(5000);
  for (auto& v : y) v = 100 * u();
  const GpdFit f = FitGpd(y);
  ASSERT_TRUE(f.ok);
  EXPECT_EQ(f.method, GpdMethod::kPwm);
  EXPECT_FALSE(f.note.empty());
  EXPECT_NEAR(f.xi, -1.0, 0.1);
}

TEST(GpdTest, TooFewOrDegenerate) {
  EXPECT_FALSE(FitGpd({}).ok);
  EXPECT_FALSE(FitGpd({1.0, 2.0}).ok);
  EXPECT_FALSE(FitGpd({0.0, 0.0, 0.0, 0.0}).ok);
}

TEST(GevTest, GumbelMaximaAreRecognised) {
  Uniform u(5);
  std::vector<double> maxima(1000);
  for (auto& v : maxima) v = 100 - 10 * std::log(-std::log(u()));  // Gumbel(100, 10)
  const GevFit g = FitGumbel(maxima);
  ASSERT_TRUE(g.ok);
  EXPECT_EQ(g.method, GevMethod::kGumbelMle);
  EXPECT_NEAR(g.mu_ns, 100, 1.5);
  EXPECT_NEAR(g.sigma_ns, 10, 1.0);
  const GevFit gev = FitGev(maxima);
  ASSERT_TRUE(gev.ok);
  EXPECT_EQ(gev.method, GevMethod::kMle);
  EXPECT_NEAR(gev.xi, 0, 0.1);
  EXPECT_GE(gev.log_likelihood, g.log_likelihood);
  const double lr = 2 * (gev.log_likelihood - g.log_likelihood);
  EXPECT_GT(ChiSquarePValue(lr, 1), 0.05);
}

TEST(GevTest, QuantilesInvertTheModel) {
  GevFit f;
  f.ok = true;
  f.mu_ns = 50;
  f.sigma_ns = 5;
  f.xi = 0;
  // Gumbel with m = 1: P(X > x) = 1 - exp(-exp(-(x - mu)/sigma)).
  const double x = GevQuantile(f, 1, 1e-3);
  EXPECT_NEAR(-std::expm1(-std::exp(-(x - 50) / 5)), 1e-3, 1e-12);
  f.xi = 0.3;
  const double y = GevQuantile(f, 1000, 1e-6);
  const double g = std::exp(-std::pow(1 + 0.3 * (y - 50) / 5, -1 / 0.3));  // P(block max <= y)
  EXPECT_NEAR(-std::expm1(std::log(g) / 1000), 1e-6, 1e-12);
}

TEST(EvtTest, ExponentialTail) {
  const EvtReport r = EstimateWorstCase(Exponential(1), TestOptions());
  ASSERT_TRUE(r.pot_ok);
  ASSERT_TRUE(r.bm_ok);
  EXPECT_EQ(r.samples, kSamples);
  EXPECT_NEAR(r.pot.fit.xi, 0, 0.05);
  EXPECT_NEAR(r.pot.fit.sigma_ns / kExpMeanNs, 1, 0.05);
  EXPECT_EQ(r.pot.exceedances, 10'000u);
  EXPECT_EQ(r.bm.blocks, 1000u);
  EXPECT_NEAR(r.bm.gev.xi, 0, 0.1);
  EXPECT_TRUE(r.bm.gumbel_sufficient) << "LR p " << r.bm.lr_p_value;
  EXPECT_EQ(r.bm.levels_model, BlockMaximaModel::kGumbel);
  ExpectLevels(r.pot.levels, ExponentialQuantile, 0.15, "exponential POT");
  ExpectLevels(r.bm.levels, ExponentialQuantile, 0.15, "exponential BM");
  for (const auto& c : r.checks) {
    EXPECT_NE(c.verdict, CheckVerdict::kWarn) << c.name << " " << c.p_value;
  }
}

TEST(EvtTest, ParetoTail) {
  const EvtReport r = EstimateWorstCase(Pareto(2), TestOptions());
  ASSERT_TRUE(r.pot_ok);
  ASSERT_TRUE(r.bm_ok);
  EXPECT_NEAR(r.pot.fit.xi, kParetoXi, 0.05);
  EXPECT_NEAR(r.bm.gev.xi, kParetoXi, 0.1);
  EXPECT_FALSE(r.bm.gumbel_sufficient) << "LR p " << r.bm.lr_p_value;
  EXPECT_EQ(r.bm.levels_model, BlockMaximaModel::kGev);
  ExpectLevels(r.pot.levels, ParetoQuantile, 0.25, "pareto POT");
  ExpectLevels(r.bm.levels, ParetoQuantile, 0.25, "pareto BM");
}

TEST(EvtTest, AutomaticThresholdIsStatedAndOverridable) {
  EvtOptions o = TestOptions();
  o.threshold_quantile.reset();
  o.bootstrap = 0;
  std::vector<double> x = Exponential(4);
  x.resize(200'000);
  const EvtReport r = EstimateWorstCase(x, o);
  ASSERT_TRUE(r.pot_ok);
  EXPECT_TRUE(r.pot.threshold_auto);
  EXPECT_NE(r.pot.threshold_reason.find("automatic"), std::string::npos);
  ASSERT_EQ(r.pot.diagnostics.size(), o.threshold_grid.size());
  for (const auto& d : r.pot.diagnostics) {
    // An exponential tail: mean residual life flat at the mean, xi ~ 0, modified scale flat.
    EXPECT_NEAR(d.mean_excess_ns / kExpMeanNs, 1, 0.1) << d.quantile;
    EXPECT_NEAR(d.fit.xi, 0, 0.1) << d.quantile;
    // sigma - xi*u carries xi's sampling error times u.
    EXPECT_NEAR(d.modified_scale_ns, kExpMeanNs,
                0.15 * kExpMeanNs + 2 * d.fit.xi_se * d.threshold_ns)
        << d.quantile;
  }
  EXPECT_TRUE(std::isnan(r.pot.levels[0].ci_low_ns));  // no bootstrap asked for
  o.threshold_quantile = 0.95;
  const EvtReport given = EstimateWorstCase(x, o);
  EXPECT_FALSE(given.pot.threshold_auto);
  EXPECT_DOUBLE_EQ(given.pot.threshold_quantile, 0.95);
  EXPECT_NEAR(given.pot.exceedance_rate, 0.05, 1e-4);
}

TEST(EvtTest, SameSeedSameIntervals) {
  EvtOptions o = TestOptions();
  o.bootstrap = 20;
  std::vector<double> x = Exponential(9);
  x.resize(50'000);
  o.block_size = 500;
  const EvtReport a = EstimateWorstCase(x, o);
  const EvtReport b = EstimateWorstCase(x, o);
  EXPECT_EQ(ToJson(a), ToJson(b));
  o.seed = 8;
  const EvtReport c = EstimateWorstCase(x, o);
  EXPECT_NE(ToJson(a)["pot"]["levels"], ToJson(c)["pot"]["levels"]);
}

TEST(ChecksTest, LjungBoxFlagsAr1AndPassesNoise) {
  const EvtCheck ar = LjungBox(Ar1(0.9, 500, 21), 10);
  EXPECT_LT(ar.p_value, 1e-6);
  const EvtCheck iid = LjungBox(Ar1(0.0, 500, 22), 10);
  EXPECT_GT(iid.p_value, 0.05);
  EXPECT_EQ(LjungBox({1, 2, 3}, 10).verdict, CheckVerdict::kSkipped);
  EXPECT_EQ(LjungBox(std::vector<double>(50, 1.0), 5).verdict, CheckVerdict::kSkipped);
}

TEST(ChecksTest, RunsTestFlagsAr1AndPassesNoise) {
  const EvtCheck ar = RunsTest(Ar1(0.9, 500, 23));
  EXPECT_LT(ar.p_value, 1e-6);
  EXPECT_LT(ar.statistic, 0);  // too few runs: long stretches on one side
  const EvtCheck iid = RunsTest(Ar1(0.0, 500, 24));
  EXPECT_GT(iid.p_value, 0.05);
  // Alternating values: every value is its own run (too many runs).
  std::vector<double> alt(100);
  for (size_t i = 0; i < alt.size(); ++i) alt[i] = i % 2 == 0 ? 1.0 : -1.0;
  const EvtCheck a = RunsTest(alt);
  EXPECT_GT(a.statistic, 0);
  EXPECT_LT(a.p_value, 1e-6);
}

TEST(ChecksTest, ExtremalIndexSeesClusters) {
  std::vector<double> iid = Ar1(0.0, 200'000, 25);
  EXPECT_NEAR(ExtremalIndex(iid, 2.5), 1.0, 0.1);
  std::vector<double> pairs;  // every value twice: exceedances in clusters of 2
  for (size_t i = 0; i < 100'000; ++i) pairs.insert(pairs.end(), 2, iid[i]);
  EXPECT_NEAR(ExtremalIndex(pairs, 2.5), 0.5, 0.1);
  EXPECT_TRUE(std::isnan(ExtremalIndex({1, 2, 3}, 2.5)));
}

TEST(EvtTest, DependentSeriesIsFlagged) {
  EvtOptions o = TestOptions();
  o.bootstrap = 0;
  o.block_size = 20;
  const EvtReport r = EstimateWorstCase(Ar1(0.999, 20'000, 26), o);
  bool dependence = false;
  for (const auto& w : r.warnings) {
    dependence |=
        w.find("autocorrelated") != std::string::npos || w.find("not random") != std::string::npos;
  }
  EXPECT_TRUE(dependence);
}

TEST(EvtTest, EmptyAndTinyInputs) {
  for (const auto& x :
       {std::vector<double>{}, std::vector<double>{5.0}, std::vector<double>(1000, 7.0)}) {
    const EvtReport r = EstimateWorstCase(x, TestOptions());
    EXPECT_FALSE(r.pot_ok);
    EXPECT_FALSE(r.bm_ok);
    EXPECT_FALSE(r.warnings.empty());
    const auto j = ToJson(r);
    EXPECT_EQ(j["disclaimer"], std::string(kEvtDisclaimer));
    EXPECT_FALSE(FormatEvtReport(r).empty());
  }
}

TEST(EvtTest, JsonHasEveryField) {
  EvtOptions o = TestOptions();
  o.bootstrap = 10;
  std::vector<double> x = Exponential(12);
  x.resize(100'000);
  const auto j = ToJson(EstimateWorstCase(x, o));
  for (const char* key : {"disclaimer", "reporting_rule", "options", "samples", "min_ns", "max_ns",
                          "pot", "block_maxima", "checks", "warnings"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* key :
       {"threshold_quantile", "threshold_ns", "threshold_auto", "threshold_reason", "exceedances",
        "exceedance_rate", "fit", "levels", "diagnostics", "bootstrap_failures"}) {
    EXPECT_TRUE(j["pot"].contains(key)) << key;
  }
  for (const char* key : {"block_size", "blocks", "gev", "gumbel", "lr_statistic", "lr_p_value",
                          "gumbel_sufficient", "levels_model", "levels"}) {
    EXPECT_TRUE(j["block_maxima"].contains(key)) << key;
  }
  for (const char* method : {"pot", "block_maxima"}) {
    for (const char* key : {"trusted", "refusal", "min_probability", "raw_fit"}) {
      EXPECT_TRUE(j[method].contains(key)) << method << " " << key;
    }
    for (const char* key : {"probability", "estimate_ns", "ci_low_ns", "ci_high_ns",
                            "ci_high_unbounded", "refusal"}) {
      EXPECT_TRUE(j[method]["levels"][0].contains(key)) << method << " " << key;
    }
  }
  EXPECT_TRUE(j["options"].contains("max_extrapolation_decades"));
  EXPECT_EQ(j["checks"].size(), 4u);
  EXPECT_EQ(j["pot"]["levels"][0]["ci_low_ns"].is_number(), true);
  const std::string text = FormatEvtReport(EstimateWorstCase(x, o));
  EXPECT_NE(text.find("not guarantees"), std::string::npos);
}

TEST(EvtOutputTest, StatusNamesAreTheDocumentedStrings) {
  EXPECT_EQ(GpdMethodName(GpdMethod::kNone), "");
  EXPECT_EQ(GpdMethodName(GpdMethod::kMle), "mle");
  EXPECT_EQ(GpdMethodName(GpdMethod::kPwm), "pwm");
  EXPECT_EQ(GevMethodName(GevMethod::kNone), "");
  EXPECT_EQ(GevMethodName(GevMethod::kMle), "mle");
  EXPECT_EQ(GevMethodName(GevMethod::kGumbelMle), "gumbel-mle");
  EXPECT_EQ(CheckVerdictName(CheckVerdict::kPass), "pass");
  EXPECT_EQ(CheckVerdictName(CheckVerdict::kWarn), "warn");
  EXPECT_EQ(CheckVerdictName(CheckVerdict::kSkipped), "skipped");
  EXPECT_EQ(BlockMaximaModelName(BlockMaximaModel::kNone), "");
  EXPECT_EQ(BlockMaximaModelName(BlockMaximaModel::kGev), "gev");
  EXPECT_EQ(BlockMaximaModelName(BlockMaximaModel::kGumbel), "gumbel");
}

TEST(EvtOutputTest, IntervalLabelIsTheConfidenceUsed) {
  EXPECT_EQ(ConfidenceLabel(0.95), "95%");
  EXPECT_EQ(ConfidenceLabel(0.9), "90%");
  EXPECT_EQ(ConfidenceLabel(0.99), "99%");
  EXPECT_EQ(ConfidenceLabel(0.999), "99.9%");
  EvtOptions o = TestOptions();
  o.bootstrap = 20;
  o.block_size = 500;
  o.confidence = 0.9;
  std::vector<double> x = Exponential(13);
  x.resize(50'000);
  const EvtReport r90 = EstimateWorstCase(x, o);
  const std::string text = FormatEvtReport(r90);
  EXPECT_NE(text.find("POT latency us [90% CI]"), std::string::npos) << text;
  EXPECT_NE(text.find("BM (gumbel) us [90% CI]"), std::string::npos) << text;
  EXPECT_EQ(text.find("95%"), std::string::npos) << text;
  EXPECT_DOUBLE_EQ(ToJson(r90)["options"]["confidence"].get<double>(), 0.9);
  // The label follows the intervals: 90 % intervals are narrower than 95 % ones.
  o.confidence = 0.95;
  const EvtReport r95 = EstimateWorstCase(x, o);
  EXPECT_NE(FormatEvtReport(r95).find("POT latency us [95% CI]"), std::string::npos);
  const auto width = [](const ReturnLevel& l) { return l.ci_high_ns - l.ci_low_ns; };
  EXPECT_LT(width(r90.pot.levels[0]), width(r95.pot.levels[0]));
}

// ---- What is reported (docs/wcet.md, "What is reported") --------------------------------

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(EvtReportingTest, PercentileIntervalKnownValuesAndInfinity) {
  // 1..100 at 90 %: positions 0.05*99 = 4.95 and 0.95*99 = 94.05 between order statistics
  // (numpy.percentile's default "linear": 5.95 and 95.05).
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  auto [lo, hi] = PercentileInterval(v, 0.9);
  EXPECT_NEAR(lo, 5.95, 1e-12);
  EXPECT_NEAR(hi, 95.05, 1e-12);
  // NaN replicates (no quantile) are left out: the same interval.
  std::vector<double> with_nan = v;
  with_nan.insert(with_nan.begin(), 3, std::nan(""));
  EXPECT_EQ(PercentileInterval(with_nan, 0.9), PercentileInterval(v, 0.9));
  // Overflowed replicates stay in: 10 of 100 infinite puts the 95th percentile on them.
  std::vector<double> with_inf(v.begin(), v.begin() + 90);
  with_inf.insert(with_inf.end(), 10, std::numeric_limits<double>::infinity());
  std::tie(lo, hi) = PercentileInterval(with_inf, 0.9);
  EXPECT_NEAR(lo, 5.95, 1e-12);
  EXPECT_TRUE(std::isinf(hi) && hi > 0) << hi;
  // 4 of 100 infinite: position 94.05 lies between two finite values (95 and 90th... the 95th
  // and 96th order statistics are 95 and 96 here), finite.
  std::vector<double> few_inf(v.begin(), v.begin() + 96);
  few_inf.insert(few_inf.end(), 4, std::numeric_limits<double>::infinity());
  EXPECT_NEAR(PercentileInterval(few_inf, 0.9).second, 95.05, 1e-12);
  EXPECT_TRUE(std::isnan(PercentileInterval({1.0}, 0.9).first));
}

/// Samples of an exponential tail, the options of the range test: a million samples, 1 %
/// exceedances, probabilities up to and just past the limit 10^-2 / 1e6 = 1e-8.
EvtOptions RangeOptions() {
  EvtOptions o = TestOptions();
  o.probabilities = {1e-6, 1e-7, 1e-8, 9e-9, 1e-9};
  return o;
}

/// The standard deviation of an estimated exponential quantile, relative to the truth, from
/// the asymptotic variances: POT (GPD, xi and sigma free, n_u exceedances) and the Gumbel
/// fit of `blocks` maxima of `m` samples (Coles 2001, 3.3.3 and 4.3.2).
double PotRelativeSd(double p, double n_u, double n) {
  const double l = std::log(n_u / n / p);  // log(zeta/p)
  // x_p - u = sigma/xi ((zeta/p)^xi - 1) near xi = 0: sigma*l*(1 + xi*l/2). Var(xi) =
  // (1+xi)^2/n_u, Var(sigma)/sigma^2 = 2(1+xi)/n_u, Cov(xi, sigma)/sigma = -(1+xi)/n_u.
  // The exceedance rate zeta adds Var(log zeta) = (1 - zeta)/n_u ~ 1/n_u through l.
  const double var = (l * l / 4 + 2 - l) / n_u + 1 / (n_u * l * l);
  return std::sqrt(var) * kExpMeanNs * l / ExponentialQuantile(p);
}
double GumbelRelativeSd(double p, double blocks, double m) {
  const double y = -std::log(m * p);  // -log(-log G) at G = (1-p)^m
  // Var(mu) = 1.109 s^2/B, Var(s) = 0.608 s^2/B, Cov = 0.257 s^2/B (Gumbel MLE).
  const double var = (1.109 + 0.608 * y * y + 2 * 0.257 * y) / blocks;
  return std::sqrt(var) * kExpMeanNs / ExponentialQuantile(p);
}

TEST(EvtReportingTest, ExponentialReportedWithinTheRangeRefusedJustBeyond) {
  const EvtOptions o = RangeOptions();
  const EvtReport r = EstimateWorstCase(Exponential(41), o);
  ASSERT_TRUE(r.pot_ok);
  ASSERT_TRUE(r.bm_ok);
  for (const auto& c : r.checks) EXPECT_NE(c.verdict, CheckVerdict::kWarn) << c.name;
  ASSERT_TRUE(r.pot.trust.trusted) << r.pot.trust.reason;
  ASSERT_TRUE(r.bm.trust.trusted) << r.bm.trust.reason;
  EXPECT_EQ(r.pot.trust.reason, "");
  // The limit: 10^-2 / n, n = 1e6 samples (POT) and 1000 blocks of 1000 (block maxima).
  EXPECT_NEAR(r.pot.trust.min_probability, 1e-8, 1e-20);
  EXPECT_NEAR(r.bm.trust.min_probability, 1e-8, 1e-20);
  EXPECT_EQ(r.bm.levels_model, BlockMaximaModel::kGumbel);
  ASSERT_EQ(r.pot.levels.size(), 5u);
  ASSERT_EQ(r.bm.levels.size(), 5u);
  const double n_u = static_cast<double>(r.pot.exceedances);
  EXPECT_EQ(r.pot.exceedances, 10'000u);
  for (size_t k = 0; k < 3; ++k) {  // 1e-6, 1e-7, 1e-8: reported, near the truth
    const double p = o.probabilities[k];
    const double truth = ExponentialQuantile(p);
    for (const auto* l : {&r.pot.levels[k], &r.bm.levels[k]}) {
      const bool pot = l == &r.pot.levels[k];
      // 4 standard deviations of the estimator (see the functions above).
      const double tolerance =
          4 * (pot ? PotRelativeSd(p, n_u, 1e6) : GumbelRelativeSd(p, 1000, 1000));
      const double error = (l->estimate_ns - truth) / truth;
      std::printf(
          "%s p=%.0e: estimate %.0f true %.0f error %+.2f%% (tolerance %.2f%%) CI [%.0f, %.0f]\n",
          pot ? "POT" : "BM", p, l->estimate_ns, truth, 100 * error, 100 * tolerance, l->ci_low_ns,
          l->ci_high_ns);
      EXPECT_EQ(l->refusal, "") << p;
      EXPECT_LT(std::fabs(error), tolerance) << p;
      EXPECT_LE(l->ci_low_ns, truth) << p;
      EXPECT_GE(l->ci_high_ns, truth) << p;
      EXPECT_TRUE(std::isfinite(l->ci_high_ns)) << p;
      // The bootstrap interval is the estimator's own spread: half-width ~ 1.96 sd.
      EXPECT_NEAR((l->ci_high_ns - l->ci_low_ns) / 2 / truth, 1.96 * tolerance / 4,
                  0.5 * 1.96 * tolerance / 4)
          << p;
    }
  }
  for (size_t k = 3; k < 5; ++k) {  // 9e-9 and 1e-9: past the limit
    for (const auto* l : {&r.pot.levels[k], &r.bm.levels[k]}) {
      EXPECT_TRUE(std::isnan(l->estimate_ns));
      EXPECT_TRUE(std::isnan(l->ci_low_ns));
      EXPECT_TRUE(std::isnan(l->ci_high_ns));
      EXPECT_EQ(
          l->refusal,
          "beyond the supported range: p < 1e-08 (more than 2 orders of magnitude below 1/n)");
    }
  }
  // The raw model still has every probability, the same numbers where reported.
  ASSERT_EQ(r.pot.raw_levels.size(), 5u);
  for (size_t k = 0; k < 5; ++k) {
    EXPECT_TRUE(std::isfinite(r.pot.raw_levels[k].estimate_ns));
    EXPECT_TRUE(std::isfinite(r.bm.raw_levels[k].estimate_ns));
    if (k < 3) {
      EXPECT_TRUE(ExactlyEqual(r.pot.raw_levels[k].estimate_ns, r.pot.levels[k].estimate_ns));
    }
  }
  // JSON: refused levels null with the reason, the raw fit marked untrusted.
  const auto j = ToJson(r);
  EXPECT_TRUE(j["pot"]["trusted"].get<bool>());
  EXPECT_TRUE(j["pot"]["refusal"].is_null());
  EXPECT_NEAR(j["pot"]["min_probability"].get<double>(), 1e-8, 1e-20);
  EXPECT_TRUE(j["pot"]["levels"][2]["estimate_ns"].is_number());
  EXPECT_TRUE(j["pot"]["levels"][2]["refusal"].is_null());
  EXPECT_FALSE(j["pot"]["levels"][2]["ci_high_unbounded"].get<bool>());
  for (const char* method : {"pot", "block_maxima"}) {
    const auto& m = j[method];
    EXPECT_TRUE(m["levels"][3]["estimate_ns"].is_null()) << method;
    EXPECT_TRUE(m["levels"][3]["ci_high_ns"].is_null()) << method;
    EXPECT_TRUE(Contains(m["levels"][3]["refusal"].get<std::string>(), "beyond the supported"));
    ASSERT_TRUE(m["raw_fit"].is_object()) << method;
    EXPECT_TRUE(m["raw_fit"]["untrusted"].get<bool>());
    EXPECT_TRUE(Contains(m["raw_fit"]["reason"].get<std::string>(), "p < 1e-08"));
    EXPECT_TRUE(m["raw_fit"]["levels"][4]["estimate_ns"].is_number());
  }
  EXPECT_EQ(j["options"]["max_extrapolation_decades"], 2.0);
  EXPECT_TRUE(Contains(j["reporting_rule"].get<std::string>(), "10^-2/n"));
  // Text: numbers down to 1e-8, "beyond supported range" past it, the rule and the limit.
  const std::string text = FormatEvtReport(r);
  std::istringstream lines(text);
  std::string row;
  int reported = 0;
  int beyond = 0;
  const std::vector<std::string> labels = {"1e-06", "1e-07", "1e-08", "9e-09", "1e-09"};
  while (std::getline(lines, row)) {
    for (size_t k = 0; k < labels.size(); ++k) {
      if (row.rfind("  " + std::string(10 - labels[k].size(), ' ') + labels[k] + "  ", 0) != 0) {
        continue;
      }
      if (k < 3) {
        ++reported;
        EXPECT_TRUE(Contains(row, fmt::format("{:.1f} [", r.pot.levels[k].estimate_ns / 1e3)))
            << row;
        EXPECT_TRUE(Contains(row, fmt::format("{:.1f} [", r.bm.levels[k].estimate_ns / 1e3)))
            << row;
      } else {
        // Both columns, no number.
        EXPECT_NE(row.find("beyond supported range"), row.rfind("beyond supported range")) << row;
        EXPECT_EQ(row.find_first_of("0123456789", 14), std::string::npos) << row;
        ++beyond;
      }
    }
  }
  EXPECT_EQ(reported, 3) << text;
  EXPECT_EQ(beyond, 2) << text;
  EXPECT_TRUE(
      Contains(text, "Supported range per activation: POT p >= 1e-08, block maxima p >= 1e-08"))
      << text;
  EXPECT_TRUE(Contains(text, "Rule: estimates are reported only down to p = 10^-2/n")) << text;
  EXPECT_FALSE(Contains(text, "no trustworthy estimate")) << text;

  // One order of magnitude instead: the limit moves to 1e-7 and 1e-8 is refused too.
  EvtOptions one = o;
  one.max_extrapolation_decades = 1;
  one.bootstrap = 0;
  const EvtReport r1 = EstimateWorstCase(Exponential(41), one);
  EXPECT_NEAR(r1.pot.trust.min_probability, 1e-7, 1e-19);
  EXPECT_EQ(r1.pot.levels[1].refusal, "");
  EXPECT_TRUE(Contains(r1.pot.levels[2].refusal, "p < 1e-07 (more than 1 orders"));
  EXPECT_TRUE(Contains(r1.bm.levels[2].refusal, "p < 1e-07"));
}

TEST(EvtReportingTest, AFailedCheckRefusesNamingIt) {
  EvtOptions o = TestOptions();
  o.bootstrap = 0;
  o.block_size = 20;
  const EvtReport r = EstimateWorstCase(Ar1(0.999, 20'000, 26), o);
  ASSERT_TRUE(r.bm_ok);
  for (const char* name : {"ljung-box", "runs", "extremal-index"}) {
    bool warned = false;
    for (const auto& c : r.checks) warned |= c.name == name && c.verdict == CheckVerdict::kWarn;
    EXPECT_TRUE(warned) << name;
  }
  EXPECT_FALSE(r.pot.trust.trusted);
  EXPECT_FALSE(r.bm.trust.trusted);
  for (const auto* t : {&r.pot.trust, &r.bm.trust}) {
    EXPECT_TRUE(Contains(t->reason, "ljung-box check failed (p = ")) << t->reason;
    EXPECT_TRUE(Contains(t->reason, "runs check failed (p = ")) << t->reason;
    EXPECT_FALSE(Contains(t->reason, "stationarity")) << t->reason;  // it passed
  }
  // The extremal index rules out POT only (block maxima absorb short clusters).
  EXPECT_TRUE(Contains(r.pot.trust.reason, "extremal-index check failed (0.0104 < 0.7"))
      << r.pot.trust.reason;
  EXPECT_FALSE(Contains(r.bm.trust.reason, "extremal-index")) << r.bm.trust.reason;
  ASSERT_EQ(r.bm.levels.size(), 3u);
  for (const auto& l : r.bm.levels) {
    EXPECT_TRUE(std::isnan(l.estimate_ns));
    EXPECT_EQ(l.refusal, "no trustworthy estimate: " + r.bm.trust.reason);
  }
  EXPECT_TRUE(std::isfinite(r.bm.raw_levels[0].estimate_ns));
  const auto j = ToJson(r);
  EXPECT_FALSE(j["block_maxima"]["trusted"].get<bool>());
  EXPECT_EQ(j["block_maxima"]["refusal"], r.bm.trust.reason);
  EXPECT_TRUE(j["block_maxima"]["levels"][0]["estimate_ns"].is_null());
  EXPECT_EQ(j["block_maxima"]["raw_fit"]["reason"],
            "no trustworthy estimate: " + r.bm.trust.reason);
  EXPECT_TRUE(j["block_maxima"]["raw_fit"]["levels"][0]["estimate_ns"].is_number());
  EXPECT_TRUE(j["pot"]["raw_fit"].is_null());  // no POT fit, so nothing raw to keep
  const std::string text = FormatEvtReport(r);
  EXPECT_TRUE(
      Contains(text, "  Block maxima: no trustworthy estimate: " + r.bm.trust.reason + "\n"))
      << text;
  EXPECT_TRUE(Contains(text, "  POT: no trustworthy estimate: " + r.pot.trust.reason + "\n"))
      << text;
  EXPECT_FALSE(Contains(text, "beyond supported range")) << text;
}

TEST(EvtReportingTest, TooFewBlocksOrExceedancesRefuse) {
  EvtOptions o = TestOptions();
  o.bootstrap = 0;
  o.probabilities = {1e-4};
  std::vector<double> x = Exponential(42);
  // 19 blocks of 1000: fitted, refused; 20: reported. The 1 % threshold leaves 190 and 200
  // exceedances: POT reported in both.
  x.resize(19'000);
  const EvtReport r19 = EstimateWorstCase(x, o);
  EXPECT_TRUE(r19.bm_ok);
  EXPECT_EQ(r19.bm.blocks, 19u);
  EXPECT_FALSE(r19.bm.trust.trusted);
  EXPECT_EQ(r19.bm.trust.reason, "only 19 blocks of 1000 (an estimate needs at least 20)");
  EXPECT_TRUE(r19.pot.trust.trusted) << r19.pot.trust.reason;
  x = Exponential(42);
  x.resize(20'000);
  const EvtReport r20 = EstimateWorstCase(x, o);
  EXPECT_EQ(r20.bm.blocks, 20u);
  EXPECT_TRUE(r20.bm.trust.trusted) << r20.bm.trust.reason;
  EXPECT_NEAR(r20.bm.levels[0].estimate_ns, ExponentialQuantile(1e-4),
              4 * GumbelRelativeSd(1e-4, 20, 1000) * ExponentialQuantile(1e-4));
  // Fewer than 10 blocks: no fit at all; the refusal and the warning state that one rule.
  x.resize(9'000);
  const EvtReport r9 = EstimateWorstCase(x, o);
  EXPECT_FALSE(r9.bm_ok);
  EXPECT_EQ(r9.bm.trust.reason, "only 9 blocks of 1000 (a fit needs at least 10)");
  EXPECT_TRUE(Contains(FormatEvtReport(r9),
                       "block maxima: only 9 blocks of 1000 samples; no fit (a fit needs at "
                       "least 10)"));
  EXPECT_FALSE(Contains(FormatEvtReport(r9), "needs at least 20"));
  EXPECT_TRUE(
      Contains(FormatEvtReport(r9), "Block maxima: no trustworthy estimate: only 9 blocks"));

  // Threshold at the 0.99 quantile, an order statistic: 4900 samples leave 49 exceedances
  // (refused), 5000 leave 50 (reported).
  o.block_size = 100;
  x = Exponential(43);
  x.resize(4900);
  const EvtReport e49 = EstimateWorstCase(x, o);
  EXPECT_TRUE(e49.pot_ok);
  EXPECT_EQ(e49.pot.exceedances, 49u);
  EXPECT_TRUE(e49.pot.trust.reason.starts_with(
      "only 49 exceedances over the threshold (an estimate needs at least 50)"))
      << e49.pot.trust.reason;
  EXPECT_TRUE(std::isnan(e49.pot.levels[0].estimate_ns));
  x = Exponential(43);
  x.resize(5000);
  const EvtReport e50 = EstimateWorstCase(x, o);
  EXPECT_EQ(e50.pot.exceedances, 50u);
  EXPECT_TRUE(e50.pot.trust.trusted) << e50.pot.trust.reason;
  // This sample's runs test lands between alpha/3 and alpha: it warns, it does not refuse.
  bool runs_warned = false;
  for (const auto& c : e50.checks) {
    if (c.name != "runs") continue;
    runs_warned = c.verdict == CheckVerdict::kWarn;
    EXPECT_GE(c.p_value, RefusalLevel(o.alpha));
    EXPECT_LT(c.p_value, o.alpha);
  }
  EXPECT_TRUE(runs_warned);
  EXPECT_NEAR(RefusalLevel(0.05), 0.05 / 3, 1e-17);
  EXPECT_NEAR(e50.pot.levels[0].estimate_ns, ExponentialQuantile(1e-4),
              4 * PotRelativeSd(1e-4, 50, 5000) * ExponentialQuantile(1e-4));
}

TEST(EvtReportingTest, PoorlyDeterminedShapeRefusesPot) {
  // 5000 samples of a Pareto tail with xi = 1 (infinite mean), 1 % threshold: 50
  // exceedances, standard error (1 + xi)/sqrt(50) ~ 0.28 > 0.25.
  EvtOptions o = TestOptions();
  o.bootstrap = 0;
  o.block_size = 100;
  o.probabilities = {1e-4};
  Uniform u(45);
  std::vector<double> x(5000);
  for (auto& v : x) v = 10'000 / u();
  const EvtReport r = EstimateWorstCase(x, o);
  ASSERT_TRUE(r.pot_ok);
  EXPECT_EQ(r.pot.exceedances, 50u);
  EXPECT_NEAR(r.pot.fit.xi_se, (1 + r.pot.fit.xi) / std::sqrt(50.0), 1e-12);
  ASSERT_GT(r.pot.fit.xi_se, 0.25) << r.pot.fit.xi;
  EXPECT_FALSE(r.pot.trust.trusted);
  EXPECT_TRUE(Contains(r.pot.trust.reason,
                       fmt::format("the shape is poorly determined (xi = {:.2f} +- {:.2f}, "
                                   "standard error above 0.25)",
                                   r.pot.fit.xi, r.pot.fit.xi_se)))
      << r.pot.trust.reason;
  EXPECT_TRUE(std::isnan(r.pot.levels[0].estimate_ns));
  // Block maxima (50 blocks) are not judged by the POT shape.
  EXPECT_FALSE(Contains(r.bm.trust.reason, "shape")) << r.bm.trust.reason;
}

TEST(EvtReportingTest, NoNumberWithAbsurdDigits) {
  EvtOptions o = TestOptions();
  o.bootstrap = 20;
  o.block_size = 500;
  std::vector<double> x = Exponential(44);
  x.resize(50'000);
  EvtReport r = EstimateWorstCase(x, o);
  ASSERT_TRUE(r.pot.trust.trusted) << r.pot.trust.reason;
  // An upper bound the refits cannot bound, and a finite but astronomical one.
  r.pot.levels[0].ci_high_ns = std::numeric_limits<double>::infinity();
  r.pot.levels[1].ci_high_ns = 1e300;
  r.pot.levels[2].estimate_ns = 1.23456e13;  // 1.23456e10 us
  const std::string text = FormatEvtReport(r);
  EXPECT_TRUE(
      Contains(text, fmt::format("{:.1f} [{:.1f}, unbounded]", r.pot.levels[0].estimate_ns / 1e3,
                                 r.pot.levels[0].ci_low_ns / 1e3)))
      << text;
  EXPECT_TRUE(Contains(text, ", 1.00e+297]")) << text;
  EXPECT_TRUE(Contains(text, "1.23e+10 [")) << text;
  for (size_t i = 0; i + 8 <= text.size(); ++i) {
    EXPECT_FALSE(std::all_of(text.begin() + static_cast<std::ptrdiff_t>(i),
                             text.begin() + static_cast<std::ptrdiff_t>(i + 8),
                             [](char c) { return c >= '0' && c <= '9'; }))
        << "8 digits in a row at " << i << ":\n"
        << text;
  }
  const auto j = ToJson(r);
  EXPECT_TRUE(j["pot"]["levels"][0]["ci_high_ns"].is_null());
  EXPECT_TRUE(j["pot"]["levels"][0]["ci_high_unbounded"].get<bool>());
  EXPECT_FALSE(j["pot"]["levels"][1]["ci_high_unbounded"].get<bool>());
}

const std::string kGolden = std::string(RTPULSE_TEST_DATA) + "/golden/evt";

bool UpdatingGolden() {
  return std::getenv("RTPULSE_UPDATE_GOLDEN") != nullptr;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Compares `actual` with `golden`: same structure, keys, strings, booleans and nulls;
/// numbers equal to 1e-9 relative (see the file comment).
void ExpectJsonNear(const nlohmann::json& actual, const nlohmann::json& golden,
                    const std::string& where) {
  if (actual.is_number() && golden.is_number()) {
    const double a = actual.get<double>();
    const double g = golden.get<double>();
    EXPECT_LE(std::fabs(a - g), 1e-9 * std::max(std::fabs(a), std::fabs(g))) << where;
    return;
  }
  ASSERT_EQ(actual.type_name(), std::string(golden.type_name())) << where;
  if (actual.is_object()) {
    ASSERT_EQ(actual.size(), golden.size()) << where;
    for (auto it = golden.begin(); it != golden.end(); ++it) {
      ASSERT_TRUE(actual.contains(it.key())) << where << "." << it.key();
      ExpectJsonNear(actual[it.key()], it.value(), where + "." + it.key());
    }
  } else if (actual.is_array()) {
    ASSERT_EQ(actual.size(), golden.size()) << where;
    for (size_t i = 0; i < golden.size(); ++i) {
      ExpectJsonNear(actual[i], golden[i], fmt::format("{}[{}]", where, i));
    }
  } else {
    EXPECT_EQ(actual, golden) << where;
  }
}

/// The exceedance curve, one point a line, every digit.
std::string CurveText(const ExceedanceCurve& c) {
  std::string s = "# empirical_ns empirical_probability\n";
  for (size_t i = 0; i < c.empirical_ns.size(); ++i) {
    s += fmt::format("{:.17g} {:.17g}\n", c.empirical_ns[i], c.empirical_probability[i]);
  }
  s += "# model_ns pot_probability bm_probability\n";
  for (size_t i = 0; i < c.model_ns.size(); ++i) {
    s += fmt::format("{:.17g} {:.17g} {:.17g}\n", c.model_ns[i], c.pot_probability[i],
                     c.bm_probability[i]);
  }
  return s;
}

/// Checks (or, when updating, rewrites) <name>.txt, <name>.json and <name>.curve.
void ExpectGoldenReport(const EvtReport& r, const std::string& name) {
  const std::string text = FormatEvtReport(r);
  const std::string json = ToJson(r).dump(1) + "\n";
  const std::string curve = CurveText(r.curve);
  const std::string base = kGolden + "/" + name;
  if (UpdatingGolden()) {
    std::ofstream(base + ".txt", std::ios::binary) << text;
    std::ofstream(base + ".json", std::ios::binary) << json;
    std::ofstream(base + ".curve", std::ios::binary) << curve;
    GTEST_SKIP() << "rewrote " << base << ".{txt,json,curve}: review the diff before committing";
  }
  const std::string golden_json = ReadText(base + ".json");
  ASSERT_FALSE(golden_json.empty()) << base << ".json is missing; run with RTPULSE_UPDATE_GOLDEN=1";
  EXPECT_EQ(text, ReadText(base + ".txt")) << name;
  ExpectJsonNear(ToJson(r), nlohmann::json::parse(golden_json), name);
  EXPECT_EQ(curve, ReadText(base + ".curve")) << name;
}

TEST(EvtGoldenTest, ExponentialAutomaticThreshold) {
  EvtOptions o = TestOptions();
  o.threshold_quantile.reset();
  o.bootstrap = 20;
  o.block_size = 500;
  std::vector<double> x = Exponential(31);
  x.resize(50'000);
  ExpectGoldenReport(EstimateWorstCase(x, o), "exponential_auto");
}

TEST(EvtGoldenTest, ParetoGivenThreshold) {
  EvtOptions o = TestOptions();
  o.bootstrap = 20;
  o.block_size = 500;
  std::vector<double> x = Pareto(32);
  x.resize(50'000);
  ExpectGoldenReport(EstimateWorstCase(x, o), "pareto_given");
}

TEST(EvtGoldenTest, DependentSeriesWithWarnings) {
  EvtOptions o = TestOptions();
  o.bootstrap = 0;
  o.block_size = 20;
  ExpectGoldenReport(EstimateWorstCase(Ar1(0.999, 20'000, 26), o), "dependent");
}

TEST(EvtGoldenTest, ConstantAndTinyInputs) {
  ExpectGoldenReport(EstimateWorstCase(std::vector<double>(1000, 7.0), TestOptions()), "constant");
  ExpectGoldenReport(EstimateWorstCase({5.0, std::nan("")}, TestOptions()), "tiny");
}

// ---- The streamed analysis (two passes, distinct values with counts) -------------------------

/// The series replayed through a pass, counting the passes.
SeriesPass PassOver(const std::vector<double>& x, int* passes = nullptr) {
  return [&x, passes](const std::function<void(double)>& sink) {
    if (passes != nullptr) ++*passes;
    for (const double v : x) sink(v);
    return Status::Ok();
  };
}

/// The in-memory analysis (every sample held: the exceedance times, the halves and the block
/// maxima counted over the whole vector, the order statistics from a sorted copy) against the
/// streamed one (two passes, bounded state) on the same series: identical output, every
/// number to the last bit (the fits of both add the same (excess, count) terms in the same
/// order), the text byte for byte.
/// Returns the in-memory report.
EvtReport ExpectStreamedEqual(const std::vector<double>& x, const EvtOptions& o,
                              const std::string& what) {
  SCOPED_TRACE(what);
  const EvtReport memory = EstimateWorstCase(x, o);
  int passes = 0;
  const auto streamed = EstimateWorstCase(PassOver(x, &passes), o);
  EXPECT_TRUE(streamed) << streamed.error().message;
  if (!streamed) return memory;
  EXPECT_EQ(passes, memory.samples >= 20 ? 2 : 1);
  EXPECT_EQ(ToJson(*streamed).dump(), ToJson(memory).dump());
  EXPECT_EQ(FormatEvtReport(*streamed), FormatEvtReport(memory));
  EXPECT_EQ(CurveText(streamed->curve), CurveText(memory.curve));
  EXPECT_EQ(streamed->bm.maxima_ns, memory.bm.maxima_ns);
  return memory;
}

TEST(EvtStreamingTest, GoldenFixturesMatchTheInMemoryAnalysis) {
  EvtOptions o = TestOptions();
  o.threshold_quantile.reset();
  o.bootstrap = 20;
  o.block_size = 500;
  std::vector<double> x = Exponential(31);
  x.resize(50'000);
  ExpectStreamedEqual(x, o, "exponential_auto");
  o = TestOptions();
  o.bootstrap = 20;
  o.block_size = 500;
  x = Pareto(32);
  x.resize(50'000);
  ExpectStreamedEqual(x, o, "pareto_given");
  o = TestOptions();
  o.bootstrap = 0;
  o.block_size = 20;
  ExpectStreamedEqual(Ar1(0.999, 20'000, 26), o, "dependent");
  ExpectStreamedEqual(std::vector<double>(1000, 7.0), TestOptions(), "constant");
  ExpectStreamedEqual({5.0, std::nan("")}, TestOptions(), "tiny");
}

TEST(EvtStreamingTest, HeavyTailedWholeNanosecondsMatch) {
  // What a samples log holds: whole nanoseconds, so many ties (a value's count > 1), a heavy
  // Pareto tail (xi = 0.5), stalls in clusters of 3 and a few non-finite values.
  Uniform u(77);
  std::vector<double> x(300'000);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = std::round(4000 + 3000 * std::pow(u(), -0.5));
    if (i % 20'000 < 3) x[i] = std::round(2e6 + 1e5 * u());
  }
  x[123] = std::numeric_limits<double>::infinity();
  x[4567] = std::nan("");
  for (const uint64_t seed : {1u, 2u}) {
    EvtOptions o;
    o.bootstrap = 30;
    o.seed = seed;
    ExpectStreamedEqual(x, o, fmt::format("pareto ns, automatic, seed {}", seed));
  }
  EvtOptions given;
  given.bootstrap = 30;
  given.threshold_quantile = 0.975;  // not on the grid
  given.block_size = 250;
  ExpectStreamedEqual(x, given, "pareto ns, given 0.975");
  // A bounded (uniform) tail: the PWM fallback with weights.
  std::vector<double> flat(100'000);
  for (auto& v : flat) v = std::round(5000 + 55'000 * u());
  EvtOptions o;
  o.bootstrap = 10;
  ExpectStreamedEqual(flat, o, "uniform ns");
  const EvtReport r = EstimateWorstCase(flat, o);
  bool pwm = false;
  for (const auto& d : r.pot.diagnostics) pwm |= d.fit.method == GpdMethod::kPwm;
  EXPECT_TRUE(pwm) << "the fixture no longer reaches the weighted PWM fit";
}

TEST(EvtStreamingTest, APassErrorOrAChangedSeriesIsTheError) {
  std::vector<double> x = Exponential(3);
  x.resize(10'000);
  int calls = 0;
  const SeriesPass failing = [&](const std::function<void(double)>& sink) -> Status {
    if (++calls == 2) return Failure("cannot read /nowhere/samples.bin");
    for (const double v : x) sink(v);
    return Status::Ok();
  };
  const auto a = EstimateWorstCase(failing, TestOptions());
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().message, "cannot read /nowhere/samples.bin");
  calls = 0;
  const SeriesPass growing = [&](const std::function<void(double)>& sink) -> Status {
    for (const double v : x) sink(v);
    if (++calls == 2) sink(1.0);
    return Status::Ok();
  };
  const auto b = EstimateWorstCase(growing, TestOptions());
  ASSERT_FALSE(b);
  EXPECT_TRUE(b.error().message.find("changed between two passes (10000 samples, then 10001)") !=
              std::string::npos)
      << b.error().message;
}

TEST(EvtStreamingTest, LargeBootstrapResamplesAreCountedPerValueAndSaidSo) {
  // 2.2 M whole-ns samples at the 0.5 quantile: about 1.1 M exceedances, above the 2^20 a
  // resample holds exactly.
  Uniform u(91);
  std::vector<double> x(2'200'000);
  for (auto& v : x) v = std::round(20'000 - 10'000 * std::log(u()));
  EvtOptions o;
  o.threshold_quantile = 0.5;
  o.bootstrap = 4;
  o.probabilities = {1e-6, 1e-7};
  const EvtReport r = ExpectStreamedEqual(x, o, "1.1 M exceedances");
  ASSERT_TRUE(r.pot_ok);
  ASSERT_GT(r.pot.exceedances, size_t{1} << 20);
  bool said = false;
  for (const auto& w : r.warnings) said |= Contains(w, "drawn in whole nanoseconds");
  EXPECT_TRUE(said);
  EXPECT_EQ(r.pot.bootstrap_failures, 0);
  for (const auto& l : r.pot.raw_levels) {
    // An exponential tail (mean 10 us): the interval holds the estimate and the truth.
    EXPECT_LT(l.ci_low_ns, l.estimate_ns);
    EXPECT_GT(l.ci_high_ns, l.estimate_ns);
    EXPECT_NEAR(l.estimate_ns, 20'000 + 10'000 * std::log(1 / l.probability), 0.05 * l.estimate_ns);
  }
  // Below the limit nothing is said.
  x.resize(100'000);
  for (const auto& w : EstimateWorstCase(x, o).warnings) {
    EXPECT_FALSE(Contains(w, "whole nanoseconds")) << w;
  }
}

}  // namespace
}  // namespace rtpulse::stats
