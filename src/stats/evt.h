#pragma once

// Extreme value statistics for worst-case latency estimates (docs/wcet.md): peaks over a
// threshold (generalised Pareto) and block maxima (GEV / Gumbel), with threshold
// diagnostics, independence and stationarity checks and bootstrap confidence intervals.
//
// Everything here is a statistical extrapolation from the samples given: it says what the
// fitted tail model predicts, never what the system guarantees.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rtpulse::stats {

/// Printed beside every estimate, in text and JSON.
inline constexpr std::string_view kEvtDisclaimer =
    "These are statistical extrapolations from the measured samples, not guarantees: they hold "
    "only if the tail model fits and the samples are independent and stationary, and they say "
    "nothing about conditions the run did not see.";

/// What EstimateWorstCase() does.
struct EvtOptions {
  /// Samples per block for block maxima (1000 = 1 s at a 1 ms period).
  size_t block_size = 1000;
  /// Peaks-over-threshold threshold as a quantile of the samples, e.g. 0.99; unset = the
  /// automatic choice from the parameter-stability diagnostics.
  std::optional<double> threshold_quantile;
  /// Parametric bootstrap resamples per method for the confidence intervals (0 = none).
  int bootstrap = 200;
  uint64_t seed = 1;         ///< Bootstrap random seed: the same seed gives the same intervals.
  double confidence = 0.95;  ///< Confidence level of the intervals.
  double alpha = 0.05;       ///< Significance level of the checks (below it: warn).
  /// Per-activation exceedance probabilities to estimate latencies for.
  std::vector<double> probabilities = {1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12};
  /// The threshold grid for the diagnostics (quantiles of the samples).
  std::vector<double> threshold_grid = {0.90, 0.91, 0.92, 0.93, 0.94, 0.95,
                                        0.96, 0.97, 0.98, 0.99, 0.995};
};

/// A generalised Pareto fit to exceedances y = x - u > 0:
/// P(Y > y) = (1 + xi*y/sigma)^(-1/xi), or exp(-y/sigma) when xi = 0.
struct GpdFit {
  bool ok = false;
  double xi = 0;
  double sigma_ns = 0;
  double xi_se = 0;  ///< Asymptotic standard error of xi: (1 + xi)/sqrt(n).
  double log_likelihood = 0;
  std::string method;  ///< "mle" (profile likelihood) or "pwm" (probability-weighted moments).
  std::string note;    ///< Why the MLE was not used, when it was not.
};

/// One row of the threshold diagnostics.
struct ThresholdPoint {
  double quantile = 0;
  double threshold_ns = 0;
  uint64_t exceedances = 0;
  double mean_excess_ns = 0;  ///< Mean residual life: mean of (x - u) over x > u.
  GpdFit fit;
  double modified_scale_ns = 0;  ///< sigma - xi*u: constant above a valid threshold.
};

/// A GEV fit to block maxima: G(x) = exp(-(1 + xi*(x-mu)/sigma)^(-1/xi)), Gumbel when xi = 0.
struct GevFit {
  bool ok = false;
  double mu_ns = 0;
  double sigma_ns = 0;
  double xi = 0;
  double log_likelihood = 0;
  std::string method;  ///< "mle" (Nelder-Mead) or "gumbel-mle".
};

/// Latency estimated at one per-activation exceedance probability.
struct ReturnLevel {
  double probability = 0;
  double estimate_ns = 0;
  double ci_low_ns = 0;   ///< NaN when no bootstrap ran.
  double ci_high_ns = 0;  ///< NaN when no bootstrap ran.
};

/// One independence or stationarity check.
struct EvtCheck {
  std::string name;        ///< "ljung-box", "runs", "extremal-index", "stationarity".
  std::string applied_to;  ///< What series it ran on.
  double statistic = 0;
  double p_value = 0;   ///< NaN for checks judged by a threshold instead.
  std::string verdict;  ///< "pass", "warn" or "skipped".
  std::string detail;   ///< One sentence: what it means here.
};

struct PotResult {
  double threshold_quantile = 0;
  double threshold_ns = 0;
  bool threshold_auto = true;
  std::string threshold_reason;  ///< How the threshold was chosen.
  uint64_t exceedances = 0;
  double exceedance_rate = 0;  ///< exceedances / samples (zeta_u).
  GpdFit fit;
  std::vector<ThresholdPoint> diagnostics;
  std::vector<ReturnLevel> levels;
  int bootstrap_failures = 0;  ///< Resamples whose refit failed (left out of the intervals).
};

struct BlockMaximaResult {
  size_t block_size = 0;
  size_t blocks = 0;  ///< Whole blocks; a last partial block is dropped.
  std::vector<double> maxima_ns;
  GevFit gev;
  GevFit gumbel;
  double lr_statistic = 0;  ///< 2*(logL_GEV - logL_Gumbel), chi-square(1) under Gumbel.
  double lr_p_value = 0;
  bool gumbel_sufficient = false;   ///< lr_p_value >= alpha: xi = 0 is not rejected.
  std::vector<ReturnLevel> levels;  ///< From the GEV fit (or Gumbel when sufficient).
  std::string levels_model;         ///< "gev" or "gumbel".
  int bootstrap_failures = 0;
};

/// Points of the exceedance plot: P(X > x) per activation against x.
struct ExceedanceCurve {
  std::vector<double> empirical_ns;           ///< Sample values (descending, thinned).
  std::vector<double> empirical_probability;  ///< rank / (n + 1).
  std::vector<double> model_ns;               ///< Latencies on the fitted curves.
  std::vector<double> pot_probability;        ///< GPD tail at model_ns (NaN below u).
  std::vector<double> bm_probability;         ///< GEV per activation at model_ns.
};

/// Everything EstimateWorstCase() found.
struct EvtReport {
  EvtOptions options;
  uint64_t samples = 0;
  double min_ns = 0;
  double max_ns = 0;
  bool pot_ok = false;
  bool bm_ok = false;
  PotResult pot;
  BlockMaximaResult bm;
  std::vector<EvtCheck> checks;
  std::vector<std::string> warnings;  ///< Failed checks, few data, unstable or odd fits.
  ExceedanceCurve curve;
};

/// The worst-case analysis of one time-ordered series of latencies (ns, one per activation,
/// in the order they happened: the block maxima and the dependence checks rely on it).
/// Never throws; problems (too few samples, failed fits) are reported in `warnings`,
/// `pot_ok`/`bm_ok` and the checks' verdicts. Deterministic for a given options.seed.
EvtReport EstimateWorstCase(const std::vector<double>& samples_ns, const EvtOptions& options);

/// The report as JSON (docs/wcet.md, "JSON"), disclaimer included. NaN becomes null.
nlohmann::json ToJson(const EvtReport& report);

/// The report as a text table (microseconds), disclaimer and warnings included.
std::string FormatEvtReport(const EvtReport& report);

// Building blocks, exposed for tests and other importers.

/// Fits a GPD to exceedances (> 0) by profile maximum likelihood over theta = xi/sigma
/// (grid + golden section), falling back to probability-weighted moments when the MLE is
/// on the edge of its domain or xi < -0.5 (where MLE is not regular).
GpdFit FitGpd(const std::vector<double>& excesses);
/// Fits a GEV (Nelder-Mead over mu, log sigma, xi from several starts).
GevFit FitGev(const std::vector<double>& maxima);
/// Fits a Gumbel (GEV with xi = 0) by maximum likelihood.
GevFit FitGumbel(const std::vector<double>& maxima);
/// GPD-tail latency with P(X > x) = p, given P(X > u) = rate.
double GpdQuantile(const GpdFit& fit, double threshold, double rate, double p);
/// GEV-of-block-maxima latency exceeded with probability p per activation (blocks of m).
double GevQuantile(const GevFit& fit, size_t block_size, double p);

/// Regularised lower incomplete gamma P(a, x) (series / continued fraction).
double RegularizedGammaP(double a, double x);
/// Chi-square upper tail P(X > x) with k degrees of freedom.
double ChiSquarePValue(double x, double dof);
/// Ljung-Box Q over lags 1..lags, with its chi-square(lags) p-value.
EvtCheck LjungBox(const std::vector<double>& series, int lags);
/// Wald-Wolfowitz runs test above/below the median (two-sided normal p-value).
EvtCheck RunsTest(const std::vector<double>& series);
/// Ferro-Segers intervals estimate of the extremal index of exceedances over `threshold`
/// (1 = isolated exceedances, small = clusters); NaN with fewer than 3 exceedances.
double ExtremalIndex(const std::vector<double>& series, double threshold);

}  // namespace rtpulse::stats
