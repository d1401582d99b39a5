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

/// The regularized incomplete beta I_x(a, b), by its continued fraction (modified Lentz),
/// on the side where it converges fast; `y` = 1 - x, given by the caller so that neither is
/// taken from the other by a subtraction that loses digits.
double InflationIncompleteBeta(double a, double b, double x, double y) {
  if (x <= 0) return 0;
  if (y <= 0) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - InflationIncompleteBeta(b, a, y, x);
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log(y);
  constexpr double kTiny = 1e-300;
  double c = 1;
  double d = 1 - (a + b) * x / (a + 1);
  d = 1 / (std::abs(d) < kTiny ? kTiny : d);
  double f = d;
  for (int m = 1; m <= 500; ++m) {
    const double md = m;
    for (int step = 0; step < 2; ++step) {
      const double num = step == 0
                             ? md * (b - md) * x / ((a + 2 * md - 1) * (a + 2 * md))
                             : -(a + md) * (a + b + md) * x / ((a + 2 * md) * (a + 2 * md + 1));
      d = 1 + num * d;
      d = 1 / (std::abs(d) < kTiny ? kTiny : d);
      c = 1 + num / c;
      if (std::abs(c) < kTiny) c = kTiny;
      f *= c * d;
    }
    if (std::abs(c * d - 1) < 1e-15) break;
  }
  return std::exp(log_front) * f / a;
}

/// P(T <= t) for Student's t with `df` degrees of freedom: P(|T| > |t|) = I_x(df/2, 1/2) with
/// x = df / (df + t^2).
double InflationStudentTCdf(double t, double df) {
  const double x = df / (df + t * t);
  const double y = t * t / (df + t * t);
  const double tail = 0.5 * InflationIncompleteBeta(df / 2, 0.5, x, y);
  return t >= 0 ? 1 - tail : tail;
}

double InflationMean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

/// Sample variance (divisor n - 1).
double InflationVariance(const std::vector<double>& v, double mean) {
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return ss / static_cast<double>(v.size() - 1);
}

Status CheckRepetitionSide(const std::vector<double>& medians, const char* side) {
  if (medians.size() < 2) {
    return UsageError(fmt::format(
        "the {} has {} measured repetition(s); the interval over repetitions needs at least 2 "
        "(give --repetitions 5)",
        side, medians.size()));
  }
  for (size_t k = 0; k < medians.size(); ++k) {
    if (!(medians[k] > 0)) {
      return UsageError(fmt::format(
          "the {}'s repetition {} has the median execution time {} ns; it must be positive", side,
          k + 1, medians[k]));
    }
  }
  return Status::Ok();
}

}  // namespace

double StudentTQuantile(double p, double df) {
  // Bisection on the CDF, bracketed from the normal quantile outwards: monotone and exact to
  // the CDF's accuracy, and called a few times per report.
  const double z = InflationNormalQuantile(p);
  double lo = std::min(z, 0.0) - 1;
  double hi = std::max(z, 0.0) + 1;
  while (InflationStudentTCdf(lo, df) > p) lo *= 2;
  while (InflationStudentTCdf(hi, df) < p) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-13 * std::max(1.0, std::abs(lo)); ++i) {
    const double mid = (lo + hi) / 2;
    (InflationStudentTCdf(mid, df) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

Expected<Inflation> RepetitionInflation(const std::vector<double>& base_medians_ns,
                                        const std::vector<double>& cond_medians_ns,
                                        double confidence) {
  if (!(confidence > 0 && confidence < 1)) {
    return UsageError(fmt::format(
        "confidence {} is not a probability strictly between 0 and 1; give e.g. 0.95", confidence));
  }
  if (Status s = CheckRepetitionSide(base_medians_ns, "baseline"); !s) return s.error();
  if (Status s = CheckRepetitionSide(cond_medians_ns, "condition"); !s) return s.error();
  auto logs = [](const std::vector<double>& v) {
    std::vector<double> out;
    out.reserve(v.size());
    for (double x : v) out.push_back(std::log(x));
    return out;
  };
  const std::vector<double> base = logs(base_medians_ns);
  const std::vector<double> cond = logs(cond_medians_ns);
  const double nb = static_cast<double>(base.size());
  const double nc = static_cast<double>(cond.size());
  const double mb = InflationMean(base);
  const double mc = InflationMean(cond);
  const double vb = InflationVariance(base, mb) / nb;
  const double vc = InflationVariance(cond, mc) / nc;
  const double se = std::sqrt(vb + vc);
  Inflation out;
  out.base_median_ns = std::exp(mb);
  out.cond_median_ns = std::exp(mc);
  out.pct = 100 * (std::exp(mc - mb) - 1);
  out.confidence = confidence;
  out.base_n = base.size();
  out.cond_n = cond.size();
  if (se > 0) {
    // Welch-Satterthwaite: the sides' repetitions may vary by different amounts.
    out.df = (vb + vc) * (vb + vc) / (vb * vb / (nb - 1) + vc * vc / (nc - 1));
    const double t = StudentTQuantile(1 - (1 - confidence) / 2, out.df);
    out.ci_low_pct = 100 * (std::exp(mc - mb - t * se) - 1);
    out.ci_high_pct = 100 * (std::exp(mc - mb + t * se) - 1);
  } else {
    // Every repetition alike on both sides: nothing varies, the interval is the point.
    out.df = nb + nc - 2;
    out.ci_low_pct = out.pct;
    out.ci_high_pct = out.pct;
  }
  return out;
}

std::string FormatInflation(const Inflation& inflation) {
  return fmt::format("{:+.1f} % [{:.1f}, {:.1f}]", inflation.pct, inflation.ci_low_pct,
                     inflation.ci_high_pct);
}

}  // namespace rtpulse::stats
