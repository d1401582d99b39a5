#pragma once

#include <cstdint>
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

constexpr std::string_view WakePathName(WakePath path) {
  switch (path) {
    case WakePath::kAbs:
      return "abs";
    case WakePath::kRel:
      return "rel";
    case WakePath::kTimerfd:
      return "timerfd";
    case WakePath::kPosix:
      return "posix";
    case WakePath::kItimer:
      return "itimer";
    case WakePath::kEpoll:
      return "epoll";
    case WakePath::kBusy:
      return "busy";
    case WakePath::kDeadline:
      return "deadline";
    case WakePath::kXthread:
      return "xthread";
    case WakePath::kGpio:
      return "gpio";
  }
  return "unknown";
}

inline std::optional<WakePath> WakePathFromName(std::string_view name) {
  for (WakePath p : kAllWakePaths) {
    if (WakePathName(p) == name) return p;
  }
  return std::nullopt;
}

/// Paths whose period comes from a kernel periodic timer, which reports overruns itself.
constexpr bool IsKernelPeriodic(WakePath path) {
  return path == WakePath::kTimerfd || path == WakePath::kPosix || path == WakePath::kItimer;
}

}  // namespace rtpulse::measure
