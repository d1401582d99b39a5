#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "core/error.h"
#include "measure/rt_setup.h"
#include "measure/wake_path.h"

namespace rtpulse::measure {

/// Settings a wake source needs, fixed before the probe loop starts.
struct WakeParams {
  int64_t start_ns = 0;     ///< CLOCK_MONOTONIC origin of the period grid (deadline 0).
  int64_t interval_ns = 0;  ///< Period.
  int cpu = -1;             ///< The probe's CPU (-1: not pinned); the xthread waker uses it.
  Policy policy = Policy::kFifo;
  int priority = 0;
  int64_t deadline_runtime_ns = 0;  ///< SCHED_DEADLINE runtime (deadline path only).
  const std::atomic<bool>* stop = nullptr;  ///< Set when the run must end.
};

/// What one wait returned.
struct WakeResult {
  int64_t expected_ns = 0;  ///< The deadline this activation serves.
  /// Kernel-reported expirations since the last wait (timerfd read count, POSIX timer
  /// overrun + 1, eventfd count); 0 when the source cannot tell and the engine derives
  /// skipped periods from the latency.
  uint64_t expirations = 0;
  int error = 0;  ///< errno of a failed wait; the probe stops and reports it.
};

/// One kernel activation path (see wake_path.h). Created and used by one probe thread:
/// Arm() runs inside that thread after its RT setup, Wait() in its loop.
class WakeSource {
 public:
  virtual ~WakeSource() = default;
  /// Prepares timers/fds. Runs in the probe thread. Allocation is allowed here.
  virtual Status Arm(const WakeParams& params) = 0;
  /// Blocks until the activation for `deadline_ns` (absolute, CLOCK_MONOTONIC). Periodic
  /// sources ignore the argument and follow their own grid; the relative source returns
  /// the deadline it actually slept for. Must not allocate.
  virtual WakeResult Wait(int64_t deadline_ns) = 0;
  /// Releases what Arm() set up; called in the probe thread after the loop.
  virtual void Disarm() {}
  /// Called from the controlling thread when stop is set, to unblock a waiting probe.
  virtual void Interrupt() {}
  /// Origin of the deadline grid once armed. Sources whose period the kernel anchors
  /// itself (SCHED_DEADLINE) return their own; the rest keep the planned one.
  virtual int64_t GridOrigin(int64_t planned_ns) const { return planned_ns; }
  /// True when the kernel may restart the period after a late timer instead of keeping
  /// the grid (SCHED_DEADLINE's CBS): a wake-up before the expected time then proves a
  /// restart, and the engine re-anchors there rather than report a negative latency.
  virtual bool RestartsGridOnOverrun() const { return false; }
  /// Extra remark for the result (e.g. how the deadline grid was anchored).
  virtual const char* note() const { return nullptr; }
};

std::unique_ptr<WakeSource> MakeWakeSource(WakePath path);

/// Signal used by POSIX timers; must be blocked in every thread before probes start.
int PosixTimerSignal();

}  // namespace rtpulse::measure
