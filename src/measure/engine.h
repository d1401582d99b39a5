#pragma once

#include <atomic>
#include <memory>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "measure/rt_setup.h"
#include "measure/wake_path.h"
#include "results/latency_result.h"

namespace rtpulse::measure {

/// One probe thread's settings.
struct ThreadPlan {
  int index = 0;
  int cpu = -1;  ///< -1: not pinned.
  Policy policy = Policy::kFifo;
  int priority = 80;
  int64_t interval_ns = 1'000'000;
};

/// Ground-truth load: a higher-priority SCHED_FIFO thread on each probe's CPU that
/// busy-spins for `delay_ns` at `rate_hz`, its wake-ups aligned to that probe's deadlines.
struct InjectPlan {
  int64_t delay_ns = 0;
  double rate_hz = 0;
};

/// A validated, immutable description of a latency run (built by the CLI or the suite).
struct LatencyPlan {
  std::vector<ThreadPlan> threads;
  std::vector<WakePath> paths{WakePath::kAbs};  ///< Run in turn, identical settings.
  int64_t duration_ns = 0;  ///< Per path; 0 = until loops or a signal.
  uint64_t loops = 0;       ///< Samples per thread; 0 = unlimited.

  int64_t linear_histogram_us = 0;  ///< cyclictest -h/-H limit; 0 = off.
  int64_t breaktrace_ns = 0;        ///< -b: stop when a latency exceeds this; 0 = off.
  bool tracemark = false;           ///< --tracemark: write a marker before stopping ftrace.
  int64_t spike_ns = 0;             ///< --spike trigger; 0 = off.
  size_t spike_nodes = 1024;        ///< Spikes kept per thread.

  size_t sample_ring_capacity = 0;  ///< 0 = no per-sample log; else ring slots per thread.
  std::optional<InjectPlan> inject;

  bool lock_memory = true;
  std::optional<int> pm_qos_us = 0;  ///< Value held in /dev/cpu_dma_latency; nullopt = leave.
  std::vector<int> main_affinity;    ///< --mainaffinity; empty = leave.
  int64_t deadline_runtime_ns = 0;   ///< SCHED_DEADLINE runtime; 0 = interval / 10.
  std::vector<std::string> notes;    ///< Planning remarks carried into the result's warnings.
};

/// Live numbers for one probe, read without locks while it runs.
struct LiveProbe {
  int index = 0;
  int cpu = -1;
  int tid = 0;
  int priority = 0;
  int64_t interval_ns = 0;
  uint64_t count = 0;
  int64_t cur_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  double avg_ns = 0;
  int64_t p99_ns = 0;
  uint64_t missed = 0;
};

/// What the engine reports while it runs; implemented by the CLI (live view) and the suite.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  /// A new wake path starts (index into plan.paths).
  virtual void OnPathStart(size_t /*path_index*/, WakePath /*path*/) {}
  /// False when nothing would be shown (-q): the engine then skips the periodic snapshots,
  /// which read every probe's histogram, and takes one only on SIGUSR1.
  virtual bool WantsTicks() const { return true; }
  /// A few times a second. `elapsed_ns` since this path started.
  virtual void OnTick(const std::vector<LiveProbe>& /*probes*/, int64_t /*elapsed_ns*/) {}
  /// SIGUSR1: print the current statistics now.
  virtual void OnStatsRequest(const std::vector<LiveProbe>& /*probes*/) {}
  /// Every this many ns of measurement (0 = never), the engine calls OnCheckpoint from its
  /// non-RT main thread with a snapshot of every probe of the current path, so a long run
  /// can save partial results that survive a SIGKILL. Asked once per path, at its start;
  /// independent of WantsTicks().
  virtual int64_t CheckpointIntervalNs() const { return 0; }
  /// `snapshot` holds what each probe measured so far (Probe::LiveResultTo: live histogram
  /// copies with approximate_moments() set, counters; no -h histogram, spikes, notes);
  /// duration_ns is the time since the grid origin and end_realtime_ns the snapshot time.
  /// The engine reuses it for the next checkpoint: copy what must outlive the call. The
  /// probes keep measuring meanwhile, but the next checkpoint and the end-of-run check
  /// wait for this call to return.
  virtual void OnCheckpoint(size_t /*path_index*/, const results::PathRun& /*snapshot*/) {}
};

/// Blocks SIGINT, SIGTERM, SIGUSR1 and the timer signals in the calling thread. Call it in
/// main() before any thread starts, so every thread inherits the mask and the engine's
/// main loop takes them synchronously (sigtimedwait): no async handler at all.
void BlockRunSignals();

/// Hooks around the probe loop (tests use them to prove the loop allocates nothing).
struct LoopHooks {
  void (*enter)() = nullptr;
  void (*exit)() = nullptr;
};
void SetLoopHooks(LoopHooks hooks);

class SampleSink;

/// Runs every wake path of `plan` in turn and returns what was measured. SIGINT/SIGTERM
/// end it within one period with `interrupted` set; the partial result is returned.
/// `sink`, when given (--samples, -v), receives every sample through per-thread rings of
/// `plan.sample_ring_capacity` slots and a non-RT writer thread.
Expected<results::LatencyRun> RunLatency(const LatencyPlan& plan, RunObserver* observer,
                                         std::unique_ptr<SampleSink> sink);

}  // namespace rtpulse::measure
