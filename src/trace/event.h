// One kernel trace event as rtpulse keeps it: decoded once by the session's reader (from the
// ring buffer's binary records, through libtraceevent) into a small fixed-size struct, so the
// attribution (attribution.h) works on plain data and its tests script sequences by hand.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace rtpulse::trace {

/// The events `--explain` enables (docs/explain.md lists them with their tracefs names).
enum class EventKind : uint8_t {
  kSchedSwitch,         ///< sched:sched_switch: prev_* leaves the CPU, next_* runs.
  kSchedWaking,         ///< sched:sched_waking: the waker's CPU; target in next_*, target_cpu.
  kSchedWakeup,         ///< sched:sched_wakeup: the target is on a runqueue (target_cpu).
  kIrqEntry,            ///< irq:irq_handler_entry: number = irq, name = action name.
  kIrqExit,             ///< irq:irq_handler_exit: number = irq.
  kVectorEntry,         ///< irq_vectors:*_entry (x86: local_timer, reschedule, call_function,
                        ///< ...): number = vector, name = the event name without "_entry".
  kVectorExit,          ///< irq_vectors:*_exit, same fields.
  kSoftirqRaise,        ///< irq:softirq_raise: number = vec, name = "TIMER", "NET_RX", ...
  kSoftirqEntry,        ///< irq:softirq_entry.
  kSoftirqExit,         ///< irq:softirq_exit.
  kHrtimerStart,        ///< timer:hrtimer_start: address = hrtimer, expires_ns, function.
  kHrtimerExpireEntry,  ///< timer:hrtimer_expire_entry: address, function (symbol if known).
  kHrtimerExpireExit,   ///< timer:hrtimer_expire_exit: address.
  kIpi,                 ///< ipi:ipi_raise / ipi_send_cpu / ipi_entry ...: name = reason.
  kWorkStart,           ///< workqueue:workqueue_execute_start: function.
  kWorkEnd,             ///< workqueue:workqueue_execute_end.
  kSyscallEnter,        ///< raw_syscalls:sys_enter: number = syscall id (probe CPUs only).
  kSyscallExit,         ///< raw_syscalls:sys_exit.
  kCpuIdle,             ///< power:cpu_idle: number = state (-1 = leaving idle).
  kTimerlat,            ///< ftrace:timerlat (timerlat tracer sample): seq, context, latency.
  kTaskRename,          ///< task:task_rename (an exec, prctl(PR_SET_NAME)): the task in
                        ///< next_pid, its new name in next_comm.
  kOther,               ///< Anything else read from the instance (kept for the raw window).
};

/// `comm` fields are the kernel's TASK_COMM_LEN (16) bytes, NUL-terminated.
using Comm = std::array<char, 16>;

struct TraceEvent {
  int64_t ts_ns = 0;  ///< trace_clock "mono": the same time base as CLOCK_MONOTONIC.
  int32_t cpu = 0;    ///< CPU whose buffer holds the event.
  EventKind kind = EventKind::kOther;
  int32_t pid = 0;  ///< common_pid: the task current on `cpu` when it fired (0 = idle).

  // sched_switch: prev_* -> next_*. sched_waking/wakeup: the woken task in next_*.
  int32_t prev_pid = 0;
  int32_t prev_prio = 0;   ///< Kernel prio: 0..99 RT (rt_priority = 99 - prio), 100+ CFS.
  int64_t prev_state = 0;  ///< 0 = still runnable (preempted); else it blocked.
  Comm prev_comm{};
  int32_t next_pid = 0;
  int32_t next_prio = 0;
  Comm next_comm{};
  int32_t target_cpu = -1;  ///< sched_waking/wakeup: the CPU the woken task will run on.

  int64_t number = 0;  ///< irq / vector / softirq vec / syscall id / idle state / timerlat seq.
  std::array<char, 32> name{};  ///< irq action, vector, softirq vector, ipi reason, function.
  uint64_t address = 0;         ///< hrtimer: the timer; workqueue: the work item.
  int64_t expires_ns = 0;       ///< hrtimer_start: hard expiry (same clock as ts_ns for
                                ///< CLOCK_MONOTONIC timers).
  // ftrace:timerlat: context 0 = irq, 1 = thread, 2 = user-return; latency in ns.
  int32_t timerlat_context = 0;
  int64_t timerlat_latency_ns = 0;

  std::string_view Name() const { return {name.data()}; }
  std::string_view PrevComm() const { return {prev_comm.data()}; }
  std::string_view NextComm() const { return {next_comm.data()}; }
};

/// Why a trace window may not hold every event of its interval. `kernel`: the kernel's
/// ring buffer overran (or a sub-buffer was unreadable) on one of its CPUs inside it, so
/// events are missing mid-window. `trimmed`: rtpulse's own store had already dropped events
/// from the window's start (it keeps a bounded time and event count per CPU) before the
/// window was asked for: the explainer came to that spike too late.
struct WindowLoss {
  bool kernel = false;
  bool trimmed = false;
  bool any() const { return kernel || trimmed; }
};

}  // namespace rtpulse::trace
