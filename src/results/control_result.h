#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"

// The files `rtpulse control` leaves in each configuration's scenario folder
// (docs/control.md), and their readers:
//   response_times.txt      one response time per line, whole microseconds rounded down
//   jobs.csv                the per-job log (ns), documented columns
//   statistical_report.txt  the study's table (Count ... P99) over exactly the values of
//                           response_times.txt, then rtpulse's full statistics
namespace rtpulse::results {

/// One job of the per-job log (CLOCK_MONOTONIC ns). Latency = start - release, execution =
/// end - start, response = end - release.
/// A job whose release is not known (`release_known` false: SCHED_DEADLINE restarted its
/// period where the loop cannot see, docs/control.md "Deadline waiting") has no latency and
/// no response: `release_ns` is then the grid's new anchor (its start), never a release to
/// subtract, and `miss` is true only when certain (its execution alone exceeds the deadline);
/// false means "not known to have missed".
struct ControlJobRow {
  uint64_t job = 0;
  int64_t release_ns = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t skipped_before = 0;
  bool miss = false;
  bool release_known = true;
};

/// jobs.csv's first line; the columns in that order. A job whose release is unknown leaves
/// release_ns, latency_ns and response_ns empty, and miss empty unless certain (1).
inline constexpr const char* kJobLogHeader =
    "job,release_ns,start_ns,end_ns,latency_ns,exec_ns,response_ns,skipped_before,miss,"
    "release_known";
/// The header before the release_known column (every release known); still read.
inline constexpr const char* kJobLogHeaderWithoutReleaseKnown =
    "job,release_ns,start_ns,end_ns,latency_ns,exec_ns,response_ns,skipped_before,miss";

/// The rules statistical_report.txt names (docs/control.md, "Output files").
inline constexpr const char* kStudyStdDevRule =
    "StdDev: sample standard deviation (divisor n-1; n/a for one value)";
inline constexpr const char* kStudyPercentileRule =
    "P90, P99: nearest rank (the value of rank ceil(p/100 * n) in ascending order)";
inline constexpr const char* kStudyMedianRule =
    "Median: the middle value, the mean of the two middle values for an even count";

/// The study's statistics over integer microsecond values: sum, mean, median (the mean of the
/// two middle values for an even count), sample stddev (divisor n - 1, kStudyStdDevRule), P90
/// and P99 by nearest rank (kStudyPercentileRule).
struct StudyStats {
  uint64_t count = 0;
  int64_t sum_us = 0;
  double mean_us = 0;
  double median_us = 0;
  int64_t min_us = 0;
  int64_t max_us = 0;
  double stddev_us = 0;  ///< 0 when count < 2 (undefined for the n-1 divisor; printed n/a).
  int64_t p90_us = 0;
  int64_t p99_us = 0;
};

/// Usage error on no values.
Expected<StudyStats> ComputeStudyStats(const std::vector<int64_t>& values_us);

/// Response times in whole microseconds, rounded down (floor(response_ns / 1000)), in job
/// order, of the jobs whose release is known (the others have no response). A response is
/// never negative in a valid row (end >= release).
std::vector<int64_t> ResponseTimesUs(const std::vector<ControlJobRow>& rows);

/// Nearest-rank minimum count: the smallest number of values for which the nearest-rank
/// `percentile` is not the maximum (rank ceil(p/100 * n) < n), i.e. ceil(100 / (100 - p)):
/// 100 for p99, 1000 for p99.9, 100000 for p99.999. Below it the report prints "n/a".
uint64_t MinCountForPercentile(double percentile);

/// Each file is written atomically (core/atomic_file.h) and handed to the user who ran sudo.
/// A row whose end lies before its release or start (a negative response or execution) is a
/// Failure naming the job: such a row is a bug upstream, never clamped to 0.
Status WriteResponseTimes(const std::string& path, const std::vector<ControlJobRow>& rows);
Status WriteJobLog(const std::string& path, const std::vector<ControlJobRow>& rows);
/// The jobs.csv text WriteJobLog writes (kJobLogHeader, then one line per row).
std::string FormatJobLog(const std::vector<ControlJobRow>& rows);
/// Reads jobs.csv back; every field is checked (integers, miss 0 or 1, latency = start -
/// release, exec = end - start, response = end - release = latency + exec, exec and response
/// >= 0, job and release increasing; a job whose release is unknown has release, latency and
/// response empty and miss empty or 1). A malformed line is a usage error naming FILE:LINE and
/// the value; an empty file (not even the header) is a usage error. A header alone is no jobs.
/// A file of the header without release_known reads with every release known.
Expected<std::vector<ControlJobRow>> ReadJobLog(const std::string& path);

/// What a configuration adds beyond the study's table, for statistical_report.txt.
struct ControlScenarioFacts {
  std::string configuration;  ///< e.g. "fifo:99, no stress".
  int64_t period_ns = 0;
  int64_t deadline_ns = 0;
  uint64_t releases = 0;
  uint64_t skipped = 0;             ///< Including skipped_after_last.
  uint32_t skipped_after_last = 0;  ///< Releases the last job ran past (not in jobs.csv).
  uint64_t misses = 0;
  bool interrupted = false;
  std::vector<std::string> notes;  ///< Throttling, calibration caveat, warnings.
};

/// statistical_report.txt: the study's block, then wake-up latency, execution and response
/// p50 ... p99.999 and max (nearest rank over the ns values; latency and response over the
/// jobs whose release is known), misses, skipped, unknown releases, notes.
std::string FormatStatisticalReport(const std::vector<ControlJobRow>& rows,
                                    const ControlScenarioFacts& facts);
Status WriteStatisticalReport(const std::string& path, const std::vector<ControlJobRow>& rows,
                              const ControlScenarioFacts& facts);

/// One configuration's line in the summary table printed at the end of a run. A figure no
/// job gives (no job ran, or no job's release is known) is nullopt, printed n/a.
struct ControlSummaryRow {
  std::string scenario;
  std::string configuration;
  uint64_t jobs = 0;
  uint64_t responses = 0;  ///< Jobs whose release, so response, is known.
  uint64_t skipped = 0;
  uint64_t misses = 0;
  std::optional<double> mean_response_us;
  std::optional<int64_t> p99_response_us;
  std::optional<int64_t> max_response_us;
  std::optional<int64_t> max_latency_us;
  std::optional<double> median_exec_us;
  /// Jobs whose release is unknown and whose miss is not certain: `misses` is a lower bound.
  uint64_t misses_unknown = 0;
};

ControlSummaryRow SummarizeControlScenario(const std::string& scenario,
                                           const std::string& configuration,
                                           const std::vector<ControlJobRow>& rows,
                                           uint64_t skipped);
std::string FormatControlSummary(const std::vector<ControlSummaryRow>& rows);

}  // namespace rtpulse::results
