#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/exit_code.h"
#include "core/histogram.h"
#include "results/explain_result.h"

namespace rtpulse::results {

/// A latency above the --spike trigger, kept with its position in the run.
struct Spike {
  uint64_t seq = 0;         ///< Period index of the deadline.
  int64_t expected_ns = 0;  ///< Deadline (CLOCK_MONOTONIC).
  int64_t latency_ns = 0;
};

/// cyclictest's -h/-H histogram: 1 us classes [0, limit_us), plus overflows. Kept exactly
/// as cyclictest keeps it so its text block can be reproduced; the log histogram is the
/// one rtpulse's statistics come from.
struct LinearHistogram {
  int64_t limit_us = 0;
  std::vector<uint64_t> counts;         ///< counts[us] for 0 <= us < limit_us.
  uint64_t overflows = 0;               ///< latency >= limit_us.
  uint64_t underflows = 0;              ///< Negative latencies (cyclictest would wrap them).
  std::vector<uint64_t> overflow_seqs;  ///< First overflow cycle numbers (bounded list).
  uint64_t overflow_seqs_dropped = 0;   ///< Overflows beyond the list ("others").
};

/// How far a statistic of an imported probe can be trusted. rtpulse's own measurements are
/// always exact; other tools' files can clip (histogram overflows) or corrupt (cyclictest's
/// unsigned wrap) values, so a number may only bound the truth or be unknown.
enum class Bound { kExact, kLowerBound, kUpperBound, kUnknown };

/// "exact", "lower_bound", "upper_bound", "unknown" (result.json's `bounds`).
const char* BoundName(Bound bound);
Bound BoundFromName(const std::string& name);
/// The bound of a value computed from two others (min, max, mean): the same direction
/// stays, opposite directions or anything unknown give unknown.
Bound CombineBounds(Bound a, Bound b);
/// The bound of a miss count: a lower bound when `misses_unknown` activations may have missed
/// too (ProbeResult::misses_unknown), else exact.
inline Bound MissesBound(uint64_t misses_unknown) {
  return misses_unknown > 0 ? Bound::kLowerBound : Bound::kExact;
}
/// A printed statistic with its bound: `lower` or `upper` before the value, "?" instead of it
/// when unknown (the marks differ by output: "≥" in text and HTML, "$\\geq$" in LaTeX).
std::string WithBound(const std::string& value, Bound bound, std::string_view lower = "\u2265",
                      std::string_view upper = "\u2264");

/// The statistics of one probe that are not exact, and why (docs/result-json.md).
struct StatBounds {
  Bound min = Bound::kExact;
  Bound max = Bound::kExact;
  Bound mean = Bound::kExact;
  Bound stddev = Bound::kExact;
  bool percentiles_unknown = false;  ///< Samples of unknown sign: no percentile is known.
  std::vector<std::string> reasons;  ///< Plain statements, one per cause.
  /// Percentiles at or above this value are lower bounds (clipped overflows are counted at
  /// the histogram's limit).
  std::optional<int64_t> percentiles_lower_from_ns;
  /// Percentiles at or below this value are upper bounds (wrapped negatives are counted at
  /// the largest of them).
  std::optional<int64_t> percentiles_upper_to_ns;
  bool Any() const {
    return min != Bound::kExact || max != Bound::kExact || mean != Bound::kExact ||
           stddev != Bound::kExact || percentiles_lower_from_ns || percentiles_upper_to_ns ||
           percentiles_unknown;
  }
  /// The bound of a percentile whose value is `value_ns`.
  Bound Percentile(int64_t value_ns) const {
    if (percentiles_unknown) return Bound::kUnknown;
    Bound b = Bound::kExact;
    if (percentiles_lower_from_ns && value_ns >= *percentiles_lower_from_ns) {
      b = Bound::kLowerBound;
    }
    if (percentiles_upper_to_ns && value_ns <= *percentiles_upper_to_ns) {
      b = CombineBounds(b, Bound::kUpperBound);
    }
    return b;
  }
};

/// Everything one probe thread measured on one wake path.
struct ProbeResult {
  int index = 0;       ///< Thread number, cyclictest's T: N.
  int cpu = -1;        ///< CPU it was pinned to; -1 when free to migrate.
  int tid = 0;         ///< Linux thread id, as in cyclictest's "( tid)".
  std::string policy;  ///< "fifo", "rr", "other", "deadline", ...
  int priority = 0;
  int64_t interval_ns = 0;
  std::string wake;  ///< WakePath name.

  Histogram histogram;  ///< Every sample, signed, bounded relative error.
  /// Per period (docs/latency.md#per-period-statistics): the latency of every skipped period,
  /// from its deadline to the wake-up that ended the stall. Per-period statistics are
  /// `histogram` merged with this one (PerPeriodHistogram in results/latency_result.h).
  Histogram skipped_histogram;
  std::optional<LinearHistogram> linear;  ///< Only with -h/-H.

  uint64_t periods_elapsed = 0;     ///< Deadlines from the first to the last one handled.
  uint64_t missed_activations = 0;  ///< Wake-ups that came after the next deadline.
  uint64_t skipped_periods = 0;     ///< Periods with no activation because of those.
  int64_t last_latency_ns = 0;      ///< cyclictest's "Act".
  /// SCHED_DEADLINE only: activations used to re-anchor the grid after an overrun (latency
  /// unknown, not in the histogram). samples + skipped + grid_restarts = periods_elapsed.
  uint64_t grid_restarts = 0;

  std::vector<Spike> spikes;     ///< Samples above --spike, in order.
  uint64_t spikes_not_kept = 0;  ///< Spikes beyond --spike-nodes (counted, not listed).

  uint64_t samples_logged = 0;   ///< Records handed to the samples ring.
  uint64_t samples_dropped = 0;  ///< Records the ring could not hold (never silent).
  uint64_t injections = 0;       ///< --inject busy spins done on this probe's CPU.
  /// --inject: the samples whose deadline fell inside an injection's spin; none when the
  /// run had no injector on this CPU, or the result was read back from a file.
  std::optional<Histogram> injected_histogram;
  /// --smi: SMIs on this probe's CPU from the path's start to its end (MSR 0x34); none
  /// without --smi.
  std::optional<uint64_t> smi_count;

  bool degraded = false;           ///< Ran without the requested policy/priority/affinity.
  std::vector<std::string> notes;  ///< Why degraded, and other per-thread remarks.

  // Imports only (last, so the probe record's layout check in suite/latency_record.cc can
  // add them up): rtpulse's own measurements are exact and print every latency.
  StatBounds bounds;  ///< Statistics the source does not pin down.
  /// Samples whose latency is known only to be <= 0 (cyclictest -v prints them as 0 with
  /// the previous cycle number); not in the histogram, counted in periods_elapsed.
  uint64_t latencies_not_printed = 0;
  /// Imports, and result files without a `per_period` block: the skipped periods' latencies
  /// are not known (other tools do not count skipped periods at all), so neither are the
  /// per-period statistics, even with skipped_periods 0.
  bool per_period_unknown = false;
  /// Runs with no deadline (`rtpulse e2e` back to back without --deadline): nothing could
  /// miss, so missed_activations and skipped_periods were not counted; written as null and
  /// printed as "not counted", never as 0.
  bool misses_not_counted = false;
  /// Activations whose miss is not known (a SCHED_DEADLINE job whose period the kernel
  /// restarted, its execution alone within the deadline): missed_activations is then a lower
  /// bound, written with `misses_unknown` and `missed_activations_is_lower_bound` and printed
  /// as ">= N", never as an exact count.
  uint64_t misses_unknown = 0;
};

/// Whether the probe's per-period statistics are known: every skipped period's latency is in
/// `skipped_histogram` (always so for rtpulse's own measurements; an imported file has no
/// per-period latencies, so they are unknown).
inline bool HasPerPeriod(const ProbeResult& p) {
  return !p.per_period_unknown && p.skipped_histogram.count() == p.skipped_periods;
}

/// Per period (docs/latency.md#per-period-statistics): every wake-up's latency and every
/// skipped period's, one entry per period with a latency (samples + skipped periods).
inline Histogram PerPeriodHistogram(const ProbeResult& p) {
  Histogram h = p.histogram;
  h.Merge(p.skipped_histogram);
  return h;
}

/// A path's percentiles computed exactly from its samples log (nearest rank: the sample of
/// that rank itself, not its bucket's upper edge; docs/percentiles.md). Each list holds one
/// value per entry of `percentiles`, in its order; an empty list was not computed (the
/// bucket edges stand).
struct ExactPathPercentiles {
  std::vector<double> percentiles;                       ///< In percent.
  std::vector<std::vector<int64_t>> threads;             ///< threads[i] for PathRun::probes[i].
  std::vector<int64_t> all;                              ///< All threads, per wake-up.
  std::vector<std::vector<int64_t>> threads_per_period;  ///< Per period, per thread.
  std::vector<int64_t> all_per_period;                   ///< Per period, all threads.
  /// Why the per-period percentiles are not exact (the log and the skipped periods'
  /// histogram disagree), when they are not.
  std::string per_period_note;
  uint64_t passes = 0;    ///< Passes over the log, all streams together.
  uint64_t max_held = 0;  ///< Most samples held in memory at once.
};

/// One wake path's run across all probe threads.
struct PathRun {
  std::string wake;
  int64_t start_realtime_ns = 0;
  int64_t end_realtime_ns = 0;
  int64_t duration_ns = 0;  ///< Measured run time (monotonic).
  std::vector<ProbeResult> probes;
  /// With a samples log (`latency --samples`): exact percentiles in place of bucket edges.
  std::optional<ExactPathPercentiles> exact;
};

/// The bounds of statistics over several probes' samples together (a summary row): each
/// statistic combined with CombineBounds; the pooled standard deviation is unknown when a
/// mean is not exact (the spread between the probes' means is then unknown too).
StatBounds MergeBounds(const std::vector<ProbeResult>& probes);

/// Which breaktrace fired (-b), if any.
struct BreakTrace {
  int thread = 0;
  uint64_t seq = 0;
  int64_t latency_ns = 0;
  bool tracing_stopped = false;
};

/// What --inject did: a busy spin of `delay_ns` at `rate_hz` above the probes of each CPU.
/// A probe "detects" an injection as a sample at or above `threshold_ns`.
struct InjectSettings {
  int64_t delay_ns = 0;
  double rate_hz = 0;
  int64_t threshold_ns = 0;  ///< `InjectDetectionThreshold(delay_ns)`.
};

/// The lowest latency counted as a detected injection: 3/4 of the spin (a probe woken during
/// a spin waits for most of it; a host stall or a late wake-up rarely reaches that), moved
/// down to the edge of its histogram bucket so the count is exact, not within a bucket.
int64_t InjectDetectionThreshold(int64_t delay_ns);

/// Samples of `probe` at or above `inject.threshold_ns`: the injections it saw, plus any
/// other stall that long (so it can exceed the injections done).
uint64_t InjectionsDetected(const ProbeResult& probe, const InjectSettings& inject);

/// Of those, the samples whose deadline fell inside an injection's spin (the injections
/// found where they were made); none without the probe's injected_histogram.
std::optional<uint64_t> InjectionsOnDeadline(const ProbeResult& probe,
                                             const InjectSettings& inject);

/// A whole `rtpulse latency` run: one or more wake paths under identical settings.
struct LatencyRun {
  std::string rtpulse_version;
  std::string cmdline;
  // sysinfo, as cyclictest writes it.
  std::string sysname, nodename, release, version, machine;
  bool preempt_rt = false;
  std::string preemption_model;
  std::string hypervisor;

  int64_t start_realtime_ns = 0;
  int64_t end_realtime_ns = 0;
  std::vector<PathRun> paths;

  bool interrupted = false;           ///< Stopped by SIGINT/SIGTERM: results are partial.
  bool degraded = false;              ///< Some RT setup was refused; see warnings.
  std::vector<std::string> warnings;  ///< Environment and privilege warnings, verbatim.
  std::optional<BreakTrace> breaktrace;
  std::string dma_latency;  ///< What was done with /dev/cpu_dma_latency.
  /// --deepest-idle-state: the cpuidle states disabled for the run and whether they were put
  /// back; "" without the option.
  std::string idle_states;
  std::string samples_error;  ///< Non-empty when the --samples/-v stream failed.
  /// Its exit code: 3 for a full disk or missing privilege, else 1 (docs/cli.md).
  ExitCode samples_error_code = ExitCode::kFailure;
  std::optional<InjectSettings> inject;  ///< With --inject.
  /// With --explain: what the kernel trace showed about the spikes, or why it could not run
  /// (docs/explain.md).
  std::optional<ExplainResult> explain;
  int return_code = 0;
};

}  // namespace rtpulse::results
