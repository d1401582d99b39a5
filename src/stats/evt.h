#pragma once

// Extreme value statistics for worst-case latency estimates (docs/wcet.md): peaks over a
// threshold (generalised Pareto) and block maxima (GEV / Gumbel), with threshold
// diagnostics, independence and stationarity checks and bootstrap confidence intervals.
//
// Everything here is a statistical extrapolation from the samples given: it says what the
// fitted tail model predicts, never what the system guarantees.
//
// The sources by concern: evt_fit.{h,cc} the GPD / GEV fits, evt_checks.{h,cc} the
// independence and stationarity checks, evt.cc the pipeline (threshold, block maxima,
// bootstrap, curve), evt_output.cc the JSON and text. This header includes the other two, so
// it is the one to include.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "stats/evt_checks.h"
#include "stats/evt_fit.h"

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
  /// How far estimates are reported beyond the data, in orders of magnitude below 1/n (n =
  /// the samples a method used): probabilities below 10^-max_extrapolation_decades / n are
  /// refused (docs/wcet.md, "What is reported").
  double max_extrapolation_decades = 2;
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

/// Latency estimated at one per-activation exceedance probability.
struct ReturnLevel {
  double probability = 0;
  double estimate_ns = 0;  ///< NaN when refused (see `refusal`) or not computable.
  double ci_low_ns = 0;    ///< NaN when no bootstrap ran or the estimate is refused.
  /// NaN when no bootstrap ran or the estimate is refused; +infinity when the bootstrap
  /// cannot bound it (the upper percentile of the refits is infinite): "unbounded".
  double ci_high_ns = 0;
  std::string refusal;  ///< Why no estimate is reported here ("" = reported).
};

/// Whether a method's estimates may be reported, and how far (docs/wcet.md, "What is
/// reported"): the fit needs enough tail points and passing checks, and is read no further
/// than options.max_extrapolation_decades below 1/n.
struct EstimateTrust {
  bool trusted = false;  ///< False: no estimate of this method is reported.
  /// Why not, the failed conditions joined by "; " (e.g. "stationarity check failed (p =
  /// 0.002)"); "" when trusted.
  std::string reason;
  /// The range's limit, 10^-max_extrapolation_decades / samples used: the lowest probability
  /// reported when trusted (nothing is reported otherwise). NaN when the method used no
  /// samples (no whole block, or too few samples for either method).
  double min_probability = 0;
};

/// The peaks-over-threshold analysis.
struct PotResult {
  double threshold_quantile = 0;
  double threshold_ns = 0;
  bool threshold_auto = true;
  std::string threshold_reason;  ///< How the threshold was chosen.
  uint64_t exceedances = 0;
  double exceedance_rate = 0;  ///< exceedances / samples (zeta_u).
  GpdFit fit;
  std::vector<ThresholdPoint> diagnostics;
  /// One per options.probabilities: the reported estimates, refused ones NaN with a reason.
  std::vector<ReturnLevel> levels;
  /// The fitted model's numbers at every probability, refused or not: for experts, not
  /// estimates the data support (the JSON's `raw_fit`, marked untrusted).
  std::vector<ReturnLevel> raw_levels;
  EstimateTrust trust;
  int bootstrap_failures = 0;  ///< Resamples whose refit failed (left out of the intervals).
};

/// Which block maxima model the return levels come from.
enum class BlockMaximaModel {
  kNone,    ///< No fit (too few blocks, or the maxima do not vary).
  kGev,     ///< The GEV: the likelihood ratio test rejected xi = 0.
  kGumbel,  ///< The Gumbel: xi = 0 was not rejected.
};

/// The name in the JSON and text outputs: "", "gev" or "gumbel".
std::string_view BlockMaximaModelName(BlockMaximaModel model);

/// The block maxima analysis.
struct BlockMaximaResult {
  size_t block_size = 0;
  size_t blocks = 0;  ///< Whole blocks; a last partial block is dropped.
  std::vector<double> maxima_ns;
  GevFit gev;
  GevFit gumbel;
  double lr_statistic = 0;  ///< 2*(logL_GEV - logL_Gumbel), chi-square(1) under Gumbel.
  double lr_p_value = 0;
  bool gumbel_sufficient = false;  ///< lr_p_value >= alpha: xi = 0 is not rejected.
  /// From the GEV fit (or Gumbel when sufficient); refused ones NaN with a reason.
  std::vector<ReturnLevel> levels;
  std::vector<ReturnLevel> raw_levels;  ///< The model at every probability (see PotResult).
  EstimateTrust trust;
  BlockMaximaModel levels_model = BlockMaximaModel::kNone;
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
/// The same, filtering and sorting in `samples_ns`'s own storage instead of a copy: for a long
/// series (a day of samples), one copy less in memory.
EvtReport EstimateWorstCase(std::vector<double>&& samples_ns, const EvtOptions& options);

/// Replays one series through `sink`, one latency (ns) a call, in time order: the same
/// values in the same order on every call. An error ends the analysis with it.
using SeriesPass = std::function<Status(const std::function<void(double)>& sink)>;

/// The same analysis without holding the series (docs/wcet.md, "Memory"): two passes, the
/// first keeps the distinct values with their counts and the block maxima, the second the
/// exceedance times over every threshold the analysis can choose (the grid's, the given one,
/// the fallback's). Memory is 16 B per distinct value plus 8 B per block, not per sample; a
/// log of whole nanoseconds has at most one value per ns of its range. The numbers equal the
/// in-memory overload's except for the order in which the fits add their terms (equal
/// counts are added once, multiplied): equal within 1e-9 relative (tests/stats/evt_test.cc,
/// EvtStreamingTest). A pass that fails, or a series that changes between the passes, is the
/// error.
Expected<EvtReport> EstimateWorstCase(const SeriesPass& pass, const EvtOptions& options);

/// The report as JSON (docs/wcet.md, "JSON"), disclaimer included. NaN becomes null.
nlohmann::json ToJson(const EvtReport& report);

/// The report as a text table (microseconds), disclaimer and warnings included. The interval
/// columns are labelled with report.options.confidence (ConfidenceLabel()).
std::string FormatEvtReport(const EvtReport& report);

/// The bootstrap's percentile interval at `confidence` from replicates (linear interpolation
/// between order statistics). NaN replicates (no quantile) are left out; +infinity ones (a
/// refit's quantile overflows) stay in, so an end that lands on them is +infinity, said
/// "unbounded", not the largest finite replicate. NaN ends with fewer than 2 replicates.
std::pair<double, double> PercentileInterval(std::vector<double> replicates, double confidence);

/// The p-value below which a failed Ljung-Box, runs or stationarity check refuses the
/// estimates: alpha / 3 (Bonferroni over the three tests); between it and alpha they warn.
double RefusalLevel(double alpha);

/// The rule that decides which estimates are reported, as one sentence (docs/wcet.md, "What
/// is reported"); in the JSON as `reporting_rule`.
std::string ReportingRule(const EvtOptions& options);

/// A confidence level as the tables print it: 0.95 -> "95%", 0.999 -> "99.9%".
std::string ConfidenceLabel(double confidence);

// The building blocks (FitGpd, FitGev, GpdQuantile, LjungBox, ChiSquarePValue, ...) are
// declared in stats/evt_fit.h and stats/evt_checks.h, included above.

}  // namespace rtpulse::stats
