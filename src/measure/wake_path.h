#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

namespace rtpulse::measure {

/// The kernel activation path a probe thread waits on. docs/wake-paths.md says, for each,
/// whether a PREEMPT_RT kernel expires its timer in hard interrupt context (direct wake-up)
/// or defers it to the ktimers softirq thread.
enum class WakePath : uint8_t {
  kAbs = 0,       ///< clock_nanosleep(TIMER_ABSTIME): cyclictest's default.
  kRel = 1,       ///< clock_nanosleep relative (cyclictest -r).
  kTimerfd = 2,   ///< periodic timerfd, read() blocks.
  kPosix = 3,     ///< periodic POSIX timer, signal to the thread, sigwaitinfo (cyclictest -x).
  kItimer = 4,    ///< setitimer(ITIMER_REAL), SIGALRM, sigwaitinfo.
  kEpoll = 5,     ///< epoll_pwait2 timeout on an empty epoll set.
  kBusy = 6,      ///< spin on clock_gettime until the deadline: the floor.
  kDeadline = 7,  ///< SCHED_DEADLINE, sched_yield() to the next period.
  kXthread = 8,   ///< a waker thread sleeps to the deadline and posts an eventfd.
  /// An edge event of a real GPIO input line (`--wake gpio:CHIP:LINE`): latency from the
  /// kernel's edge timestamp to the thread running. Needs a line, so never in kAllWakePaths.
  kGpio = 9,
};

/// The timer paths (`--wake all`, suite files); kGpio needs a device line and is given alone.
inline constexpr WakePath kAllWakePaths[] = {
    WakePath::kAbs,   WakePath::kRel,  WakePath::kTimerfd,  WakePath::kPosix,  WakePath::kItimer,
    WakePath::kEpoll, WakePath::kBusy, WakePath::kDeadline, WakePath::kXthread};

/// What each wake path is, in one row: the checks and outputs that treat paths alike read
/// this table instead of naming paths. A new path is an enum value, a row here (in enum
/// order) and its wait in wake_source.cc.
struct WakePathTraits {
  WakePath path;
  std::string_view name;
  /// The period comes from a kernel periodic timer, which reports overruns itself.
  bool kernel_periodic = false;
  /// Why the path's timer is one per process (ITIMER_REAL), or empty: such a path takes one
  /// probe thread, and `--wake all` leaves it out when there are more.
  std::string_view one_per_process = {};
  /// The path sets the thread's scheduling policy itself (SCHED_DEADLINE): no CPU pin, no
  /// FIFO priority of its own.
  bool owns_policy = false;
  /// Needs a device line (gpio): given alone, never part of `--wake all`.
  bool needs_device = false;
  /// Keeps its CPU busy the whole run (busy): no path for a continuous service.
  bool spins = false;
};

inline constexpr WakePathTraits kWakePathTable[] = {
    {.path = WakePath::kAbs, .name = "abs"},
    {.path = WakePath::kRel, .name = "rel"},
    {.path = WakePath::kTimerfd, .name = "timerfd", .kernel_periodic = true},
    {.path = WakePath::kPosix, .name = "posix", .kernel_periodic = true},
    {.path = WakePath::kItimer,
     .name = "itimer",
     .kernel_periodic = true,
     .one_per_process = "ITIMER_REAL is one per process"},
    {.path = WakePath::kEpoll, .name = "epoll"},
    {.path = WakePath::kBusy, .name = "busy", .spins = true},
    {.path = WakePath::kDeadline, .name = "deadline", .owns_policy = true},
    {.path = WakePath::kXthread, .name = "xthread"},
    {.path = WakePath::kGpio, .name = "gpio", .needs_device = true},
};

constexpr bool WakePathTableInEnumOrder() {
  for (size_t i = 0; i < std::size(kWakePathTable); ++i) {
    if (static_cast<size_t>(kWakePathTable[i].path) != i) return false;
  }
  return true;
}
static_assert(WakePathTableInEnumOrder(), "kWakePathTable: one row per WakePath, in enum order");

/// The row of `path`; nullptr for a value outside the enum (a corrupt samples file).
constexpr const WakePathTraits* FindWakePathTraits(WakePath path) {
  const auto i = static_cast<size_t>(path);
  return i < std::size(kWakePathTable) ? &kWakePathTable[i] : nullptr;
}

constexpr std::string_view WakePathName(WakePath path) {
  const WakePathTraits* t = FindWakePathTraits(path);
  return t != nullptr ? t->name : "unknown";
}

inline std::optional<WakePath> WakePathFromName(std::string_view name) {
  for (WakePath p : kAllWakePaths) {
    if (WakePathName(p) == name) return p;
  }
  return std::nullopt;
}

/// Whether a continuous service (`serve`, for months) can measure on the path: one that
/// spins a CPU, owns the policy, needs a device or is one per process cannot.
constexpr bool SuitsContinuousService(const WakePathTraits& t) {
  return !t.spins && !t.owns_policy && !t.needs_device && t.one_per_process.empty();
}

/// Paths that set the thread's scheduling policy themselves (SCHED_DEADLINE): not pinned,
/// no FIFO priority.
constexpr bool OwnsPolicy(WakePath path) {
  const WakePathTraits* t = FindWakePathTraits(path);
  return t != nullptr && t->owns_policy;
}

/// Paths whose period comes from a kernel periodic timer, which reports overruns itself.
constexpr bool IsKernelPeriodic(WakePath path) {
  const WakePathTraits* t = FindWakePathTraits(path);
  return t != nullptr && t->kernel_periodic;
}

}  // namespace rtpulse::measure
