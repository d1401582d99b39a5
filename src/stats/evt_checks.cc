// The independence and stationarity checks (stats/evt_checks.h) and the report step that runs
// them on a series' block maxima and exceedances.
#include "stats/evt_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/float_compare.h"
#include "stats/evt_internal.h"

namespace rtpulse::stats {

using evt_internal::D;
using evt_internal::kNaN;
using evt_internal::Mean;
using evt_internal::PercentileOf;

namespace {

void Judge(EvtCheck& c, double alpha) {
  if (c.verdict == CheckVerdict::kSkipped) return;
  c.verdict = c.p_value >= alpha ? CheckVerdict::kPass : CheckVerdict::kWarn;
}

/// First half against second half: exceedance rates over the POT threshold (two-proportion
/// z-test, variance inflated by 1/extremal index because exceedances come in clusters).
EvtCheck HalvesCheck(const evt_internal::ExceedanceTimes& times, double extremal_index) {
  EvtCheck c;
  c.name = "stationarity";
  c.applied_to = "exceedance rate over the POT threshold, first half vs second half";
  const double a = times.first_half;
  const double b = times.second_half;
  const double n = D(times.half);
  const double pooled = (a + b) / (2 * n);
  if (times.half == 0 || a + b < 10) {
    c.verdict = CheckVerdict::kSkipped;
    c.p_value = kNaN;
    c.detail = "fewer than 10 exceedances";
    return c;
  }
  const double inflation = std::isfinite(extremal_index) && extremal_index > 0
                               ? 1.0 / std::min(1.0, extremal_index)
                               : 1.0;
  const double se = std::sqrt(pooled * (1 - pooled) * (2 / n) * inflation);
  c.statistic = (a / n - b / n) / se;
  c.p_value = std::erfc(std::fabs(c.statistic) / std::sqrt(2.0));
  c.detail = fmt::format(
      "{} exceedances in the first half, {} in the second (z, clusters "
      "accounted for)",
      a, b);
  return c;
}

}  // namespace

double RegularizedGammaP(double a, double x) {
  if (!(a > 0) || std::isnan(x)) return kNaN;
  if (x <= 0) return 0;
  if (std::isinf(x)) return 1;
  const double log_prefix = a * std::log(x) - x - std::lgamma(a);
  if (x < a + 1) {
    // Series: P = x^a e^-x / Gamma(a+1) * sum x^n / ((a+1)...(a+n)).
    double term = 1.0 / a;
    double sum = term;
    for (int n = 1; n < 10000; ++n) {
      term *= x / (a + n);
      sum += term;
      if (std::fabs(term) < std::fabs(sum) * 1e-16) break;
    }
    return std::min(1.0, sum * std::exp(log_prefix));
  }
  // Continued fraction for Q (modified Lentz), P = 1 - Q.
  constexpr double kTiny = 1e-300;
  double b = x + 1 - a;
  double c = 1 / kTiny;
  double d = 1 / b;
  double h = d;
  for (int i = 1; i < 10000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < 1e-16) break;
  }
  return std::max(0.0, 1.0 - std::exp(log_prefix) * h);
}

double ChiSquarePValue(double x, double dof) {
  if (!(x > 0)) return 1.0;
  return 1.0 - RegularizedGammaP(dof / 2, x / 2);
}

EvtCheck LjungBox(const std::vector<double>& series, int lags) {
  EvtCheck c;
  c.name = "ljung-box";
  c.applied_to = "series";
  const size_t n = series.size();
  if (lags < 1 || n < 8 || static_cast<size_t>(lags) >= n) {
    c.verdict = CheckVerdict::kSkipped;
    c.p_value = kNaN;
    c.detail = fmt::format("needs at least 8 values and a lag below that ({} values)", n);
    return c;
  }
  const double mean = Mean(series);
  double denom = 0;
  for (const double v : series) denom += (v - mean) * (v - mean);
  if (!(denom > 0)) {
    c.verdict = CheckVerdict::kSkipped;
    c.p_value = kNaN;
    c.detail = "the series is constant";
    return c;
  }
  double q = 0;
  for (int k = 1; k <= lags; ++k) {
    const auto lag = static_cast<size_t>(k);
    double num = 0;
    for (size_t t = lag; t < n; ++t) num += (series[t] - mean) * (series[t - lag] - mean);
    const double rk = num / denom;
    q += rk * rk / D(n - lag);
  }
  c.statistic = D(n) * D(n + 2) * q;
  c.p_value = ChiSquarePValue(c.statistic, lags);
  c.verdict = CheckVerdict::kPass;
  c.detail = fmt::format("Q over lags 1..{}, chi-square({}) p-value", lags, lags);
  return c;
}

EvtCheck RunsTest(const std::vector<double>& series) {
  EvtCheck c;
  c.name = "runs";
  c.applied_to = "series";
  const double median = PercentileOf(series, 0.5);
  double n1 = 0;
  double n2 = 0;
  double runs = 0;
  int last = 0;
  for (const double v : series) {
    if (ExactlyEqual(v, median)) continue;  // ties with the median carry no sign
    const int side = v > median ? 1 : -1;
    (side > 0 ? n1 : n2) += 1;
    if (side != last) runs += 1;
    last = side;
  }
  if (n1 < 5 || n2 < 5) {
    c.verdict = CheckVerdict::kSkipped;
    c.p_value = kNaN;
    c.detail = "needs at least 5 values on each side of the median";
    return c;
  }
  const double n = n1 + n2;
  const double mean = 2 * n1 * n2 / n + 1;
  const double var = 2 * n1 * n2 * (2 * n1 * n2 - n) / (n * n * (n - 1));
  c.statistic = (runs - mean) / std::sqrt(var);
  c.p_value = std::erfc(std::fabs(c.statistic) / std::sqrt(2.0));
  c.verdict = CheckVerdict::kPass;
  c.detail =
      fmt::format("{} runs above/below the median, {:.1f} expected (z, two-sided)", runs, mean);
  return c;
}

double ExtremalIndex(const std::vector<double>& series, double threshold) {
  evt_internal::ExceedanceTimes times;
  times.threshold = threshold;
  for (size_t i = 0; i < series.size(); ++i) times.Add(i, series[i]);
  return evt_internal::ExtremalIndexOf(times);
}

namespace evt_internal {

double ExtremalIndexOf(const ExceedanceTimes& t) {
  if (t.gaps < 2) return kNaN;
  const double n = t.gaps;
  double theta = 0;
  if (t.max_gap <= 2) {
    theta = 2 * t.sum_gap * t.sum_gap / (n * t.sum_gap2);
  } else {
    theta = t.sum_shifted2 > 0 ? 2 * t.sum_shifted * t.sum_shifted / (n * t.sum_shifted2) : 1.0;
  }
  return std::min(1.0, theta);
}

void AddChecks(const SeriesData& x, const EvtOptions& o, EvtReport& r) {
  const auto& maxima = r.bm.maxima_ns;
  const int lags = static_cast<int>(std::min<size_t>(10, maxima.size() / 5));
  EvtCheck lb = LjungBox(maxima, lags);
  lb.applied_to = "block maxima";
  Judge(lb, o.alpha);
  if (lb.verdict == CheckVerdict::kWarn) {
    r.warnings.push_back(fmt::format(
        "block maxima are autocorrelated (Ljung-Box p = {:.3g}): maxima are not independent, "
        "intervals are too narrow; try a larger --block",
        lb.p_value));
  }
  r.checks.push_back(lb);

  EvtCheck runs = RunsTest(maxima);
  runs.applied_to = "block maxima";
  Judge(runs, o.alpha);
  if (runs.verdict == CheckVerdict::kWarn) {
    r.warnings.push_back(fmt::format(
        "block maxima are not random around their median (runs test p = {:.3g}): a trend or "
        "dependence between blocks",
        runs.p_value));
  }
  r.checks.push_back(runs);

  EvtCheck ei;
  ei.name = "extremal-index";
  ei.applied_to = "exceedances over the POT threshold";
  const ExceedanceTimes times = x.Times(r.pot.threshold_ns);
  ei.statistic = r.pot.exceedances > 0 ? ExtremalIndexOf(times) : kNaN;
  ei.p_value = kNaN;
  if (!std::isfinite(ei.statistic)) {
    ei.verdict = CheckVerdict::kSkipped;
    ei.detail = "fewer than 3 exceedances";
  } else {
    ei.verdict = ei.statistic >= 0.7 ? CheckVerdict::kPass : CheckVerdict::kWarn;
    ei.detail = fmt::format(
        "Ferro-Segers intervals estimate; exceedances come in clusters of about {:.2g} "
        "(warn below 0.7)",
        1.0 / ei.statistic);
    if (ei.verdict == CheckVerdict::kWarn) {
      r.warnings.push_back(
          fmt::format("exceedances cluster (extremal index {:.2f}): one disturbance delays several "
                      "activations in a row; the per-activation estimates count each of them",
                      ei.statistic));
    }
  }
  r.checks.push_back(ei);

  EvtCheck halves = HalvesCheck(times, ei.statistic);
  Judge(halves, o.alpha);
  if (halves.verdict == CheckVerdict::kWarn) {
    r.warnings.push_back(fmt::format(
        "the tail is not stationary: the exceedance rate differs between the first and second "
        "half (p = {:.3g}); the run may not represent steady state",
        halves.p_value));
  }
  r.checks.push_back(halves);
}

}  // namespace evt_internal

}  // namespace rtpulse::stats
