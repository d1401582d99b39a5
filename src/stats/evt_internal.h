#pragma once

// Shared by the extreme value sources (evt_fit.cc, evt_checks.cc, evt.cc, evt_output.cc) and
// nothing else: not installed, not part of the stats API.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "stats/evt.h"

namespace rtpulse::stats::evt_internal {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();
/// Below this many exceedances (or blocks) a fit is not attempted.
inline constexpr size_t kMinFit = 10;
/// Below this many exceedances the tail estimate is flagged as resting on too few points.
inline constexpr uint64_t kFewExceedances = 50;
inline constexpr size_t kFewBlocks = 20;
/// A POT shape standard error above this: the shape is poorly determined, POT refused.
inline constexpr double kMaxXiSe = 0.25;
/// |xi| below this is treated as exactly 0 (exponential / Gumbel) in densities and quantiles.
inline constexpr double kXiZero = 1e-9;

inline double D(size_t n) {
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

inline double Mean(const std::vector<double>& v) {
  if (v.empty()) return kNaN;
  return std::accumulate(v.begin(), v.end(), 0.0) / D(v.size());
}

/// Values with a weight each (how many samples share the value): the exceedances of a series
/// as (excess, count) pairs. No weights means 1 each; a weight of 1 multiplies exactly, so
/// the sums over an unweighted series are its plain sums, bit for bit.
struct WeightedValues {
  std::span<const double> values;
  std::span<const double> weights;  ///< Empty: every weight is 1.
  double Weight(size_t i) const { return weights.empty() ? 1.0 : weights[i]; }
  /// The number of samples: the weights' sum (exact, they are whole numbers below 2^53).
  double Total() const {
    if (weights.empty()) return D(values.size());
    double n = 0;
    for (const double w : weights) n += w;
    return n;
  }
  double Mean() const {
    if (values.empty()) return kNaN;
    double sum = 0;
    for (size_t i = 0; i < values.size(); ++i) sum += Weight(i) * values[i];
    return sum / Total();
  }
};

/// Empirical percentile (linear interpolation) of an unsorted copy.
inline double PercentileOf(std::vector<double> v, double q) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const double pos = q * D(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - D(lo)) * (v[hi] - v[lo]);
}

/// A latency in ns as the text prints it, in microseconds: one decimal below 1e6 us, three
/// significant digits in scientific notation from there (no number with absurd digits),
/// "unbounded" for +infinity and "-" for a number that does not exist (NaN).
std::string FormatUs(double ns);

// ---- evt_fit.cc --------------------------------------------------------------------------

/// FitGpd() over weighted excesses: the same fit as over every sample one by one.
GpdFit FitGpdWeighted(const WeightedValues& excesses);

/// GEV maximum likelihood from the given (mu, log sigma, xi) starting points; the best wins.
/// The bootstrap refits from the model's own parameters, FitGev() from the Gumbel's.
GevFit FitGevFrom(const std::vector<double>& x, const std::vector<std::array<double, 3>>& starts);
/// The GEV fit started from a successful Gumbel fit of the same maxima (xi = 0, +-0.2), never
/// worse than that Gumbel: if the search ends below it, the Gumbel itself (method kMle).
GevFit FitGevFromGumbel(const std::vector<double>& maxima, const GevFit& gumbel);
/// One draw from a GPD with these parameters (inversion).
double SampleGpd(Rng& rng, double xi, double sigma);
/// One draw from the GEV `g` (inversion).
double SampleGev(Rng& rng, const GevFit& g);

// ---- evt_checks.cc -----------------------------------------------------------------------

/// What the checks need of the exceedances over one threshold u, gathered in time order one
/// sample at a time (bounded state): the counts in each half of the series and the sums of
/// the gaps between exceedances, in the order the old whole-series loops added them.
struct ExceedanceTimes {
  double threshold = 0;
  uint64_t half = 0;  ///< samples / 2: [0, half) is the first half, [half, 2*half) the second.
  double first_half = 0;
  double second_half = 0;
  double gaps = 0;
  double max_gap = 0;
  double sum_gap = 0;       ///< sum of t
  double sum_gap2 = 0;      ///< sum of t^2
  double sum_shifted = 0;   ///< sum of (t - 1)
  double sum_shifted2 = 0;  ///< sum of (t - 1)(t - 2)
  uint64_t last = 0;
  bool seen = false;

  /// The sample of index `index` (0-based, in time order) has value v.
  void Add(uint64_t index, double v) {
    if (!(v > threshold)) return;
    if (index < 2 * half) (index < half ? first_half : second_half) += 1.0;
    if (seen) {
      const double t = D(index - last);
      gaps += 1;
      max_gap = std::max(max_gap, t);
      sum_gap += t;
      sum_gap2 += t * t;
      sum_shifted += t - 1;
      sum_shifted2 += (t - 1) * (t - 2);
    }
    last = index;
    seen = true;
  }
};

/// The Ferro-Segers estimate from the gathered gaps (ExtremalIndex() on a whole series).
double ExtremalIndexOf(const ExceedanceTimes& times);

/// Where the pipeline reads the series: its order statistics, the excesses over a threshold
/// and their times. Two kinds: a series in memory (every sample, in time order) and a
/// streamed one (its distinct values with counts, the times gathered in a pass for each
/// threshold the pipeline can choose).
class SeriesData {
 public:
  virtual ~SeriesData() = default;
  /// The sample of 0-based rank `index` in ascending order.
  virtual double Ascending(uint64_t index) const = 0;
  /// The excesses x - u of the samples x > u, weighted (in `values` and `weights`).
  virtual void Excesses(double u, std::vector<double>& values,
                        std::vector<double>& weights) const = 0;
  /// The exceedance times over u, which must be one of the thresholds the pipeline asked for.
  virtual ExceedanceTimes Times(double u) const = 0;
};

/// Runs the independence and stationarity checks on the report's block maxima and POT
/// threshold, judged at options.alpha; appends them to r.checks and a warning per failed one
/// to r.warnings. Needs the POT and block maxima steps done.
void AddChecks(const SeriesData& x, const EvtOptions& options, EvtReport& r);

}  // namespace rtpulse::stats::evt_internal
