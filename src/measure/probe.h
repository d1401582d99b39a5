#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "core/clock.h"
#include "measure/engine.h"
#include "measure/recorder.h"
#include "measure/sample_log.h"
#include "measure/tracing.h"
#include "measure/wake_source.h"

namespace rtpulse::measure {

/// Shared state of one path's run, owned by the engine.
struct RunShared {
  std::atomic<bool> stop{false};
  std::atomic<int64_t> origin_ns{0};  ///< Published once every probe is ready (then != 0).
  std::atomic<int> ready{0};          ///< Probes that finished their set-up (or failed).
  std::atomic<int> finished{0};       ///< Probes that left their loop.
  std::atomic<bool> break_hit{false};
  std::atomic<int> break_thread{-1};
  std::atomic<int64_t> break_latency_ns{0};
  std::atomic<uint64_t> break_seq{0};
  std::atomic<bool> break_traced{false};
  /// CLOCK_MONOTONIC end of the run; 0 = no time limit. The engine writes it after the
  /// threads have started but before it publishes origin_ns (release store); threads read it
  /// only after AwaitOrigin() (acquire), so the plain field is never read while written.
  int64_t end_ns = 0;
};

/// The probe loop's clock: CLOCK_MONOTONIC, read inline. The loop takes its clock as a
/// template parameter (Probe::RunLoop) so unit tests can script time; this one is empty and
/// its Now() is MonotonicNs(), so the real path costs what a direct call costs.
struct MonotonicClock {
  int64_t Now() const { return MonotonicNs(); }
};

/// Waits until the engine publishes the grid origin (C++20 atomic wait, a futex).
int64_t AwaitOrigin(const std::atomic<int64_t>& origin);

/// A probe or injector thread has finished its set-up (or given up on it): counts it in
/// `ready` and wakes the engine waiting in AwaitReady.
void SignalReady(std::atomic<int>& ready);

/// Waits until `ready` reaches `count` or `timeout_ns` has passed, on a futex (no polling).
/// True when every thread reported ready in time.
bool AwaitReady(std::atomic<int>& ready, int count, int64_t timeout_ns);

/// The engine's readiness timeout: SetLoopHooks' ready_timeout_ns, else 10 s.
int64_t ReadyTimeoutNs();

/// One measurement thread: RT set-up inside the thread, then the loop, writing only into
/// memory allocated before it starts.
class Probe {
 public:
  Probe(const LatencyPlan& plan, const ThreadPlan& thread, WakePath path, RunShared& shared,
        SampleRing* ring, Tracer* tracer);
  ~Probe();
  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;

  Status Start();
  void Join();
  void Interrupt() { source_->Interrupt(); }

  /// Before Start(): this CPU's injector spins `delay_ns` from the grid origin + k *
  /// `period_ns` (k >= 1); the samples whose deadline falls in a spin go to
  /// ProbeRecord::injected_histogram as well.
  void WatchInjections(int64_t period_ns, int64_t delay_ns);

  LiveProbe Live() const;
  /// Fills `out` with what this probe has measured so far while it keeps running (for
  /// checkpoints): a consistent live copy of the histogram (Histogram::LiveCopyTo) and the
  /// counters, read with relaxed atomics; periods_elapsed is samples + skipped + grid
  /// restarts. Reuses `out`'s histogram, so a second call allocates nothing. Leaves out the
  /// -h histogram, spikes, injections and notes: the loop or its epilogue writes those
  /// without atomics. `degraded` is live (a probe that lost its policy or pinning says so at
  /// once, not only at the end). Non-RT threads only.
  void LiveResultTo(ProbeRecord& out) const;
  /// The result; call after Join().
  ProbeRecord TakeResult();
  /// True once the thread has left its loop (for injectors watching it).
  bool done() const { return done_.load(std::memory_order_acquire); }
  /// CLOCK_MONOTONIC time of the last activation (0 if none); call after Join().
  int64_t last_wake_ns() const { return last_wake_ns_.load(std::memory_order_relaxed); }
  /// The probe thread's tid (gettid), known once it reported ready; 0 before.
  int tid() const { return tid_.load(std::memory_order_relaxed); }
  /// The tid of the wake source's helper thread (WakeSource::HelperTid; 0 = none), or -1
  /// while the probe has not armed its source yet (it does so after the grid origin).
  int helper_tid() const { return helper_tid_.load(std::memory_order_acquire); }
  /// Set when the probe could not run at all (e.g. the wake path failed to arm).
  const std::optional<Error>& failure() const { return failure_; }

  /// The measurement loop and its epilogue, run in the calling thread on `source` and
  /// `clock`. The probe thread calls it with its armed wake source and MonotonicClock; unit
  /// tests call it (without Start(), so without a thread or RT set-up) with a scripted source
  /// and clock. `Source` needs Wait(int64_t) -> WakeResult, GridOrigin(int64_t) and
  /// RestartsGridOnOverrun(); `Clock` needs Now(). The grid origin must be published in the
  /// shared state first. Defined in measure/probe_loop.h.
  template <typename Source, typename Clock>
  void RunLoop(Source& source, Clock clock);

 private:
  static void* ThreadEntry(void* self);
  void ThreadMain();
  void SetUp();
  /// Sets result_.degraded and its live copy.
  void MarkDegraded();
  void Loop();
  /// Around the loop: the test hooks (SetLoopHooks), then, on leaving, the counters and notes
  /// the loop kept in atomics or locals copied into the result.
  void EnterLoop();
  void LeaveLoop();
  /// The measurement loop. kExtras compiles in the optional work (-h histogram, spikes,
  /// sample ring, breaktrace, deadline re-anchoring); without it the loop is only the
  /// wait, two clock reads' worth of arithmetic and the histogram record. Never inlined into
  /// RunLoop: as its own function it compiles as it did before the clock seam (inlined, the
  /// measured instructions per sample grew by about 1.5).
  template <bool kExtras, typename Source, typename Clock>
  [[gnu::noinline]] void LoopImpl(Source& source, Clock clock);
  void RecordLinear(int64_t latency_ns, uint64_t cycle);
  void RecordSpike(uint64_t seq, int64_t expected_ns, int64_t latency_ns);

  const LatencyPlan& plan_;
  const ThreadPlan thread_;
  int64_t inject_period_ns_ = 0;  ///< WatchInjections; 0: no injector on this CPU.
  int64_t inject_delay_ns_ = 0;
  const WakePath path_;
  RunShared& shared_;
  SampleRing* ring_;
  Tracer* tracer_;
  std::unique_ptr<WakeSource> source_;

  ProbeRecord result_;
  pthread_t handle_{};
  bool started_ = false;
  std::optional<Error> failure_;
  int wait_error_ = 0;
  uint64_t ring_pushed_base_ = 0;
  uint64_t ring_dropped_base_ = 0;

  std::atomic<int> tid_{0};
  std::atomic<int> helper_tid_{-1};
  /// Set (release) once SetUp() has written result_.policy and result_.priority.
  std::atomic<bool> set_up_{false};
  std::atomic<int64_t> cur_ns_{0};
  std::atomic<uint64_t> missed_{0};
  std::atomic<uint64_t> skipped_{0};
  std::atomic<uint64_t> grid_restarts_{0};
  std::atomic<int64_t> last_wake_ns_{0};
  std::atomic<bool> done_{false};
  /// result_.degraded as other threads may read it while the probe runs (MarkDegraded()).
  std::atomic<bool> degraded_{false};
};

}  // namespace rtpulse::measure
