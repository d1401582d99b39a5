// Exact nearest-rank percentiles of a run's own samples log (docs/percentiles.md): per
// wake-up and per period, per thread and all threads together, each checked against the
// run's histograms before it stands in for their bucket edges.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/float_compare.h"
#include "results/latency_result.h"
#include "results/suite_result.h"
#include "stats/summary.h"

namespace rtpulse::results {

/// Every percentile a run's outputs show, computed exactly from its samples log by every
/// workload: cyclictest.json's and the latency block's (stats::kPercentiles) and the summary
/// rows' (kSummaryPercentiles). One list, so no output is left with bucket edges because its
/// workload computed another selection.
inline constexpr double kLoggedPercentiles[] = {50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 99.999};

namespace detail {
constexpr bool Logged(double p) {
  for (const double q : kLoggedPercentiles) {
    if (ExactlyEqual(q, p)) return true;
  }
  return false;
}
constexpr bool LogsAll(std::span<const double> wanted) {
  for (const double p : wanted) {
    if (!Logged(p)) return false;
  }
  return true;
}
}  // namespace detail
static_assert(detail::LogsAll(stats::kPercentiles) && detail::LogsAll(kSummaryPercentiles),
              "kLoggedPercentiles must hold every percentile an output shows");

/// What to select from a samples log for one wake path.
struct LogPercentileRequest {
  std::string samples_path;
  /// Only records of this wake path (SampleRecord::wake_path, the measure::WakePath value);
  /// none: every record belongs to the path.
  std::optional<uint8_t> wake_path;
  std::span<const double> percentiles;  ///< In percent, e.g. stats::kPercentiles.
  bool per_thread = true;               ///< Also each thread's own percentiles.
};

/// Exact nearest-rank percentiles of `path`'s samples in a samples log, by streaming passes
/// (stats::ComputeExactPercentiles: a histogram pass, then selection inside the few buckets
/// that hold the wanted ranks; never the whole log in memory). A stream stands in for a
/// histogram only when the log's samples of it are exactly that histogram's
/// (stats::SameSamples): otherwise the per-wake-up percentiles are an error (Failure, naming
/// the thread and the counts) and the per-period ones are left out with a note.
///
/// Per period, a thread's log is replayed in seq order: a record followed by a gap of k
/// periods (the next record's seq, or the thread's periods_elapsed after its last record)
/// gives latency, latency - T, ..., latency - kT (docs/latency.md#per-period-statistics).
Expected<ExactPathPercentiles> ExactPercentilesFromLog(const PathRun& path,
                                                       const LogPercentileRequest& request);

/// The values of `list` (one of `exact`'s lists) at `wanted`, in its order; none when the
/// list was not computed or lacks one of them.
std::optional<std::vector<int64_t>> PickPercentiles(const ExactPathPercentiles& exact,
                                                    const std::vector<int64_t>& list,
                                                    std::span<const double> wanted);

/// The summary's values (kSummaryPercentiles) of `list`, one of `exact`'s lists; none when
/// it was not computed or lacks one of them.
std::optional<ExactPercentileValues> PickSummaryPercentiles(const ExactPathPercentiles& exact,
                                                            const std::vector<int64_t>& list);

}  // namespace rtpulse::results
