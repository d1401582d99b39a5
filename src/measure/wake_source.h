#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <ctime>
#include <memory>
#include <string>

#include "core/clock.h"
#include "core/error.h"
#include "measure/rt_setup.h"
#include "measure/wake_path.h"

namespace rtpulse::measure {

/// Settings a wake source needs, fixed before the probe loop starts.
struct WakeParams {
  int64_t start_ns = 0;     ///< CLOCK_MONOTONIC origin of the period grid (deadline 0).
  int64_t interval_ns = 0;  ///< Period.
  /// The clock to sleep on (cyclictest -c; abs, rel and posix): deadlines are converted to it
  /// and each wake-up's `expected_ns` is moved by how far it drifted from CLOCK_MONOTONIC
  /// since Arm(), so the engine's latency (CLOCK_MONOTONIC now - expected) is the latency on
  /// this clock.
  clockid_t clock = CLOCK_MONOTONIC;
  int cpu = -1;  ///< The probe's CPU (-1: not pinned); the xthread waker uses it.
  SchedPolicy policy = SchedPolicy::kFifo;
  int priority = 0;
  int64_t deadline_runtime_ns = 0;  ///< SCHED_DEADLINE runtime (deadline path only).
  /// SCHED_DEADLINE relative deadline (deadline path only); 0: the period.
  int64_t deadline_relative_ns = 0;
  /// SCHED_DEADLINE sched_flags, e.g. kSchedFlagDlOverrun (deadline path only).
  uint64_t deadline_flags = 0;
  const std::atomic<bool>* stop = nullptr;  ///< Set when the run must end.
  int64_t end_ns = 0;                       ///< CLOCK_MONOTONIC end of the run (-D); 0: none.
  /// gpio path: the input line ("gpio:CHIP:LINE") and the optional output line toggled at
  /// the interval to drive it through a wire (empty: the edges come from outside).
  std::string gpio_line;
  std::string gpio_drive;
};

/// What one wait returned.
struct WakeResult {
  int64_t expected_ns = 0;  ///< The deadline this activation serves.
  /// Kernel-reported expirations since the last wait (timerfd read count, POSIX timer
  /// overrun + 1, eventfd count); 0 when the source cannot tell and the engine derives
  /// skipped periods from the latency.
  uint64_t expirations = 0;
  int error = 0;  ///< errno of a failed wait; the probe stops and reports it.
  /// The source ended the run without an activation (event-driven sources: the run's end or
  /// a stop came while no event did); nothing is recorded for it.
  bool ended = false;
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
  /// itself (SCHED_DEADLINE, ITIMER_REAL) return their own; the rest keep the planned one.
  virtual int64_t GridOrigin(int64_t planned_ns) const { return planned_ns; }
  /// True when the kernel may restart the period after a late timer instead of keeping
  /// the grid (SCHED_DEADLINE's CBS): after an overrun, or a wake-up before the expected
  /// time, the engine re-anchors on the next wake-up and counts it in grid_restarts.
  virtual bool RestartsGridOnOverrun() const { return false; }
  /// The tid of a thread this source runs for the probe (the xthread waker, the gpio edge
  /// driver); 0 = none. Known when Arm() has returned.
  virtual int HelperTid() const { return 0; }
  /// Extra remark for the result (e.g. how the deadline grid was anchored).
  virtual const char* note() const { return nullptr; }
  /// Remark known only after the loop (e.g. edges driven against edges seen); empty: none.
  /// `problem` set: the run is marked degraded with it.
  virtual std::string EndNote(bool& problem) const {
    problem = false;
    return {};
  }
};

/// clock_nanosleep(TIMER_ABSTIME): an hrtimer sleeper, expired from hard-irq context for RT
/// tasks on PREEMPT_RT. Declared here (final, inline) so the probe loop calls it directly.
/// It issues the system call itself: glibc's wrapper is a cancellation point whose
/// bookkeeping costs more instructions per sample than the rest of the loop (probes are
/// never cancelled).
class AbsSleep final : public WakeSource {
 public:
  Status Arm(const WakeParams&) override { return Status::Ok(); }
  WakeResult Wait(int64_t deadline_ns) override {
    // Deadlines are CLOCK_MONOTONIC times, never negative: unsigned division by the
    // constant is a multiply and a shift, with no sign fix-up (ToTimespec's general case).
    const auto u = static_cast<uint64_t>(deadline_ns);
    timespec ts;
    ts.tv_sec = static_cast<time_t>(u / kNsPerSec);
    ts.tv_nsec = static_cast<long>(u - static_cast<uint64_t>(ts.tv_sec) * kNsPerSec);
    long rc;
    while ((rc = AbsNanosleep(&ts)) != 0) {
      if (rc != EINTR) return {deadline_ns, 0, static_cast<int>(rc)};
    }
    return {deadline_ns, 0, 0};
  }

  /// clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, ts): 0 or the error number. On x86-64
  /// and arm64 the system call instruction is issued inline (3-4 instructions instead of
  /// glibc's generic syscall(), 11); elsewhere through syscall().
  static long AbsNanosleep(const timespec* ts) {
#if defined(__x86_64__)
    long ret;
    register long r10 asm("r10") = 0;  // rmtp = NULL
    asm volatile("syscall"
                 : "=a"(ret)
                 : "a"(long{SYS_clock_nanosleep}), "D"(long{CLOCK_MONOTONIC}),
                   "S"(long{TIMER_ABSTIME}), "d"(ts), "r"(r10)
                 : "rcx", "r11", "memory");
    return ret < 0 ? -ret : 0;
#elif defined(__aarch64__)
    register long x8 asm("x8") = SYS_clock_nanosleep;
    register long x0 asm("x0") = CLOCK_MONOTONIC;
    register long x1 asm("x1") = TIMER_ABSTIME;
    register const timespec* x2 asm("x2") = ts;
    register long x3 asm("x3") = 0;
    asm volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
    return x0 < 0 ? -x0 : 0;
#else
    return syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, ts, nullptr) == 0 ? 0
                                                                                          : errno;
#endif
  }
};

/// The source of `path`; `clock` other than CLOCK_MONOTONIC (cyclictest -c) gives the abs
/// path's general version instead of AbsSleep.
std::unique_ptr<WakeSource> MakeWakeSource(WakePath path, clockid_t clock = CLOCK_MONOTONIC);

/// Whether `path` can sleep on another clock than CLOCK_MONOTONIC (cyclictest's own modes).
constexpr bool WakePathTakesClock(WakePath path) {
  return path == WakePath::kAbs || path == WakePath::kRel || path == WakePath::kPosix;
}

/// The gpio path's source (gpio_wake.cc; docs/wake-paths.md "gpio").
std::unique_ptr<WakeSource> MakeGpioWakeSource();

/// Signal used by POSIX timers; must be blocked in every thread before probes start.
int PosixTimerSignal();

}  // namespace rtpulse::measure
