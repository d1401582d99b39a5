#include "stats/inflation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace rtpulse::stats {
namespace {

/// Phi^-1(p) for 0 < p < 1: Acklam's rational approximation, refined by one Halley step on
/// erfc (relative error below 1e-15).
double InflationNormalQuantile(double p) {
  static constexpr double kA[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                  -2.759285104469687e+02, 1.383577518672690e+02,
                                  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double kB[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                  -1.556989798598866e+02, 6.680131188771972e+01,
                                  -1.328068155288572e+01};
  static constexpr double kC[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                  -2.400758277161838e+00, -2.549732539343734e+00,
                                  4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double kD[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                  2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double kLow = 0.02425;
  double x = 0;
  if (p < kLow) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((kC[0] * q + kC[1]) * q + kC[2]) * q + kC[3]) * q + kC[4]) * q + kC[5]) /
        ((((kD[0] * q + kD[1]) * q + kD[2]) * q + kD[3]) * q + 1);
  } else if (p <= 1 - kLow) {
    const double q = p - 0.5;
    const double r = q * q;
    x = (((((kA[0] * r + kA[1]) * r + kA[2]) * r + kA[3]) * r + kA[4]) * r + kA[5]) * q /
        (((((kB[0] * r + kB[1]) * r + kB[2]) * r + kB[3]) * r + kB[4]) * r + 1);
  } else {
    const double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((kC[0] * q + kC[1]) * q + kC[2]) * q + kC[3]) * q + kC[4]) * q + kC[5]) /
        ((((kD[0] * q + kD[1]) * q + kD[2]) * q + kD[3]) * q + 1);
  }
  const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
  const double u = e * std::sqrt(2 * M_PI) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

/// P(Binomial(n, 1/2) <= j), summed in log space so that n in the tens of thousands does not
/// underflow 2^-n.
double InflationBinomialHalfCdf(size_t n, size_t j) {
  const double log_half_n = static_cast<double>(n) * std::log(0.5);
  const double log_n_fact = std::lgamma(static_cast<double>(n) + 1);
  double sum = 0;
  for (size_t i = 0; i <= j && i <= n; ++i) {
    const double log_term = log_n_fact - std::lgamma(static_cast<double>(i) + 1) -
                            std::lgamma(static_cast<double>(n - i) + 1) + log_half_n;
    sum += std::exp(log_term);
  }
  return std::min(1.0, sum);
}

struct InflationLogMedianEstimate {
  double median = 0;
  double se_log = 0;  ///< Standard error of ln(median).
};

/// The median and the order-statistic standard error of its logarithm (Price & Bonett 2002):
/// a = round(n/2 - sqrt(n)) (at least 1), se = (ln y(n-a+1) - ln y(a)) / (2 z0) with
/// z0 = Phi^-1(1 - P(Binomial(n, 1/2) <= a - 1)).
InflationLogMedianEstimate InflationLogMedian(std::vector<int64_t> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  InflationLogMedianEstimate out;
  out.median =
      n % 2 == 1
          ? static_cast<double>(values[n / 2])
          : (static_cast<double>(values[n / 2 - 1]) + static_cast<double>(values[n / 2])) / 2.0;
  const double nd = static_cast<double>(n);
  const auto a = static_cast<size_t>(std::max(1.0, std::round(nd / 2 - std::sqrt(nd))));
  const double low = std::log(static_cast<double>(values[a - 1]));
  const double high = std::log(static_cast<double>(values[n - a]));
  const double z0 = InflationNormalQuantile(1 - InflationBinomialHalfCdf(n, a - 1));
  out.se_log = (high - low) / (2 * z0);
  return out;
}

Status CheckInflationSide(const std::vector<int64_t>& values, const char* side) {
  if (values.size() < 10) {
    return UsageError(fmt::format(
        "the {} has {} execution times; the inflation interval needs at least 10 (run more "
        "jobs or repetitions)",
        side, values.size()));
  }
  const auto bad = std::find_if(values.begin(), values.end(), [](int64_t v) { return v <= 0; });
  if (bad != values.end()) {
    return UsageError(fmt::format(
        "the {} holds the execution time {} ns (job {}); execution times must be positive (a "
        "clock or recording fault)",
        side, *bad, bad - values.begin()));
  }
  return Status::Ok();
}

}  // namespace

Expected<Inflation> ExecInflation(const std::vector<int64_t>& base_ns,
                                  const std::vector<int64_t>& cond_ns, double confidence) {
  if (!(confidence > 0 && confidence < 1)) {
    return UsageError(fmt::format(
        "confidence {} is not a probability strictly between 0 and 1; give e.g. 0.95", confidence));
  }
  if (Status s = CheckInflationSide(base_ns, "baseline"); !s) return s.error();
  if (Status s = CheckInflationSide(cond_ns, "condition"); !s) return s.error();
  const InflationLogMedianEstimate base = InflationLogMedian(base_ns);
  const InflationLogMedianEstimate cond = InflationLogMedian(cond_ns);
  const double z = InflationNormalQuantile(1 - (1 - confidence) / 2);
  const double log_ratio = std::log(cond.median) - std::log(base.median);
  const double se = std::sqrt(base.se_log * base.se_log + cond.se_log * cond.se_log);
  Inflation out;
  out.base_median_ns = base.median;
  out.cond_median_ns = cond.median;
  out.pct = 100 * (cond.median / base.median - 1);
  out.ci_low_pct = 100 * (std::exp(log_ratio - z * se) - 1);
  out.ci_high_pct = 100 * (std::exp(log_ratio + z * se) - 1);
  out.confidence = confidence;
  out.base_n = base_ns.size();
  out.cond_n = cond_ns.size();
  return out;
}

std::string FormatInflation(const Inflation& inflation) {
  return fmt::format("{:+.1f} % [{:.1f}, {:.1f}]", inflation.pct, inflation.ci_low_pct,
                     inflation.ci_high_pct);
}

}  // namespace rtpulse::stats
