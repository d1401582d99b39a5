#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"

// Execution-time inflation of a job under a condition, against the same job isolated
// (`rtpulse control --interference`, docs/control.md).
namespace rtpulse::stats {

/// Median execution time under a condition relative to the baseline, as a percentage, with a
/// confidence interval (Price & Bonett's interval for a ratio of two medians, on the pooled
/// job-level times, documented in docs/control.md so a reader can recompute it).
struct Inflation {
  double base_median_ns = 0;
  double cond_median_ns = 0;
  double pct = 0;  ///< 100 * (cond_median / base_median - 1).
  double ci_low_pct = 0;
  double ci_high_pct = 0;
  double confidence = 0.95;
  size_t base_n = 0;
  size_t cond_n = 0;
};

/// Usage error: fewer than 10 values on either side, a value <= 0 (an execution time is
/// positive, and the interval works on logarithms), or a confidence outside (0, 1).
Expected<Inflation> ExecInflation(const std::vector<int64_t>& base_ns,
                                  const std::vector<int64_t>& cond_ns, double confidence = 0.95);

/// "+31.0 % [27.1, 35.2]": the inflation and its interval, one decimal each.
std::string FormatInflation(const Inflation& inflation);

}  // namespace rtpulse::stats
