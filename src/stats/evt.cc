// The worst-case pipeline (stats/evt.h): threshold choice and peaks over threshold, block
// maxima, the parametric bootstrap, the warnings about the fits and the exceedance curve.
// The fits are in evt_fit.cc, the checks in evt_checks.cc, the JSON and text in
// evt_output.cc.
#include "stats/evt.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "core/float_compare.h"
#include "stats/evt_internal.h"

namespace rtpulse::stats {

using evt_internal::D;
using evt_internal::FormatUs;
using evt_internal::kFewBlocks;
using evt_internal::kFewExceedances;
using evt_internal::kMaxXiSe;
using evt_internal::kMinFit;
using evt_internal::kNaN;
using evt_internal::kXiZero;
using evt_internal::Mean;
using evt_internal::Rng;
using evt_internal::SeriesData;
using evt_internal::WeightedValues;

namespace {

/// Linear-interpolation percentile of sorted values whose top ones may be +infinity: a
/// percentile that touches an infinite value is infinite (the refits cannot bound it there).
double SortedPercentile(const std::vector<double>& sorted, double q) {
  const double pos = q * D(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - D(lo);
  if (std::isinf(sorted[lo]) || (frac > 0 && std::isinf(sorted[hi]))) return sorted[hi];
  return sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}

}  // namespace

double RefusalLevel(double alpha) {
  return alpha / 3;
}

std::pair<double, double> PercentileInterval(std::vector<double> values, double confidence) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return std::isnan(v); }),
               values.end());
  if (values.size() < 2) return {kNaN, kNaN};
  std::sort(values.begin(), values.end());
  const double tail = (1.0 - confidence) / 2.0;
  return {SortedPercentile(values, tail), SortedPercentile(values, 1.0 - tail)};
}

namespace {

/// "1 block", "19 blocks".
std::string Count(uint64_t n, std::string_view noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

/// Above this many exceedances a bootstrap resample is drawn in whole nanoseconds and held as
/// counts per value (docs/wcet.md, "Memory"): 2^20 draws are 8 MB held exactly.
constexpr size_t kMaxExactDraws = size_t{1} << 20;

// ---- Peaks over threshold ---------------------------------------------------------------

/// Threshold at quantile q of the n samples: an order statistic, so exceedances are x > u.
uint64_t ThresholdIndex(uint64_t n, double q) {
  const auto idx = static_cast<uint64_t>(std::floor(q * D(n - 1)));
  return std::min<uint64_t>(idx, n - 1);
}

double ThresholdAt(const SeriesData& x, uint64_t n, double q) {
  return x.Ascending(ThresholdIndex(n, q));
}

ThresholdPoint Diagnose(const SeriesData& x, uint64_t n, double q) {
  ThresholdPoint point;
  point.quantile = q;
  point.threshold_ns = ThresholdAt(x, n, q);
  std::vector<double> values;
  std::vector<double> weights;
  x.Excesses(point.threshold_ns, values, weights);
  const WeightedValues y{values, weights};
  point.exceedances = static_cast<uint64_t>(y.Total());
  point.mean_excess_ns = y.Mean();
  if (point.exceedances >= kMinFit) point.fit = evt_internal::FitGpdWeighted(y);
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

void ChooseThreshold(const SeriesData& x, const EvtOptions& o, EvtReport& r) {
  PotResult& pot = r.pot;
  for (const double q : o.threshold_grid) pot.diagnostics.push_back(Diagnose(x, r.samples, q));
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
    GpdFit fit;
    if (pot.exceedances <= kMaxExactDraws) {
      std::vector<double> y(m);
      for (auto& v : y) v = evt_internal::SampleGpd(rng, pot.fit.xi, pot.fit.sigma_ns);
      fit = FitGpd(y);
    } else {
      // Memory bounded by the distinct values, not by m (docs/wcet.md, "Memory"): the draws
      // in whole nanoseconds, as a samples log holds them, counted per value.
      std::unordered_map<double, uint64_t> counts;
      for (size_t i = 0; i < m; ++i) {
        ++counts[std::round(evt_internal::SampleGpd(rng, pot.fit.xi, pot.fit.sigma_ns))];
      }
      std::vector<std::pair<double, uint64_t>> sorted(counts.begin(), counts.end());
      counts = {};
      std::sort(sorted.begin(), sorted.end());
      std::vector<double> values;
      std::vector<double> weights;
      for (const auto& [v, c] : sorted) {
        values.push_back(v);
        weights.push_back(D(c));
      }
      fit = evt_internal::FitGpdWeighted(WeightedValues{values, weights});
    }
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
    std::tie(pot.raw_levels[k].ci_low_ns, pot.raw_levels[k].ci_high_ns) =
        PercentileInterval(reps[k], o.confidence);
  }
}

void PeaksOverThreshold(const SeriesData& x, const EvtOptions& o, EvtReport& r) {
  ChooseThreshold(x, o, r);
  PotResult& pot = r.pot;
  pot.threshold_ns = ThresholdAt(x, r.samples, pot.threshold_quantile);
  std::vector<double> values;
  std::vector<double> weights;
  x.Excesses(pot.threshold_ns, values, weights);
  const WeightedValues y{values, weights};
  pot.exceedances = static_cast<uint64_t>(y.Total());
  pot.exceedance_rate = D(pot.exceedances) / D(r.samples);
  if (pot.exceedances < kMinFit) {
    r.warnings.push_back(
        fmt::format("POT: only {} over the threshold; no fit (a fit needs at least {}). Measure "
                    "longer or lower --threshold-quantile",
                    Count(pot.exceedances, "exceedance"), kMinFit));
    return;
  }
  if (pot.exceedances < kFewExceedances) {
    r.warnings.push_back(fmt::format(
        "POT: only {} exceedances (fewer than {}); the tail fit rests on too few points",
        pot.exceedances, kFewExceedances));
  }
  pot.fit = evt_internal::FitGpdWeighted(y);
  if (!pot.fit.ok) {
    r.warnings.push_back("POT: the generalised Pareto fit failed: " + pot.fit.note);
    return;
  }
  r.pot_ok = true;
  if (!pot.fit.note.empty()) r.warnings.push_back("POT: " + pot.fit.note);
  for (const double p : o.probabilities) {
    pot.raw_levels.push_back(
        {p, GpdQuantile(pot.fit, pot.threshold_ns, pot.exceedance_rate, p), kNaN, kNaN, {}});
  }
  if (o.bootstrap > 0) {
    BootstrapPot(o, r.samples, pot);
    if (pot.exceedances > kMaxExactDraws) {
      r.warnings.push_back(fmt::format(
          "POT: the bootstrap resamples (about {} exceedances each, more than {}) are drawn in "
          "whole nanoseconds and fitted as counts per value, to bound the memory; the interval "
          "ends differ from exact draws by far less than their own sampling error",
          pot.exceedances, kMaxExactDraws));
    }
  }
}

// ---- Block maxima -----------------------------------------------------------------------

void BootstrapBm(const EvtOptions& o, BlockMaximaResult& bm) {
  const GevFit& model = bm.levels_model == BlockMaximaModel::kGumbel ? bm.gumbel : bm.gev;
  const size_t count = o.probabilities.size();
  std::vector<std::vector<double>> reps(count);
  Rng rng(o.seed ^ 0x9e3779b97f4a7c15ULL);
  std::vector<double> sample(bm.blocks);
  for (int b = 0; b < o.bootstrap; ++b) {
    for (auto& v : sample) v = evt_internal::SampleGev(rng, model);
    GevFit fit;
    if (bm.levels_model == BlockMaximaModel::kGumbel) {
      fit = FitGumbel(sample);
    } else {
      fit = evt_internal::FitGevFrom(sample, {{model.mu_ns, std::log(model.sigma_ns), model.xi}});
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
    std::tie(bm.raw_levels[k].ci_low_ns, bm.raw_levels[k].ci_high_ns) =
        PercentileInterval(reps[k], o.confidence);
  }
}

/// The maxima of whole blocks, one sample at a time in time order (a last partial block is
/// dropped): the same values as max_element over each block.
class BlockMaximaGatherer {
 public:
  BlockMaximaGatherer(size_t block_size, std::vector<double>& maxima)
      : block_size_(std::max<size_t>(1, block_size)), maxima_(maxima) {}
  void Add(double v) {
    // max_element keeps the first of equal maxima; for values the first of equals is the
    // same number, so `>` matches it.
    if (in_block_ == 0 || v > current_) current_ = v;
    if (++in_block_ == block_size_) {
      maxima_.push_back(current_);
      in_block_ = 0;
    }
  }

 private:
  size_t block_size_;
  std::vector<double>& maxima_;
  size_t in_block_ = 0;
  double current_ = 0;
};

/// The block maxima fits, from r.bm.maxima_ns (gathered by the caller).
void BlockMaxima(const EvtOptions& o, EvtReport& r) {
  BlockMaximaResult& bm = r.bm;
  bm.block_size = std::max<size_t>(1, o.block_size);
  bm.blocks = bm.maxima_ns.size();
  if (bm.blocks < kMinFit) {
    r.warnings.push_back(fmt::format(
        "block maxima: only {} of {} samples; no fit (a fit needs at least {}). Measure longer "
        "or use a smaller --block",
        Count(bm.blocks, "block"), bm.block_size, kMinFit));
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
  bm.gev = evt_internal::FitGevFromGumbel(bm.maxima_ns, bm.gumbel);
  bm.lr_statistic = std::max(0.0, 2.0 * (bm.gev.log_likelihood - bm.gumbel.log_likelihood));
  bm.lr_p_value = ChiSquarePValue(bm.lr_statistic, 1);
  bm.gumbel_sufficient = bm.lr_p_value >= o.alpha;
  bm.levels_model = bm.gumbel_sufficient ? BlockMaximaModel::kGumbel : BlockMaximaModel::kGev;
  const GevFit& model = bm.gumbel_sufficient ? bm.gumbel : bm.gev;
  r.bm_ok = true;
  for (const double p : o.probabilities) {
    bm.raw_levels.push_back({p, GevQuantile(model, bm.block_size, p), kNaN, kNaN, {}});
  }
  if (o.bootstrap > 0) BootstrapBm(o, bm);
}

void FitWarnings(EvtReport& r) {
  if (r.pot_ok) {
    const GpdFit& f = r.pot.fit;
    if (f.xi < 0) {
      r.warnings.push_back(fmt::format(
          "POT: negative shape (xi = {:.3f}): the fitted tail has an upper end point at {} us; "
          "a real system's latency may have no such bound",
          f.xi, FormatUs(r.pot.threshold_ns - f.sigma_ns / f.xi)));
    }
    if (f.xi_se > kMaxXiSe) {
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
  // Compared where both report a number: the lowest probability both support.
  for (size_t k = std::min(r.pot.levels.size(), r.bm.levels.size()); k-- > 0;) {
    const double a = r.pot.levels[k].estimate_ns;
    const double b = r.bm.levels[k].estimate_ns;
    if (!std::isfinite(a) || !std::isfinite(b)) continue;
    if (a > 2 * b || b > 2 * a) {
      r.warnings.push_back(fmt::format(
          "the two methods disagree by more than a factor of 2 at p = {:.0e} ({} us vs {} us): "
          "the tail model is uncertain",
          r.pot.levels[k].probability, FormatUs(a), FormatUs(b)));
    }
    break;
  }
}

// ---- What is reported (docs/wcet.md, "What is reported") --------------------------------

/// The failed independence and stationarity checks that rule a method out, as reasons.
/// Ljung-Box, runs and stationarity say the series (or its tail) changes or depends on itself
/// over the run: neither method's model holds. They refuse below alpha / 3 (Bonferroni over
/// the three tests, so that a series that satisfies every assumption is refused by chance at
/// most alpha of the time); between that and alpha they only warn. The extremal index says
/// exceedances cluster: the POT likelihood treats them as independent, block maxima absorb
/// short clusters, so it refuses POT only.
void FailedChecks(const EvtReport& r, bool for_pot, std::vector<std::string>& reasons) {
  const double level = RefusalLevel(r.options.alpha);
  for (const auto& c : r.checks) {
    if (c.verdict != CheckVerdict::kWarn) continue;
    if (c.name == "extremal-index") {
      if (for_pot) {
        reasons.push_back(fmt::format(
            "extremal-index check failed ({:.3g} < 0.7: exceedances cluster)", c.statistic));
      }
    } else if (c.p_value < level) {
      reasons.push_back(
          fmt::format("{} check failed (p = {:.3g} < {:.3g})", c.name, c.p_value, level));
    }
  }
}

/// Fills `levels` from `raw_levels` by the rule: everything refused when `reasons` is not
/// empty, else each probability below `min_probability` refused.
void Decide(const std::vector<std::string>& reasons, double decades, double min_probability,
            const std::vector<ReturnLevel>& raw, EstimateTrust& trust,
            std::vector<ReturnLevel>& levels) {
  trust.min_probability = min_probability;
  trust.trusted = reasons.empty();
  trust.reason = fmt::format("{}", fmt::join(reasons, "; "));
  levels.clear();
  for (const ReturnLevel& l : raw) {
    ReturnLevel out = l;
    if (!trust.trusted) {
      out.refusal = "no trustworthy estimate: " + trust.reason;
    } else if (l.probability < min_probability * (1 - 1e-9)) {
      // (1 - 1e-9): the limit 10^-k / n is computed in floating point; a probability written
      // as that same number must not fall out by its last bit.
      out.refusal = fmt::format(
          "beyond the supported range: p < {:.2g} (more than {:g} orders of magnitude below 1/n)",
          min_probability, decades);
    }
    if (!out.refusal.empty()) out.estimate_ns = out.ci_low_ns = out.ci_high_ns = kNaN;
    levels.push_back(out);
  }
}

void ApplyTrustRule(EvtReport& r) {
  const double decades = r.options.max_extrapolation_decades;
  const double reach = std::pow(10.0, -decades);

  std::vector<std::string> pot;
  if (!r.pot_ok) {
    pot.push_back(r.pot.exceedances < kMinFit
                      ? fmt::format("only {} over the threshold (a fit needs at least {})",
                                    Count(r.pot.exceedances, "exceedance"), kMinFit)
                      : "no fit (the generalised Pareto fit failed)");
  } else {
    if (r.pot.exceedances < kFewExceedances) {
      pot.push_back(fmt::format("only {} over the threshold (an estimate needs at least {})",
                                Count(r.pot.exceedances, "exceedance"), kFewExceedances));
    }
    if (r.pot.fit.xi_se > kMaxXiSe) {
      pot.push_back(
          fmt::format("the shape is poorly determined (xi = {:.2f} +- {:.2f}, "
                      "standard error above {:g})",
                      r.pot.fit.xi, r.pot.fit.xi_se, kMaxXiSe));
    }
  }
  FailedChecks(r, true, pot);
  Decide(pot, decades, reach / D(r.samples), r.pot.raw_levels, r.pot.trust, r.pot.levels);

  // Below kMinFit nothing was fitted (BlockMaxima returned first), so bm_ok is false there.
  std::vector<std::string> bm;
  if (r.bm.blocks < kMinFit) {
    bm.push_back(fmt::format("only {} of {} (a fit needs at least {})", Count(r.bm.blocks, "block"),
                             r.bm.block_size, kMinFit));
  } else if (r.bm.blocks < kFewBlocks) {
    bm.push_back(fmt::format("only {} of {} (an estimate needs at least {})",
                             Count(r.bm.blocks, "block"), r.bm.block_size, kFewBlocks));
  } else if (!r.bm_ok) {
    bm.push_back("no fit (the block maxima do not vary)");
  }
  FailedChecks(r, false, bm);
  const size_t bm_samples = r.bm.blocks * r.bm.block_size;
  Decide(bm, decades, bm_samples > 0 ? reach / D(bm_samples) : kNaN, r.bm.raw_levels, r.bm.trust,
         r.bm.levels);
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
  const GevFit& g = bm.levels_model == BlockMaximaModel::kGumbel ? bm.gumbel : bm.gev;
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

void BuildCurve(const SeriesData& series, EvtReport& r) {
  ExceedanceCurve& c = r.curve;
  const uint64_t n = r.samples;
  // Every one of the top 200 points, then geometrically thinned down to the median.
  for (size_t rank = 1; rank <= n / 2;) {
    c.empirical_ns.push_back(series.Ascending(n - rank));
    c.empirical_probability.push_back(D(rank) / D(n + 1));
    rank = rank < 200 ? rank + 1 : std::max(rank + 1, static_cast<size_t>(D(rank) * 1.02));
  }
  if (!r.pot_ok && !r.bm_ok) return;
  double lo = r.pot_ok ? r.pot.threshold_ns : ThresholdAt(series, n, 0.9);
  double hi = r.max_ns;
  // The curves reach as far as the reported estimates, not into the refused extrapolation.
  for (const auto& l : r.pot.levels) {
    if (std::isfinite(l.estimate_ns)) hi = std::max(hi, l.estimate_ns);
  }
  for (const auto& l : r.bm.levels) {
    if (std::isfinite(l.estimate_ns)) hi = std::max(hi, l.estimate_ns);
  }
  hi = lo + (hi - lo) * 1.05;
  constexpr int kPoints = 200;
  for (int i = 0; i <= kPoints; ++i) {
    const double x = lo + (hi - lo) * i / kPoints;
    c.model_ns.push_back(x);
    c.pot_probability.push_back(r.pot_ok ? PotTail(r.pot, x) : kNaN);
    c.bm_probability.push_back(r.bm_ok ? BmTail(r.bm, x) : kNaN);
  }
}

/// A series' distinct values with their counts, ascending: its order statistics and the
/// excesses over a threshold as (excess, count). Both ways of reading a series fit these, so
/// the fits add the same terms in the same order whichever way the series came.
class DistinctValues : public evt_internal::SeriesData {
 public:
  /// From the sorted values with their counts.
  void Set(const std::vector<std::pair<double, uint64_t>>& sorted) {
    uint64_t below = 0;
    for (const auto& [v, c] : sorted) {
      values_.push_back(v);
      counts_.push_back(D(c));
      below_.push_back(below);
      below += c;
    }
  }
  double Ascending(uint64_t index) const override {
    // The last value with fewer than index + 1 samples below it.
    const auto it = std::upper_bound(below_.begin(), below_.end(), index);
    return values_[static_cast<size_t>(it - below_.begin()) - 1];
  }
  void Excesses(double u, std::vector<double>& values,
                std::vector<double>& weights) const override {
    const auto first = std::upper_bound(values_.begin(), values_.end(), u);
    for (auto i = static_cast<size_t>(first - values_.begin()); i < values_.size(); ++i) {
      values.push_back(values_[i] - u);
      weights.push_back(counts_[i]);
    }
  }

 private:
  std::vector<double> values_;   ///< Distinct, ascending.
  std::vector<double> counts_;   ///< How many samples have values_[i] (whole numbers).
  std::vector<uint64_t> below_;  ///< Samples with a value below values_[i].
};

/// A series in memory: every sample in time order; the exceedance times are counted over it
/// when asked for.
class SeriesInMemory final : public DistinctValues {
 public:
  explicit SeriesInMemory(std::vector<double> x) : x_(std::move(x)) {
    std::vector<double> sorted = x_;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::pair<double, uint64_t>> runs;
    for (const double v : sorted) {
      if (runs.empty() || runs.back().first < v) {
        runs.emplace_back(v, 0);
      }
      ++runs.back().second;
    }
    Set(runs);
  }
  evt_internal::ExceedanceTimes Times(double u) const override {
    evt_internal::ExceedanceTimes t;
    t.threshold = u;
    t.half = x_.size() / 2;
    for (size_t i = 0; i < x_.size(); ++i) t.Add(i, x_[i]);
    return t;
  }

 private:
  std::vector<double> x_;
};

/// A streamed series: the exceedance times over every threshold the pipeline can choose were
/// gathered in the second pass.
class StreamedSeries final : public DistinctValues {
 public:
  std::vector<evt_internal::ExceedanceTimes> times;  ///< One per distinct candidate threshold.

  evt_internal::ExceedanceTimes Times(double u) const override {
    for (const auto& t : times) {
      if (ExactlyEqual(t.threshold, u)) return t;
    }
    std::abort();  // an invariant: every threshold the pipeline uses was gathered
  }
};

/// The steps after the data are in: both ways of reading a series end here.
void Analyse(const SeriesData& x, const EvtOptions& options, EvtReport& r) {
  r.min_ns = x.Ascending(0);
  r.max_ns = x.Ascending(r.samples - 1);
  PeaksOverThreshold(x, options, r);
  BlockMaxima(options, r);
  evt_internal::AddChecks(x, options, r);
  ApplyTrustRule(r);
  FitWarnings(r);
  BuildCurve(x, r);
}

/// Too few samples for either method: the report says so and stops.
bool TooFew(EvtReport& r) {
  if (r.samples >= 2 * kMinFit) return false;
  r.warnings.push_back(fmt::format("only {} samples; nothing to extrapolate from", r.samples));
  const std::string why = fmt::format("only {} (an analysis needs at least {})",
                                      Count(r.samples, "sample"), 2 * kMinFit);
  Decide({why}, r.options.max_extrapolation_decades, kNaN, {}, r.pot.trust, r.pot.levels);
  Decide({why}, r.options.max_extrapolation_decades, kNaN, {}, r.bm.trust, r.bm.levels);
  return true;
}

/// Every threshold the pipeline can choose: the grid's, the given one and the fallback's.
std::vector<double> CandidateQuantiles(const EvtOptions& o) {
  std::vector<double> q = o.threshold_grid;
  if (o.threshold_quantile) q.push_back(*o.threshold_quantile);
  q.push_back(0.99);
  return q;
}

}  // namespace

EvtReport EstimateWorstCase(const std::vector<double>& samples_ns, const EvtOptions& options) {
  return EstimateWorstCase(std::vector<double>(samples_ns), options);
}

EvtReport EstimateWorstCase(std::vector<double>&& samples_ns, const EvtOptions& options) {
  EvtReport r;
  r.options = options;
  std::vector<double> x = std::move(samples_ns);
  const size_t given = x.size();
  std::erase_if(x, [](double v) { return !std::isfinite(v); });
  if (x.size() != given) {
    r.warnings.push_back(fmt::format("{} non-finite samples were ignored", given - x.size()));
  }
  r.samples = x.size();
  if (TooFew(r)) return r;
  BlockMaximaGatherer maxima(options.block_size, r.bm.maxima_ns);
  for (const double v : x) maxima.Add(v);
  const SeriesInMemory series(std::move(x));
  Analyse(series, options, r);
  return r;
}

Expected<EvtReport> EstimateWorstCase(const SeriesPass& pass, const EvtOptions& options) {
  EvtReport r;
  r.options = options;
  // Pass 1: the distinct values with their counts, the block maxima.
  std::unordered_map<double, uint64_t> counts;
  uint64_t given = 0;
  BlockMaximaGatherer maxima(options.block_size, r.bm.maxima_ns);
  Status first = pass([&](double v) {
    ++given;
    if (!std::isfinite(v)) return;
    ++r.samples;
    ++counts[v];
    maxima.Add(v);
  });
  if (!first) return first.error();
  if (r.samples != given) {
    r.warnings.push_back(fmt::format("{} non-finite samples were ignored", given - r.samples));
  }
  if (TooFew(r)) return r;
  StreamedSeries series;
  {
    std::vector<std::pair<double, uint64_t>> sorted(counts.begin(), counts.end());
    counts = {};
    std::sort(sorted.begin(), sorted.end());
    series.Set(sorted);
  }
  // Pass 2: the exceedance times over every candidate threshold, in time order.
  for (const double q : CandidateQuantiles(options)) {
    const double u = ThresholdAt(series, r.samples, q);
    bool known = false;
    for (const auto& t : series.times) known |= ExactlyEqual(t.threshold, u);
    if (known) continue;
    evt_internal::ExceedanceTimes t;
    t.threshold = u;
    t.half = r.samples / 2;
    series.times.push_back(t);
  }
  std::sort(series.times.begin(), series.times.end(),
            [](const auto& a, const auto& b) { return a.threshold < b.threshold; });
  uint64_t index = 0;
  Status second = pass([&](double v) {
    if (!std::isfinite(v)) return;
    // Ascending thresholds: once one is not exceeded, none above it is.
    for (auto& t : series.times) {
      if (!(v > t.threshold)) break;
      t.Add(index, v);
    }
    ++index;
  });
  if (!second) return second.error();
  if (index != r.samples) {
    return Failure(fmt::format(
        "the series changed between two passes ({} samples, then {}); read it again once it is "
        "complete",
        r.samples, index));
  }
  Analyse(series, options, r);
  return r;
}

}  // namespace rtpulse::stats
