#include "stats/evt.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <random>

namespace rtpulse::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
/// Below this many exceedances (or blocks) a fit is not attempted.
constexpr size_t kMinFit = 10;
/// Below this many exceedances the tail estimate is flagged as resting on too few points.
constexpr uint64_t kFewExceedances = 50;
constexpr size_t kFewBlocks = 20;
/// |xi| below this is treated as exactly 0 (exponential / Gumbel) in densities and quantiles.
constexpr double kXiZero = 1e-9;

double D(size_t n) {
  return static_cast<double>(n);
}

/// A portable generator: mt19937_64 bits mapped by hand, so a seed gives the same numbers with
/// every standard library (std::*_distribution are implementation-defined).
class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  /// Uniform in (0, 1), never 0 or 1.
  double Uniform() { return (static_cast<double>(engine_() >> 11) + 0.5) * 0x1.0p-53; }
  double Normal() {
    const double u1 = Uniform();
    const double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }

 private:
  std::mt19937_64 engine_;
};

double Mean(const std::vector<double>& v) {
  if (v.empty()) return kNaN;
  return std::accumulate(v.begin(), v.end(), 0.0) / D(v.size());
}

/// Empirical percentile (linear interpolation) of an unsorted copy.
double PercentileOf(std::vector<double> v, double q) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const double pos = q * D(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - D(lo)) * (v[hi] - v[lo]);
}

// ---- Generalised Pareto ----------------------------------------------------------------

double GpdLogLikelihood(const std::vector<double>& y, double xi, double sigma) {
  if (!(sigma > 0)) return -kInf;
  const double n = D(y.size());
  double sum = 0;
  if (std::fabs(xi) < kXiZero) {
    for (const double v : y) sum += v;
    return -n * std::log(sigma) - sum / sigma;
  }
  for (const double v : y) {
    const double t = xi * v / sigma;
    if (!(t > -1)) return -kInf;
    sum += std::log1p(t);
  }
  return -n * std::log(sigma) - (1.0 / xi + 1.0) * sum;
}

/// Profile log-likelihood over theta = xi/sigma (Grimshaw 1993): for a given theta the MLE
/// is xi = mean(log(1 + theta*y)), sigma = xi/theta, which leaves one dimension to search.
/// log1p keeps xi/theta accurate as theta -> 0, where the model becomes exponential.
struct Profile {
  double log_likelihood;
  double xi;
  double sigma;
};

Profile ProfileAt(const std::vector<double>& y, double theta, double mean_y) {
  const double n = D(y.size());
  if (theta == 0) return {-n * std::log(mean_y) - n, 0.0, mean_y};
  double sum = 0;
  for (const double v : y) {
    const double t = theta * v;
    if (!(t > -1)) return {-kInf, kNaN, kNaN};
    sum += std::log1p(t);
  }
  const double xi = sum / n;
  const double sigma = xi / theta;
  if (!(sigma > 0) || !std::isfinite(sigma)) return {-kInf, kNaN, kNaN};
  return {-n * std::log(sigma) - n - sum, xi, sigma};
}

/// Hosking & Wallis (1987) probability-weighted moments, valid for xi < 1.
GpdFit PwmGpd(std::vector<double> y) {
  GpdFit fit;
  fit.method = "pwm";
  std::sort(y.begin(), y.end());
  const double n = D(y.size());
  double a0 = 0;
  double a1 = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const double p = (D(i) + 1.0 - 0.35) / n;
    a0 += y[i];
    a1 += (1.0 - p) * y[i];
  }
  a0 /= n;
  a1 /= n;
  const double d = a0 - 2.0 * a1;
  if (!(d > 0) || !(a0 > 0)) return fit;
  fit.xi = -(a0 / d - 2.0);
  fit.sigma_ns = 2.0 * a0 * a1 / d;
  fit.log_likelihood = GpdLogLikelihood(y, fit.xi, fit.sigma_ns);
  fit.ok = fit.sigma_ns > 0 && std::isfinite(fit.log_likelihood);
  fit.xi_se = (1.0 + fit.xi) / std::sqrt(n);
  return fit;
}

/// Golden-section search for the maximum of f on [a, b].
double GoldenMax(const std::function<double(double)>& f, double a, double b, int iterations) {
  const double r = (std::sqrt(5.0) - 1.0) / 2.0;
  double c = b - r * (b - a);
  double d = a + r * (b - a);
  double fc = f(c);
  double fd = f(d);
  for (int i = 0; i < iterations; ++i) {
    if (fc >= fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - r * (b - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + r * (b - a);
      fd = f(d);
    }
  }
  return fc >= fd ? c : d;
}

// ---- GEV -------------------------------------------------------------------------------

double GevLogLikelihood(const std::vector<double>& x, double mu, double sigma, double xi) {
  if (!(sigma > 0)) return -kInf;
  const double log_sigma = std::log(sigma);
  double ll = 0;
  for (const double v : x) {
    const double z = (v - mu) / sigma;
    if (std::fabs(xi) < kXiZero) {
      ll += -log_sigma - z - std::exp(-z);
      continue;
    }
    const double t = 1.0 + xi * z;
    if (!(t > 0)) return -kInf;
    const double lt = std::log(t);
    ll += -log_sigma - (1.0 / xi + 1.0) * lt - std::exp(-lt / xi);
  }
  return ll;
}

/// Nelder-Mead minimiser (standard coefficients) over a few dimensions.
template <size_t N>
std::array<double, N> NelderMead(const std::function<double(const std::array<double, N>&)>& f,
                                 std::array<double, N> start, const std::array<double, N>& step,
                                 int max_iterations) {
  std::array<std::array<double, N>, N + 1> p{};
  std::array<double, N + 1> v{};
  p[0] = start;
  for (size_t i = 0; i < N; ++i) {
    p[i + 1] = start;
    p[i + 1][i] += step[i];
  }
  for (size_t i = 0; i <= N; ++i) v[i] = f(p[i]);
  for (int it = 0; it < max_iterations; ++it) {
    std::array<size_t, N + 1> order{};
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
    const size_t best = order[0];
    const size_t worst = order[N];
    const size_t second = order[N - 1];
    if (std::fabs(v[worst] - v[best]) <= 1e-12 * (std::fabs(v[best]) + 1e-12)) break;
    std::array<double, N> centroid{};
    for (size_t i = 0; i <= N; ++i) {
      if (i == worst) continue;
      for (size_t k = 0; k < N; ++k) centroid[k] += p[i][k] / D(N);
    }
    auto along = [&](double t) {
      std::array<double, N> q{};
      for (size_t k = 0; k < N; ++k) q[k] = centroid[k] + t * (p[worst][k] - centroid[k]);
      return q;
    };
    const auto reflected = along(-1.0);
    const double fr = f(reflected);
    if (fr < v[best]) {
      const auto expanded = along(-2.0);
      const double fe = f(expanded);
      if (fe < fr) {
        p[worst] = expanded;
        v[worst] = fe;
      } else {
        p[worst] = reflected;
        v[worst] = fr;
      }
    } else if (fr < v[second]) {
      p[worst] = reflected;
      v[worst] = fr;
    } else {
      const auto contracted = fr < v[worst] ? along(-0.5) : along(0.5);
      const double fc = f(contracted);
      if (fc < std::min(fr, v[worst])) {
        p[worst] = contracted;
        v[worst] = fc;
      } else {
        for (size_t i = 0; i <= N; ++i) {
          if (i == best) continue;
          for (size_t k = 0; k < N; ++k) p[i][k] = p[best][k] + 0.5 * (p[i][k] - p[best][k]);
          v[i] = f(p[i]);
        }
      }
    }
  }
  size_t best = 0;
  for (size_t i = 1; i <= N; ++i) {
    if (v[i] < v[best]) best = i;
  }
  return p[best];
}

GevFit FitGevFrom(const std::vector<double>& x, const std::vector<std::array<double, 3>>& starts) {
  GevFit fit;
  fit.method = "mle";
  const std::function<double(const std::array<double, 3>&)> nll =
      [&x](const std::array<double, 3>& q) {
        const double ll = GevLogLikelihood(x, q[0], std::exp(q[1]), q[2]);
        return std::isfinite(ll) ? -ll : 1e300;
      };
  double best = kInf;
  for (const auto& s : starts) {
    const double scale = std::exp(s[1]);
    const std::array<double, 3> step = {0.3 * scale, 0.2, 0.1};
    auto q = NelderMead<3>(nll, s, step, 600);
    q = NelderMead<3>(nll, q, step, 600);  // restart: Nelder-Mead can stall on a ridge
    const double v = nll(q);
    if (v < best) {
      best = v;
      fit.mu_ns = q[0];
      fit.sigma_ns = std::exp(q[1]);
      fit.xi = q[2];
    }
  }
  fit.log_likelihood = -best;
  fit.ok = best < 1e299 && std::isfinite(fit.mu_ns) && fit.sigma_ns > 0;
  return fit;
}

// ---- Sampling for the parametric bootstrap ------------------------------------------------

double SampleGpd(Rng& rng, double xi, double sigma) {
  const double u = rng.Uniform();
  if (std::fabs(xi) < kXiZero) return -sigma * std::log(u);
  return sigma * std::expm1(-xi * std::log(u)) / xi;
}

double SampleGev(Rng& rng, const GevFit& g) {
  const double e = -std::log(rng.Uniform());  // standard exponential
  if (std::fabs(g.xi) < kXiZero) return g.mu_ns - g.sigma_ns * std::log(e);
  return g.mu_ns + g.sigma_ns * std::expm1(-g.xi * std::log(e)) / g.xi;
}

/// Percentile confidence interval from bootstrap replicates.
std::pair<double, double> Interval(std::vector<double> values, double confidence) {
  values.erase(
      std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
      values.end());
  if (values.size() < 2) return {kNaN, kNaN};
  const double tail = (1.0 - confidence) / 2.0;
  return {PercentileOf(values, tail), PercentileOf(std::move(values), 1.0 - tail)};
}

// ---- Peaks over threshold ---------------------------------------------------------------

std::vector<double> Excesses(const std::vector<double>& x, double u) {
  std::vector<double> y;
  for (const double v : x) {
    if (v > u) y.push_back(v - u);
  }
  return y;
}

/// Threshold at quantile q of sorted data: an order statistic, so exceedances are x > u.
double ThresholdAt(const std::vector<double>& sorted, double q) {
  const auto idx = static_cast<size_t>(std::floor(q * D(sorted.size() - 1)));
  return sorted[std::min(idx, sorted.size() - 1)];
}

ThresholdPoint Diagnose(const std::vector<double>& x, const std::vector<double>& sorted, double q) {
  ThresholdPoint point;
  point.quantile = q;
  point.threshold_ns = ThresholdAt(sorted, q);
  const auto y = Excesses(x, point.threshold_ns);
  point.exceedances = y.size();
  point.mean_excess_ns = Mean(y);
  if (y.size() >= kMinFit) point.fit = FitGpd(y);
  point.modified_scale_ns =
      point.fit.ok ? point.fit.sigma_ns - point.fit.xi * point.threshold_ns : kNaN;
  return point;
}

/// The lowest grid threshold above which every xi estimate lies within 1.96 standard errors
/// (of the higher threshold's estimate): the parameter-stability rule of Coles (2001, 4.3.4).
std::optional<size_t> StableThreshold(const std::vector<ThresholdPoint>& grid) {
  for (size_t i = 0; i < grid.size(); ++i) {
    if (!grid[i].fit.ok || grid[i].exceedances < kFewExceedances) continue;
    bool stable = true;
    for (size_t j = i + 1; j < grid.size() && stable; ++j) {
      if (!grid[j].fit.ok) continue;
      stable = std::fabs(grid[j].fit.xi - grid[i].fit.xi) <= 1.96 * grid[j].fit.xi_se;
    }
    if (stable) return i;
  }
  return std::nullopt;
}

void ChooseThreshold(const std::vector<double>& x, const std::vector<double>& sorted,
                     const EvtOptions& o, EvtReport& r) {
  PotResult& pot = r.pot;
  for (const double q : o.threshold_grid) pot.diagnostics.push_back(Diagnose(x, sorted, q));
  if (o.threshold_quantile) {
    pot.threshold_auto = false;
    pot.threshold_quantile = *o.threshold_quantile;
    pot.threshold_reason = fmt::format("given (--threshold-quantile {})", *o.threshold_quantile);
    return;
  }
  if (const auto i = StableThreshold(pot.diagnostics)) {
    pot.threshold_quantile = pot.diagnostics[*i].quantile;
    pot.threshold_reason =
        "automatic: the lowest grid quantile above which every xi estimate lies within 1.96 "
        "standard errors of it (parameter stability)";
    return;
  }
  pot.threshold_quantile = 0.99;
  for (const auto& d : pot.diagnostics) {
    if (d.quantile <= 0.99 && d.exceedances >= kFewExceedances) pot.threshold_quantile = d.quantile;
  }
  pot.threshold_reason =
      fmt::format("automatic fallback: no stable threshold on the grid, used quantile {}",
                  pot.threshold_quantile);
  r.warnings.push_back(
      "POT: the shape estimate xi is not stable across thresholds (see the diagnostics); the "
      "tail may not be generalised Pareto at these levels, treat the POT estimates with care");
}

void BootstrapPot(const EvtOptions& o, uint64_t n, PotResult& pot) {
  const double zeta = pot.exceedance_rate;
  const size_t count = o.probabilities.size();
  std::vector<std::vector<double>> reps(count);
  Rng rng(o.seed);
  for (int b = 0; b < o.bootstrap; ++b) {
    // The number of exceedances varies too (binomial, normal approximation).
    const double nu =
        D(pot.exceedances) + std::sqrt(D(pot.exceedances) * (1 - zeta)) * rng.Normal();
    const auto m = static_cast<size_t>(std::max(D(kMinFit), std::round(nu)));
    std::vector<double> y(m);
    for (auto& v : y) v = SampleGpd(rng, pot.fit.xi, pot.fit.sigma_ns);
    const GpdFit fit = FitGpd(y);
    if (!fit.ok) {
      ++pot.bootstrap_failures;
      continue;
    }
    for (size_t k = 0; k < count; ++k) {
      reps[k].push_back(
          GpdQuantile(fit, pot.threshold_ns, D(m) / static_cast<double>(n), o.probabilities[k]));
    }
  }
  for (size_t k = 0; k < count; ++k) {
    std::tie(pot.levels[k].ci_low_ns, pot.levels[k].ci_high_ns) = Interval(reps[k], o.confidence);
  }
}

void PeaksOverThreshold(const std::vector<double>& x, const std::vector<double>& sorted,
                        const EvtOptions& o, EvtReport& r) {
  ChooseThreshold(x, sorted, o, r);
  PotResult& pot = r.pot;
  pot.threshold_ns = ThresholdAt(sorted, pot.threshold_quantile);
  const auto y = Excesses(x, pot.threshold_ns);
  pot.exceedances = y.size();
  pot.exceedance_rate = D(y.size()) / D(x.size());
  if (y.size() < kMinFit) {
    r.warnings.push_back(fmt::format(
        "POT: only {} exceedances over the threshold; no fit (needs at least {}). Measure "
        "longer or lower --threshold-quantile",
        y.size(), kMinFit));
    return;
  }
  if (pot.exceedances < kFewExceedances) {
    r.warnings.push_back(fmt::format(
        "POT: only {} exceedances (fewer than {}); the tail fit rests on too few points",
        pot.exceedances, kFewExceedances));
  }
  pot.fit = FitGpd(y);
  if (!pot.fit.ok) {
    r.warnings.push_back("POT: the generalised Pareto fit failed: " + pot.fit.note);
    return;
  }
  r.pot_ok = true;
  if (!pot.fit.note.empty()) r.warnings.push_back("POT: " + pot.fit.note);
  for (const double p : o.probabilities) {
    pot.levels.push_back(
        {p, GpdQuantile(pot.fit, pot.threshold_ns, pot.exceedance_rate, p), kNaN, kNaN});
  }
  if (o.bootstrap > 0) BootstrapPot(o, r.samples, pot);
}

// ---- Block maxima -----------------------------------------------------------------------

void BootstrapBm(const EvtOptions& o, BlockMaximaResult& bm) {
  const GevFit& model = bm.levels_model == "gumbel" ? bm.gumbel : bm.gev;
  const size_t count = o.probabilities.size();
  std::vector<std::vector<double>> reps(count);
  Rng rng(o.seed ^ 0x9e3779b97f4a7c15ULL);
  std::vector<double> sample(bm.blocks);
  for (int b = 0; b < o.bootstrap; ++b) {
    for (auto& v : sample) v = SampleGev(rng, model);
    GevFit fit;
    if (bm.levels_model == "gumbel") {
      fit = FitGumbel(sample);
    } else {
      fit = FitGevFrom(sample, {{model.mu_ns, std::log(model.sigma_ns), model.xi}});
    }
    if (!fit.ok) {
      ++bm.bootstrap_failures;
      continue;
    }
    for (size_t k = 0; k < count; ++k) {
      reps[k].push_back(GevQuantile(fit, bm.block_size, o.probabilities[k]));
    }
  }
  for (size_t k = 0; k < count; ++k) {
    std::tie(bm.levels[k].ci_low_ns, bm.levels[k].ci_high_ns) = Interval(reps[k], o.confidence);
  }
}

void BlockMaxima(const std::vector<double>& x, const EvtOptions& o, EvtReport& r) {
  BlockMaximaResult& bm = r.bm;
  bm.block_size = std::max<size_t>(1, o.block_size);
  bm.blocks = x.size() / bm.block_size;
  for (size_t b = 0; b < bm.blocks; ++b) {
    const auto first = x.begin() + static_cast<std::ptrdiff_t>(b * bm.block_size);
    bm.maxima_ns.push_back(
        *std::max_element(first, first + static_cast<std::ptrdiff_t>(bm.block_size)));
  }
  if (bm.blocks < kMinFit) {
    r.warnings.push_back(fmt::format(
        "block maxima: only {} blocks of {} samples; no fit (needs at least {}). Measure longer "
        "or use a smaller --block",
        bm.blocks, bm.block_size, kMinFit));
    return;
  }
  if (bm.blocks < kFewBlocks) {
    r.warnings.push_back(fmt::format(
        "block maxima: only {} blocks (fewer than {}); the GEV fit rests on too few maxima",
        bm.blocks, kFewBlocks));
  }
  bm.gumbel = FitGumbel(bm.maxima_ns);
  if (!bm.gumbel.ok) {
    r.warnings.push_back("block maxima: the maxima do not vary; no fit");
    return;
  }
  const double l = std::log(bm.gumbel.sigma_ns);
  bm.gev = FitGevFrom(
      bm.maxima_ns,
      {{bm.gumbel.mu_ns, l, 0.0}, {bm.gumbel.mu_ns, l, 0.2}, {bm.gumbel.mu_ns, l, -0.2}});
  if (!bm.gev.ok || bm.gev.log_likelihood < bm.gumbel.log_likelihood) {
    // The Gumbel is a GEV too: never report a GEV worse than it.
    bm.gev = bm.gumbel;
    bm.gev.method = "mle";
  }
  bm.lr_statistic = std::max(0.0, 2.0 * (bm.gev.log_likelihood - bm.gumbel.log_likelihood));
  bm.lr_p_value = ChiSquarePValue(bm.lr_statistic, 1);
  bm.gumbel_sufficient = bm.lr_p_value >= o.alpha;
  bm.levels_model = bm.gumbel_sufficient ? "gumbel" : "gev";
  const GevFit& model = bm.gumbel_sufficient ? bm.gumbel : bm.gev;
  r.bm_ok = true;
  for (const double p : o.probabilities) {
    bm.levels.push_back({p, GevQuantile(model, bm.block_size, p), kNaN, kNaN});
  }
  if (o.bootstrap > 0) BootstrapBm(o, bm);
}

// ---- Checks -----------------------------------------------------------------------------

void Judge(EvtCheck& c, double alpha) {
  if (c.verdict == "skipped") return;
  c.verdict = c.p_value >= alpha ? "pass" : "warn";
}

/// First half against second half: exceedance rates over the POT threshold (two-proportion
/// z-test, variance inflated by 1/extremal index because exceedances come in clusters).
EvtCheck HalvesCheck(const std::vector<double>& x, double u, double extremal_index) {
  EvtCheck c;
  c.name = "stationarity";
  c.applied_to = "exceedance rate over the POT threshold, first half vs second half";
  const size_t half = x.size() / 2;
  double a = 0;
  double b = 0;
  for (size_t i = 0; i < 2 * half; ++i) (i < half ? a : b) += x[i] > u ? 1.0 : 0.0;
  const double n = D(half);
  const double pooled = (a + b) / (2 * n);
  if (half == 0 || a + b < 10) {
    c.verdict = "skipped";
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

void Checks(const std::vector<double>& x, const EvtOptions& o, EvtReport& r) {
  const auto& maxima = r.bm.maxima_ns;
  const int lags = static_cast<int>(std::min<size_t>(10, maxima.size() / 5));
  EvtCheck lb = LjungBox(maxima, lags);
  lb.applied_to = "block maxima";
  Judge(lb, o.alpha);
  if (lb.verdict == "warn") {
    r.warnings.push_back(fmt::format(
        "block maxima are autocorrelated (Ljung-Box p = {:.3g}): maxima are not independent, "
        "intervals are too narrow; try a larger --block",
        lb.p_value));
  }
  r.checks.push_back(lb);

  EvtCheck runs = RunsTest(maxima);
  runs.applied_to = "block maxima";
  Judge(runs, o.alpha);
  if (runs.verdict == "warn") {
    r.warnings.push_back(fmt::format(
        "block maxima are not random around their median (runs test p = {:.3g}): a trend or "
        "dependence between blocks",
        runs.p_value));
  }
  r.checks.push_back(runs);

  EvtCheck ei;
  ei.name = "extremal-index";
  ei.applied_to = "exceedances over the POT threshold";
  ei.statistic = r.pot.exceedances > 0 ? ExtremalIndex(x, r.pot.threshold_ns) : kNaN;
  ei.p_value = kNaN;
  if (!std::isfinite(ei.statistic)) {
    ei.verdict = "skipped";
    ei.detail = "fewer than 3 exceedances";
  } else {
    ei.verdict = ei.statistic >= 0.7 ? "pass" : "warn";
    ei.detail = fmt::format(
        "Ferro-Segers intervals estimate; exceedances come in clusters of about {:.2g} "
        "(warn below 0.7)",
        1.0 / ei.statistic);
    if (ei.verdict == "warn") {
      r.warnings.push_back(
          fmt::format("exceedances cluster (extremal index {:.2f}): one disturbance delays several "
                      "activations in a row; the per-activation estimates count each of them",
                      ei.statistic));
    }
  }
  r.checks.push_back(ei);

  EvtCheck halves = HalvesCheck(x, r.pot.threshold_ns, ei.statistic);
  Judge(halves, o.alpha);
  if (halves.verdict == "warn") {
    r.warnings.push_back(fmt::format(
        "the tail is not stationary: the exceedance rate differs between the first and second "
        "half (p = {:.3g}); the run may not represent steady state",
        halves.p_value));
  }
  r.checks.push_back(halves);
}

void FitWarnings(EvtReport& r) {
  if (r.pot_ok) {
    const GpdFit& f = r.pot.fit;
    if (f.xi < 0) {
      r.warnings.push_back(fmt::format(
          "POT: negative shape (xi = {:.3f}): the fitted tail has an upper end point at {:.1f} us; "
          "a real system's latency may have no such bound",
          f.xi, (r.pot.threshold_ns - f.sigma_ns / f.xi) / 1e3));
    }
    if (f.xi_se > 0.25) {
      r.warnings.push_back(fmt::format(
          "POT: the shape is poorly determined (xi = {:.2f} +- {:.2f}); the estimates far out "
          "are unstable",
          f.xi, f.xi_se));
    }
    if (f.xi > 0.5) {
      r.warnings.push_back(
          fmt::format("POT: very heavy tail (xi = {:.2f}); extrapolations grow quickly with lower "
                      "probabilities",
                      f.xi));
    }
    if (r.pot.bootstrap_failures * 10 > r.options.bootstrap) {
      r.warnings.push_back(fmt::format("POT: {} of {} bootstrap refits failed",
                                       r.pot.bootstrap_failures, r.options.bootstrap));
    }
  }
  if (r.bm_ok) {
    if (!r.bm.gumbel_sufficient && r.bm.gev.xi < 0) {
      r.warnings.push_back(fmt::format(
          "block maxima: negative GEV shape (xi = {:.3f}): a bounded tail; a real system's "
          "latency may have no such bound",
          r.bm.gev.xi));
    }
    if (r.bm.bootstrap_failures * 10 > r.options.bootstrap) {
      r.warnings.push_back(fmt::format("block maxima: {} of {} bootstrap refits failed",
                                       r.bm.bootstrap_failures, r.options.bootstrap));
    }
  }
  if (r.pot_ok && r.bm_ok && !r.pot.levels.empty()) {
    const double a = r.pot.levels.back().estimate_ns;
    const double b = r.bm.levels.back().estimate_ns;
    if (a > 2 * b || b > 2 * a) {
      r.warnings.push_back(fmt::format(
          "the two methods disagree by more than a factor of 2 at p = {:.0e} ({:.1f} us vs "
          "{:.1f} us): the tail model is uncertain",
          r.pot.levels.back().probability, a / 1e3, b / 1e3));
    }
  }
}

// ---- The exceedance plot ----------------------------------------------------------------

double PotTail(const PotResult& pot, double x) {
  if (x < pot.threshold_ns) return kNaN;
  const double y = x - pot.threshold_ns;
  const GpdFit& f = pot.fit;
  if (std::fabs(f.xi) < kXiZero) return pot.exceedance_rate * std::exp(-y / f.sigma_ns);
  const double t = 1 + f.xi * y / f.sigma_ns;
  if (!(t > 0)) return kNaN;
  return pot.exceedance_rate * std::exp(-std::log(t) / f.xi);
}

double BmTail(const BlockMaximaResult& bm, double x) {
  const GevFit& g = bm.levels_model == "gumbel" ? bm.gumbel : bm.gev;
  const double z = (x - g.mu_ns) / g.sigma_ns;
  double log_g = 0;
  if (std::fabs(g.xi) < kXiZero) {
    log_g = -std::exp(-z);
  } else {
    const double t = 1 + g.xi * z;
    if (!(t > 0)) return g.xi > 0 ? 1.0 : kNaN;
    log_g = -std::exp(-std::log(t) / g.xi);
  }
  return -std::expm1(log_g / D(bm.block_size));
}

void BuildCurve(const std::vector<double>& sorted, EvtReport& r) {
  ExceedanceCurve& c = r.curve;
  const size_t n = sorted.size();
  // Every one of the top 200 points, then geometrically thinned down to the median.
  for (size_t rank = 1; rank <= n / 2;) {
    c.empirical_ns.push_back(sorted[n - rank]);
    c.empirical_probability.push_back(D(rank) / D(n + 1));
    rank = rank < 200 ? rank + 1 : std::max(rank + 1, static_cast<size_t>(D(rank) * 1.02));
  }
  if (!r.pot_ok && !r.bm_ok) return;
  double lo = r.pot_ok ? r.pot.threshold_ns : ThresholdAt(sorted, 0.9);
  double hi = r.max_ns;
  for (const auto& l : r.pot.levels) hi = std::max(hi, l.estimate_ns);
  for (const auto& l : r.bm.levels) hi = std::max(hi, l.estimate_ns);
  hi = lo + (hi - lo) * 1.05;
  constexpr int kPoints = 200;
  for (int i = 0; i <= kPoints; ++i) {
    const double x = lo + (hi - lo) * i / kPoints;
    c.model_ns.push_back(x);
    c.pot_probability.push_back(r.pot_ok ? PotTail(r.pot, x) : kNaN);
    c.bm_probability.push_back(r.bm_ok ? BmTail(r.bm, x) : kNaN);
  }
}

// ---- Output -----------------------------------------------------------------------------

nlohmann::json Num(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

nlohmann::json LevelsJson(const std::vector<ReturnLevel>& levels) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& l : levels) {
    out.push_back({{"probability", l.probability},
                   {"estimate_ns", Num(l.estimate_ns)},
                   {"ci_low_ns", Num(l.ci_low_ns)},
                   {"ci_high_ns", Num(l.ci_high_ns)}});
  }
  return out;
}

nlohmann::json GpdJson(const GpdFit& f) {
  return {{"ok", f.ok},
          {"xi", Num(f.xi)},
          {"xi_se", Num(f.xi_se)},
          {"sigma_ns", Num(f.sigma_ns)},
          {"log_likelihood", Num(f.log_likelihood)},
          {"method", f.method},
          {"note", f.note}};
}

nlohmann::json GevJson(const GevFit& f) {
  return {{"ok", f.ok},
          {"mu_ns", Num(f.mu_ns)},
          {"sigma_ns", Num(f.sigma_ns)},
          {"xi", Num(f.xi)},
          {"log_likelihood", Num(f.log_likelihood)},
          {"method", f.method}};
}

std::string Us(double ns) {
  if (!std::isfinite(ns)) return "-";
  return fmt::format("{:.1f}", ns / 1e3);
}

std::string LevelCell(const std::vector<ReturnLevel>& levels, size_t k) {
  if (k >= levels.size()) return "-";
  const auto& l = levels[k];
  if (!std::isfinite(l.ci_low_ns)) return Us(l.estimate_ns);
  return fmt::format("{} [{}, {}]", Us(l.estimate_ns), Us(l.ci_low_ns), Us(l.ci_high_ns));
}

}  // namespace

// ---- Public building blocks -------------------------------------------------------------

GpdFit FitGpd(const std::vector<double>& excesses) {
  GpdFit fit;
  fit.method = "mle";
  const size_t n = excesses.size();
  if (n < 3) {
    fit.note = "fewer than 3 exceedances";
    return fit;
  }
  const double mean_y = Mean(excesses);
  const double max_y = *std::max_element(excesses.begin(), excesses.end());
  if (!(max_y > 0) || !(mean_y > 0)) {
    fit.note = "the exceedances are all zero";
    return fit;
  }
  // Candidate thetas: log-spaced on both sides of 0, dense towards theta = -1/max(y) (the edge
  // of the domain, xi -> -1) and towards large positive theta (heavy tails).
  std::vector<double> grid = {0.0};
  constexpr int kSide = 20;
  for (int i = 0; i < kSide; ++i) {
    const double f = std::pow(10.0, -4.0 + 4.0 * i / (kSide - 1));  // 1e-4 .. 1
    grid.push_back(-(1.0 - 1e-6) * f / max_y);
    grid.push_back(f * 100.0 / mean_y);  // up to theta = 100/mean: xi well above 1
  }
  for (const double e : {1e-2, 1e-3, 1e-4}) grid.push_back(-(1.0 - e) / max_y);
  std::sort(grid.begin(), grid.end());
  size_t best = 0;
  double best_ll = -kInf;
  for (size_t i = 0; i < grid.size(); ++i) {
    const double ll = ProfileAt(excesses, grid[i], mean_y).log_likelihood;
    if (ll > best_ll) {
      best_ll = ll;
      best = i;
    }
  }
  const bool on_edge = best == 0 || best + 1 == grid.size();
  Profile p = ProfileAt(excesses, grid[best], mean_y);
  if (!on_edge) {
    const double theta =
        GoldenMax([&](double t) { return ProfileAt(excesses, t, mean_y).log_likelihood; },
                  grid[best - 1], grid[best + 1], 40);
    const Profile refined = ProfileAt(excesses, theta, mean_y);
    if (refined.log_likelihood >= p.log_likelihood) p = refined;
  }
  if (on_edge || !std::isfinite(p.log_likelihood) || p.xi < -0.5) {
    GpdFit pwm = PwmGpd(excesses);
    pwm.note = on_edge ? "the likelihood maximum is on the edge of its domain; used "
                         "probability-weighted moments"
                       : fmt::format(
                             "MLE shape xi = {:.3f} < -0.5 (MLE not regular there); used "
                             "probability-weighted moments",
                             p.xi);
    if (!pwm.ok) pwm.note += " (which failed too)";
    return pwm;
  }
  fit.ok = true;
  fit.xi = p.xi;
  fit.sigma_ns = p.sigma;
  fit.log_likelihood = p.log_likelihood;
  fit.xi_se = (1.0 + p.xi) / std::sqrt(D(n));
  return fit;
}

GevFit FitGumbel(const std::vector<double>& maxima) {
  GevFit fit;
  fit.method = "gumbel-mle";
  if (maxima.size() < 2) return fit;
  const double lo_x = *std::min_element(maxima.begin(), maxima.end());
  const double mean = Mean(maxima);
  if (!(mean - lo_x > 0)) return fit;
  // sigma solves sigma = mean - sum(x w)/sum(w), w = exp(-(x - min)/sigma); the right side
  // minus sigma falls from mean - min > 0 (sigma -> 0) to below 0 (sigma > mean - min).
  auto h = [&](double sigma) {
    double sw = 0;
    double sxw = 0;
    for (const double v : maxima) {
      const double w = std::exp(-(v - lo_x) / sigma);
      sw += w;
      sxw += (v - lo_x) * w;
    }
    return (mean - lo_x) - sxw / sw - sigma;
  };
  double a = (mean - lo_x) * 1e-9;
  double b = (mean - lo_x) * 2.0;
  for (int i = 0; i < 200 && b - a > 1e-12 * b; ++i) {
    const double mid = 0.5 * (a + b);
    (h(mid) > 0 ? a : b) = mid;
  }
  fit.sigma_ns = 0.5 * (a + b);
  double sw = 0;
  for (const double v : maxima) sw += std::exp(-(v - lo_x) / fit.sigma_ns);
  fit.mu_ns = lo_x - fit.sigma_ns * std::log(sw / D(maxima.size()));
  fit.xi = 0;
  fit.log_likelihood = GevLogLikelihood(maxima, fit.mu_ns, fit.sigma_ns, 0);
  fit.ok = std::isfinite(fit.log_likelihood);
  return fit;
}

GevFit FitGev(const std::vector<double>& maxima) {
  const GevFit g = FitGumbel(maxima);
  if (!g.ok) return g;
  const double l = std::log(g.sigma_ns);
  GevFit fit = FitGevFrom(maxima, {{g.mu_ns, l, 0.0}, {g.mu_ns, l, 0.2}, {g.mu_ns, l, -0.2}});
  if (!fit.ok || fit.log_likelihood < g.log_likelihood) {
    fit = g;
    fit.method = "mle";
  }
  return fit;
}

double GpdQuantile(const GpdFit& fit, double threshold, double rate, double p) {
  if (!fit.ok || !(p > 0) || !(rate > 0)) return kNaN;
  if (p >= rate) return threshold;
  const double l = std::log(rate / p);
  if (std::fabs(fit.xi) < kXiZero) return threshold + fit.sigma_ns * l;
  return threshold + fit.sigma_ns * std::expm1(fit.xi * l) / fit.xi;
}

double GevQuantile(const GevFit& fit, size_t block_size, double p) {
  if (!fit.ok || !(p > 0) || !(p < 1)) return kNaN;
  // P(max of m <= x) = (1 - p)^m  =>  -log G(x) = m * -log(1 - p).
  const double y = D(block_size) * -std::log1p(-p);
  const double ly = std::log(y);
  if (std::fabs(fit.xi) < kXiZero) return fit.mu_ns - fit.sigma_ns * ly;
  return fit.mu_ns + fit.sigma_ns * std::expm1(-fit.xi * ly) / fit.xi;
}

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
    c.verdict = "skipped";
    c.p_value = kNaN;
    c.detail = fmt::format("needs at least 8 values and a lag below that ({} values)", n);
    return c;
  }
  const double mean = Mean(series);
  double denom = 0;
  for (const double v : series) denom += (v - mean) * (v - mean);
  if (!(denom > 0)) {
    c.verdict = "skipped";
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
  c.verdict = "pass";
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
    if (v == median) continue;  // ties with the median carry no sign
    const int side = v > median ? 1 : -1;
    (side > 0 ? n1 : n2) += 1;
    if (side != last) runs += 1;
    last = side;
  }
  if (n1 < 5 || n2 < 5) {
    c.verdict = "skipped";
    c.p_value = kNaN;
    c.detail = "needs at least 5 values on each side of the median";
    return c;
  }
  const double n = n1 + n2;
  const double mean = 2 * n1 * n2 / n + 1;
  const double var = 2 * n1 * n2 * (2 * n1 * n2 - n) / (n * n * (n - 1));
  c.statistic = (runs - mean) / std::sqrt(var);
  c.p_value = std::erfc(std::fabs(c.statistic) / std::sqrt(2.0));
  c.verdict = "pass";
  c.detail =
      fmt::format("{} runs above/below the median, {:.1f} expected (z, two-sided)", runs, mean);
  return c;
}

double ExtremalIndex(const std::vector<double>& series, double threshold) {
  std::vector<double> gaps;
  size_t last = 0;
  bool seen = false;
  for (size_t i = 0; i < series.size(); ++i) {
    if (!(series[i] > threshold)) continue;
    if (seen) gaps.push_back(D(i - last));
    last = i;
    seen = true;
  }
  if (gaps.size() < 2) return kNaN;
  const double n = D(gaps.size());
  double s1 = 0;
  double s2 = 0;
  double max_gap = 0;
  for (const double t : gaps) max_gap = std::max(max_gap, t);
  double theta = 0;
  if (max_gap <= 2) {
    for (const double t : gaps) {
      s1 += t;
      s2 += t * t;
    }
    theta = 2 * s1 * s1 / (n * s2);
  } else {
    for (const double t : gaps) {
      s1 += t - 1;
      s2 += (t - 1) * (t - 2);
    }
    theta = s2 > 0 ? 2 * s1 * s1 / (n * s2) : 1.0;
  }
  return std::min(1.0, theta);
}

// ---- The analysis -----------------------------------------------------------------------

EvtReport EstimateWorstCase(const std::vector<double>& samples_ns, const EvtOptions& options) {
  EvtReport r;
  r.options = options;
  std::vector<double> x;
  x.reserve(samples_ns.size());
  for (const double v : samples_ns) {
    if (std::isfinite(v)) x.push_back(v);
  }
  if (x.size() != samples_ns.size()) {
    r.warnings.push_back(
        fmt::format("{} non-finite samples were ignored", samples_ns.size() - x.size()));
  }
  r.samples = x.size();
  if (x.size() < 2 * kMinFit) {
    r.warnings.push_back(fmt::format("only {} samples; nothing to extrapolate from", x.size()));
    return r;
  }
  std::vector<double> sorted = x;
  std::sort(sorted.begin(), sorted.end());
  r.min_ns = sorted.front();
  r.max_ns = sorted.back();
  PeaksOverThreshold(x, sorted, options, r);
  BlockMaxima(x, options, r);
  Checks(x, options, r);
  FitWarnings(r);
  BuildCurve(sorted, r);
  return r;
}

nlohmann::json ToJson(const EvtReport& r) {
  const EvtOptions& o = r.options;
  nlohmann::json diagnostics = nlohmann::json::array();
  for (const auto& d : r.pot.diagnostics) {
    diagnostics.push_back({{"quantile", d.quantile},
                           {"threshold_ns", d.threshold_ns},
                           {"exceedances", d.exceedances},
                           {"mean_excess_ns", Num(d.mean_excess_ns)},
                           {"fit", GpdJson(d.fit)},
                           {"modified_scale_ns", Num(d.modified_scale_ns)}});
  }
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& c : r.checks) {
    checks.push_back({{"name", c.name},
                      {"applied_to", c.applied_to},
                      {"statistic", Num(c.statistic)},
                      {"p_value", Num(c.p_value)},
                      {"verdict", c.verdict},
                      {"detail", c.detail}});
  }
  return {
      {"disclaimer", kEvtDisclaimer},
      {"options",
       {{"block_size", o.block_size},
        {"threshold_quantile", o.threshold_quantile ? Num(*o.threshold_quantile) : nullptr},
        {"bootstrap", o.bootstrap},
        {"bootstrap_method", "parametric"},
        {"seed", o.seed},
        {"confidence", o.confidence},
        {"alpha", o.alpha},
        {"probabilities", o.probabilities}}},
      {"samples", r.samples},
      {"min_ns", Num(r.min_ns)},
      {"max_ns", Num(r.max_ns)},
      {"pot",
       {{"ok", r.pot_ok},
        {"threshold_quantile", r.pot.threshold_quantile},
        {"threshold_ns", Num(r.pot.threshold_ns)},
        {"threshold_auto", r.pot.threshold_auto},
        {"threshold_reason", r.pot.threshold_reason},
        {"exceedances", r.pot.exceedances},
        {"exceedance_rate", r.pot.exceedance_rate},
        {"fit", GpdJson(r.pot.fit)},
        {"levels", LevelsJson(r.pot.levels)},
        {"bootstrap_failures", r.pot.bootstrap_failures},
        {"diagnostics", diagnostics}}},
      {"block_maxima",
       {{"ok", r.bm_ok},
        {"block_size", r.bm.block_size},
        {"blocks", r.bm.blocks},
        {"gev", GevJson(r.bm.gev)},
        {"gumbel", GevJson(r.bm.gumbel)},
        {"lr_statistic", Num(r.bm.lr_statistic)},
        {"lr_p_value", Num(r.bm.lr_p_value)},
        {"gumbel_sufficient", r.bm.gumbel_sufficient},
        {"levels_model", r.bm.levels_model},
        {"levels", LevelsJson(r.bm.levels)},
        {"bootstrap_failures", r.bm.bootstrap_failures}}},
      {"checks", checks},
      {"warnings", r.warnings},
  };
}

std::string FormatEvtReport(const EvtReport& r) {
  std::string s;
  auto line = [&s](const std::string& text) { s += text + "\n"; };
  line(fmt::format("  {} samples, observed max {} us", r.samples, Us(r.max_ns)));
  if (r.pot_ok || !r.pot.threshold_reason.empty()) {
    line(fmt::format("  POT: threshold {} us (quantile {}, {}), {} exceedances",
                     Us(r.pot.threshold_ns), r.pot.threshold_quantile,
                     r.pot.threshold_auto ? "automatic" : "given", r.pot.exceedances));
  }
  if (r.pot_ok) {
    const GpdFit& f = r.pot.fit;
    line(fmt::format("       GPD xi = {:.3f} +- {:.3f}, sigma = {} us ({})", f.xi, f.xi_se,
                     Us(f.sigma_ns), f.method));
  }
  if (r.bm_ok) {
    line(fmt::format("  Block maxima: {} blocks of {}, GEV xi = {:.3f}, Gumbel LR p = {:.3g} -> {}",
                     r.bm.blocks, r.bm.block_size, r.bm.gev.xi, r.bm.lr_p_value,
                     r.bm.gumbel_sufficient ? "Gumbel is enough" : "GEV needed"));
  }
  line(fmt::format(
      "  {:>10}  {:>32}  {:>32}", "p/activ.", "POT latency us [95% CI]",
      fmt::format("BM ({}) us [95% CI]", r.bm.levels_model.empty() ? "-" : r.bm.levels_model)));
  for (size_t k = 0; k < r.options.probabilities.size(); ++k) {
    line(fmt::format("  {:>10.0e}  {:>32}  {:>32}", r.options.probabilities[k],
                     LevelCell(r.pot.levels, k), LevelCell(r.bm.levels, k)));
  }
  line("  Checks:");
  for (const auto& c : r.checks) {
    line(fmt::format("    {:<15} {:<5} stat {:>8.3g}  p {:>8}  ({})", c.name, c.verdict,
                     c.statistic, std::isfinite(c.p_value) ? fmt::format("{:.3g}", c.p_value) : "-",
                     c.applied_to));
  }
  for (const auto& w : r.warnings) line("  warning: " + w);
  line(fmt::format("  NOTE: {}", kEvtDisclaimer));
  return s;
}

}  // namespace rtpulse::stats
