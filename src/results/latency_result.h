#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/histogram.h"

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

/// Everything one probe thread measured on one wake path.
struct ProbeResult {
  int index = 0;       ///< Thread number, cyclictest's T: N.
  int cpu = -1;        ///< CPU it was pinned to; -1 when free to migrate.
  int tid = 0;         ///< Linux thread id, as in cyclictest's "( tid)".
  std::string policy;  ///< "fifo", "rr", "other", "deadline", ...
  int priority = 0;
  int64_t interval_ns = 0;
  std::string wake;  ///< WakePath name.

  Histogram histogram;                    ///< Every sample, signed, bounded relative error.
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

  bool degraded = false;           ///< Ran without the requested policy/priority/affinity.
  std::vector<std::string> notes;  ///< Why degraded, and other per-thread remarks.
};

/// One wake path's run across all probe threads.
struct PathRun {
  std::string wake;
  int64_t start_realtime_ns = 0;
  int64_t end_realtime_ns = 0;
  int64_t duration_ns = 0;  ///< Measured run time (monotonic).
  std::vector<ProbeResult> probes;
};

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
  std::string dma_latency;    ///< What was done with /dev/cpu_dma_latency.
  std::string samples_error;  ///< Non-empty when the --samples/-v stream failed (exit 1).
  std::optional<InjectSettings> inject;  ///< With --inject.
  int return_code = 0;
};

}  // namespace rtpulse::results
