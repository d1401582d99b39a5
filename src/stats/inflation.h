#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"

// Execution-time inflation of a job under a condition, against the same job isolated
// (`rtpulse control --interference`, docs/control.md).
namespace rtpulse::stats {

/// Median execution time under a condition relative to the baseline, as a percentage, with a
/// confidence interval (documented in docs/control.md so a reader can recompute it).
struct Inflation {
  double base_median_ns = 0;
  double cond_median_ns = 0;
  double pct = 0;  ///< 100 * (cond_median / base_median - 1).
  double ci_low_pct = 0;
  double ci_high_pct = 0;
  double confidence = 0.95;
  size_t base_n = 0;  ///< Repetitions on each side.
  size_t cond_n = 0;
  double df = 0;  ///< The t interval's Welch degrees of freedom.
};

/// The p-quantile of Student's t with `df` > 0 degrees of freedom (0 < p < 1), from the
/// regularized incomplete beta function; accurate to about 1e-12.
double StudentTQuantile(double p, double df);

/// The inflation over repetitions, the unit that varies (docs/control.md#interference): each
/// side's per-repetition medians (ns), the ratio of their geometric means, and Welch's t
/// interval on their logarithms (the repetitions are independent, the jobs inside one are
/// not: pooling jobs as if independent gave intervals that missed the truth). Usage error:
/// fewer than 2 repetitions on a side, a median <= 0, a confidence outside (0, 1).
Expected<Inflation> RepetitionInflation(const std::vector<double>& base_medians_ns,
                                        const std::vector<double>& cond_medians_ns,
                                        double confidence = 0.95);

/// "+31.0 % [27.1, 35.2]": the inflation and its interval, one decimal each.
std::string FormatInflation(const Inflation& inflation);

}  // namespace rtpulse::stats
