#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "measure/plan.h"
#include "measure/recorder.h"
#include "measure/wake_path.h"

namespace rtpulse::measure {

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

/// Which signal asked for the current statistics (cyclictest's two).
enum class StatsRequest {
  kPrint,         ///< SIGUSR1: print them on standard error.
  kSharedMemory,  ///< SIGUSR2: write them into the shared-memory statistics file.
};

/// What the engine reports while it runs; implemented by the CLI (live view) and the suite.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  /// A new wake path starts (index into plan.paths).
  virtual void OnPathStart(size_t /*path_index*/, WakePath /*path*/) {}
  /// False when nothing would be shown (-q): the engine then skips the periodic snapshots,
  /// which read every probe's histogram, and takes one only on SIGUSR1 or SIGUSR2.
  virtual bool WantsTicks() const { return true; }
  /// A few times a second. `elapsed_ns` since this path started.
  virtual void OnTick(const std::vector<LiveProbe>& /*probes*/, int64_t /*elapsed_ns*/) {}
  /// SIGUSR1 or SIGUSR2: give the current statistics now, as `request` says.
  virtual void OnStatsRequest(const std::vector<LiveProbe>& /*probes*/, StatsRequest /*request*/) {}
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
  virtual void OnCheckpoint(size_t /*path_index*/, const PathRecord& /*snapshot*/) {}
};

/// Blocks SIGINT, SIGTERM, SIGUSR1, SIGUSR2 and the timer signals in the calling thread. Call it in
/// main() before any thread starts, so every thread inherits the mask and the engine's
/// main loop takes them synchronously (sigtimedwait): no async handler at all.
void BlockRunSignals();

/// Test hooks: around the probe loop (to prove the loop allocates nothing) and around the
/// engine's readiness wait (to make it time out). Defaults leave the engine as it is.
struct LoopHooks {
  void (*enter)() = nullptr;
  void (*exit)() = nullptr;
  /// In each probe thread after its RT set-up, before it reports ready.
  void (*before_ready)() = nullptr;
  /// How long the engine waits for every thread's set-up before it starts the grid anyway
  /// (and records a warning); 0 = the default, 10 s.
  int64_t ready_timeout_ns = 0;
};
void SetLoopHooks(LoopHooks hooks);

/// What `plan` asks of this process before it measures, tried for real: memory locked
/// (mlockall, which stays: the engine locks it anyway) and, on a short-lived thread per probe
/// thread, its CPU and its policy and priority (Linux applies both per thread). The first
/// refusal is a resource error (exit 3) naming the privilege and the fix, as cyclictest stops
/// with an error where rtpulse would otherwise measure degraded. Paths that own their policy
/// (deadline) are checked by their probe, as before.
Status CheckRealtimeSetup(const LatencyPlan& plan);

class SampleSink;

/// Runs every wake path of `plan` in turn and returns what was measured. SIGINT/SIGTERM
/// end it within one period with `interrupted` set; the partial result is returned.
/// `sink`, when given (--samples, -v), receives every sample through per-thread rings of
/// `plan.sample_ring_capacity` slots and a non-RT writer thread.
Expected<RunRecord> RunLatency(const LatencyPlan& plan, RunObserver* observer,
                               std::unique_ptr<SampleSink> sink);

}  // namespace rtpulse::measure
