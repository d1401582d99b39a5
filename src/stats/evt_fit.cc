// Generalised Pareto and GEV / Gumbel fits: likelihoods, the optimisers that maximise them,
// quantiles and sampling (stats/evt_fit.h).
#include "stats/evt_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <numeric>

#include "core/float_compare.h"
#include "stats/evt_internal.h"

namespace rtpulse::stats {

using evt_internal::D;
using evt_internal::kInf;
using evt_internal::kNaN;
using evt_internal::kXiZero;
using evt_internal::Mean;
using evt_internal::WeightedValues;

namespace {

// ---- Generalised Pareto ----------------------------------------------------------------

double GpdLogLikelihood(const WeightedValues& y, double xi, double sigma) {
  if (!(sigma > 0)) return -kInf;
  const double n = y.Total();
  double sum = 0;
  if (std::fabs(xi) < kXiZero) {
    for (size_t i = 0; i < y.values.size(); ++i) sum += y.Weight(i) * y.values[i];
    return -n * std::log(sigma) - sum / sigma;
  }
  for (size_t i = 0; i < y.values.size(); ++i) {
    const double t = xi * y.values[i] / sigma;
    if (!(t > -1)) return -kInf;
    sum += y.Weight(i) * std::log1p(t);
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

Profile ProfileAt(const WeightedValues& y, double theta, double mean_y) {
  const double n = y.Total();
  if (ExactlyEqual(theta, 0)) return {-n * std::log(mean_y) - n, 0.0, mean_y};
  double sum = 0;
  for (size_t i = 0; i < y.values.size(); ++i) {
    const double t = theta * y.values[i];
    if (!(t > -1)) return {-kInf, kNaN, kNaN};
    sum += y.Weight(i) * std::log1p(t);
  }
  const double xi = sum / n;
  const double sigma = xi / theta;
  if (!(sigma > 0) || !std::isfinite(sigma)) return {-kInf, kNaN, kNaN};
  return {-n * std::log(sigma) - n - sum, xi, sigma};
}

/// Hosking & Wallis (1987) probability-weighted moments, valid for xi < 1. A value of weight
/// w stands for w equal order statistics in a row.
GpdFit PwmGpd(const WeightedValues& data) {
  GpdFit fit;
  fit.method = GpdMethod::kPwm;
  std::vector<size_t> order(data.values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return data.values[a] < data.values[b]; });
  std::vector<double> values;
  std::vector<double> weights;
  values.reserve(order.size());
  for (const size_t i : order) values.push_back(data.values[i]);
  if (!data.weights.empty()) {
    weights.reserve(order.size());
    for (const size_t i : order) weights.push_back(data.weights[i]);
  }
  const WeightedValues y{values, weights};
  const double n = y.Total();
  double a0 = 0;
  double a1 = 0;
  double rank = 0;
  for (size_t i = 0; i < y.values.size(); ++i) {
    const auto w = static_cast<uint64_t>(y.Weight(i));
    for (uint64_t k = 0; k < w; ++k, rank += 1) {
      const double p = (rank + 1.0 - 0.35) / n;
      a0 += y.values[i];
      a1 += (1.0 - p) * y.values[i];
    }
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

}  // namespace

namespace evt_internal {

GevFit FitGevFrom(const std::vector<double>& x, const std::vector<std::array<double, 3>>& starts) {
  GevFit fit;
  fit.method = GevMethod::kMle;
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

GevFit FitGevFromGumbel(const std::vector<double>& maxima, const GevFit& gumbel) {
  const double l = std::log(gumbel.sigma_ns);
  GevFit fit =
      FitGevFrom(maxima, {{gumbel.mu_ns, l, 0.0}, {gumbel.mu_ns, l, 0.2}, {gumbel.mu_ns, l, -0.2}});
  if (!fit.ok || fit.log_likelihood < gumbel.log_likelihood) {
    // The Gumbel is a GEV too: never report a GEV worse than it.
    fit = gumbel;
    fit.method = GevMethod::kMle;
  }
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

}  // namespace evt_internal

// ---- Public -------------------------------------------------------------------------------

GpdFit FitGpd(const std::vector<double>& excesses) {
  return evt_internal::FitGpdWeighted(evt_internal::WeightedValues{excesses, {}});
}

namespace evt_internal {

GpdFit FitGpdWeighted(const WeightedValues& excesses) {
  GpdFit fit;
  fit.method = GpdMethod::kMle;
  const double n = excesses.Total();
  if (n < 3) {
    fit.note = "fewer than 3 exceedances";
    return fit;
  }
  const double mean_y = excesses.Mean();
  const double max_y = *std::max_element(excesses.values.begin(), excesses.values.end());
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
  fit.xi_se = (1.0 + p.xi) / std::sqrt(n);
  return fit;
}

}  // namespace evt_internal

GevFit FitGumbel(const std::vector<double>& maxima) {
  GevFit fit;
  fit.method = GevMethod::kGumbelMle;
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
  return evt_internal::FitGevFromGumbel(maxima, g);
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

}  // namespace rtpulse::stats
