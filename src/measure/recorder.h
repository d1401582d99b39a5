// What the latency engine records, in measure's own types. The real-time library sees only
// core (docs/architecture.md): these are plain data the probe loop writes into memory
// allocated before it starts; the suite turns them into results (suite/latency_record.h).
// Every field mirrors its counterpart in results/latency_result.h, with the same meaning.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/exit_code.h"
#include "core/histogram.h"

namespace rtpulse::measure {

/// A latency above the --spike trigger, kept with its position in the run.
struct SpikeRecord {
  uint64_t seq = 0;         ///< Period index of the deadline.
  int64_t expected_ns = 0;  ///< Deadline (CLOCK_MONOTONIC).
  int64_t latency_ns = 0;
};

/// cyclictest's -h/-H histogram: 1 us classes [0, limit_us), plus overflows, kept exactly as
/// cyclictest keeps it. The loop writes into `counts` and `overflow_seqs` sized and reserved
/// before it starts.
struct LinearHistogramRecord {
  int64_t limit_us = 0;
  std::vector<uint64_t> counts;         ///< counts[us] for 0 <= us < limit_us.
  uint64_t overflows = 0;               ///< latency >= limit_us.
  uint64_t underflows = 0;              ///< Negative latencies (cyclictest would wrap them).
  std::vector<uint64_t> overflow_seqs;  ///< First overflow cycle numbers (bounded list).
  uint64_t overflow_seqs_dropped = 0;   ///< Overflows beyond the list ("others").
};

/// Everything one probe thread measured on one wake path.
struct ProbeRecord {
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
  std::optional<LinearHistogramRecord> linear;  ///< Only with -h/-H.

  uint64_t periods_elapsed = 0;     ///< Deadlines from the first to the last one handled.
  uint64_t missed_activations = 0;  ///< Wake-ups that came after the next deadline.
  uint64_t skipped_periods = 0;     ///< Periods with no activation because of those.
  int64_t last_latency_ns = 0;      ///< cyclictest's "Act".
  /// SCHED_DEADLINE only: activations used to re-anchor the grid after an overrun (latency
  /// unknown, not in the histogram). samples + skipped + grid_restarts = periods_elapsed.
  uint64_t grid_restarts = 0;

  std::vector<SpikeRecord> spikes;  ///< Samples above --spike, in order (reserved capacity).
  uint64_t spikes_not_kept = 0;     ///< Spikes beyond --spike-nodes (counted, not listed).

  uint64_t samples_logged = 0;   ///< Records handed to the samples ring.
  uint64_t samples_dropped = 0;  ///< Records the ring could not hold (never silent).
  uint64_t injections = 0;       ///< --inject busy spins done on this probe's CPU.
  /// --inject: the samples whose deadline fell inside a spin of this CPU's injector (the
  /// injections as this probe saw them, however late); none without an injector here.
  std::optional<Histogram> injected_histogram;
  /// --smi: SMIs on this probe's CPU from the path's start to its end; none without --smi.
  std::optional<uint64_t> smi_count;

  bool degraded = false;           ///< Ran without the requested policy/priority/affinity.
  std::vector<std::string> notes;  ///< Why degraded, and other per-thread remarks.
};

/// One wake path's run across all probe threads.
struct PathRecord {
  std::string wake;
  int64_t start_realtime_ns = 0;
  int64_t end_realtime_ns = 0;
  int64_t duration_ns = 0;  ///< Measured run time (monotonic).
  std::vector<ProbeRecord> probes;
};

/// Which breaktrace fired (-b).
struct BreakRecord {
  int thread = 0;
  uint64_t seq = 0;
  int64_t latency_ns = 0;
  bool tracing_stopped = false;
};

/// What measure::RunLatency measured: one or more wake paths under identical settings. The
/// facts measure does not know (version, command line, system information, exit code) are
/// added when the suite or the CLI turns it into a results::LatencyRun.
struct RunRecord {
  int64_t start_realtime_ns = 0;
  int64_t end_realtime_ns = 0;
  std::vector<PathRecord> paths;

  bool interrupted = false;           ///< Stopped by SIGINT/SIGTERM: results are partial.
  bool degraded = false;              ///< Some RT setup was refused; see warnings.
  std::vector<std::string> warnings;  ///< Environment and privilege warnings, verbatim.
  std::optional<BreakRecord> breaktrace;
  std::string dma_latency;    ///< What was done with /dev/cpu_dma_latency.
  std::string samples_error;  ///< Non-empty when the --samples/-v stream failed.
  /// Its exit code: 3 for a full disk or missing privilege (core/file_owner.h), else 1.
  ExitCode samples_error_code = ExitCode::kFailure;
};

}  // namespace rtpulse::measure
