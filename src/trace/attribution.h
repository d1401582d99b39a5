// Why was it late: a pure function from the kernel events around one late wake-up to where
// its lateness went, in ns, adding up exactly to the lateness (docs/explain.md#attribution).
//
// The window is [expected, actual] on the sample's CPU. Every ns of it goes to exactly one
// part, the innermost context the trace shows at that instant:
//   hard IRQ (irq number + name, or an x86 vector)  >  softirq (vector, and the thread that
//   ran it: ktimers/N, ksoftirqd/N, irq/N-name, or the task it interrupted)  >  the task
//   running (comm, pid, policy, priority), or the idle task.
// The wake chain is found from the events, not assumed: the probe's timer expiry
// (hrtimer_expire_entry ... exit enclosing a sched_waking of the probe), the sched_waking
// of the probe (in hard-IRQ context = "direct"; inside a softirq run by a thread =
// "deferred through that thread", whose own wake-up and switch-in are then part of the
// chain; on another CPU = "cross-CPU"), and the sched_switch to the probe. Time the chain
// itself takes (the IRQ or softirq that woke the probe, the switch-in to the probe's clock
// read) is kWake. Before the timer's interrupt arrives, the running task cannot have delayed
// it (only an interrupts-off section or something outside the guest can): that time is
// kIdle when the CPU was idle (idle exit) and kUnaccounted otherwise, as is any stretch the
// trace does not cover (no event history, lost events). On a VM, unaccounted time is most
// likely the host; the verdict says so and never guesses further.
//
// Who runs on the CPU comes from sched_switch and, where the kernel records no switch (some
// kernels never trace the switch out of the idle task, nor a preemption on IRQ return), from
// every event's common_pid: it is the task current on the event's CPU (in hard-IRQ and softirq
// context the interrupted task, so an IRQ event with pid 0 says the idle task was current).
// When it disagrees with the task the timeline has, the CPU switched at an unrecorded moment
// between the previous event on that CPU and this one: the switch is placed at the previous
// event (typically the IRQ or softirq exit after the wake-up: the CPU schedules as soon as it
// leaves the interrupt). The probe's clock read at actual_ns is such an observation too: of
// the probe when its tid is known, else of the task the first event on the CPU after
// actual_ns names (not the idle task). A probe switched in that way has its "switch-in" start
// at the inferred point; Explanation::inferred_switches counts them (docs/explain.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/event.h"

namespace rtpulse::trace {

/// One late sample, as the explainer hands it over.
struct SpikeInput {
  int cpu = 0;              ///< CPU the sample ran on (the probe's pinned CPU, or where it ran).
  int thread = 0;           ///< Probe thread index (cyclictest's T: N).
  uint64_t seq = 0;         ///< Period index.
  int64_t expected_ns = 0;  ///< Deadline (CLOCK_MONOTONIC).
  int64_t actual_ns = 0;    ///< The probe's clock read after waking (CLOCK_MONOTONIC).
  int probe_tid = 0;        ///< 0 = unknown: taken from the last sched_switch (recorded or
                            ///< inferred from common_pid) into a task on `cpu` at or before
                            ///< actual_ns.
  /// A gap in a thread that was running, not waiting (rtpulse noise: the poller read the clock
  /// at expected_ns and next at actual_ns). There is no wake chain: see ChainKind::kRunning.
  bool running = false;
};

enum class CauseKind : uint8_t {
  kIrq,          ///< A hard IRQ handler or an x86 vector other than the chain's own.
  kSoftirq,      ///< A softirq vector other than the chain's own (name says in which thread).
  kThread,       ///< Another task held the CPU while the probe (or its waker) was runnable.
  kWake,         ///< The wake chain itself: timer IRQ / softirq that woke it, switch-in.
  kIdle,         ///< The CPU was idle when the timer was due: idle exit (or the host).
  kUnaccounted,  ///< Nothing in the trace explains it (on a VM: likely the host).
};
std::string_view CauseKindName(CauseKind kind);  ///< "irq", "softirq", "thread", "wake", ...

/// One cause inside one spike. Parts of one spike are distinct (kind, name) pairs.
struct Part {
  CauseKind kind = CauseKind::kUnaccounted;
  /// Stable, human-readable, groups across spikes:
  ///   irq: "irq 45 eth0", "local_timer" (vector)   softirq: "NET_RX in ktimers/2"
  ///   thread: "stress-ng-cpu 1234 rt 90" / "kworker/1:1 88 other" / "dl 7 deadline"
  ///   wake: "timer irq", "HRTIMER softirq in ktimers/1", "switch-in"
  ///   idle: "idle"   unaccounted: "unaccounted"
  std::string name;
  int64_t ns = 0;      ///< Time of the window spent in it.
  uint32_t count = 0;  ///< How many separate stretches (IRQ/softirq entries, task runs).
};

/// How the probe was woken, as the events show it. kRunning: it was not woken, it was running
/// (SpikeInput::running). Then every ns of the gap goes to what held the CPU: hard IRQ,
/// softirq, another task (kThread), the thread's own time after such a task switched it back
/// in (kWake "switch-in"), and the thread's own run at the gap's start, where it was current
/// yet did not run its code: kUnaccounted (an NMI, SMI, firmware or the VM's host).
enum class ChainKind : uint8_t { kUnknown, kDirect, kDeferred, kCrossCpu, kRunning };
std::string_view ChainKindName(ChainKind kind);  ///< "unknown", "direct", "deferred", ...

struct Explanation {
  SpikeInput spike;
  int64_t lateness_ns = 0;  ///< actual - expected (0 if not later); == sum of parts[].ns.
  std::vector<Part> parts;  ///< Largest first; ties by kind then name.
  ChainKind chain = ChainKind::kUnknown;
  std::string chain_thread;  ///< kDeferred: the thread that ran the softirq ("ktimers/2").
  int probe_tid = 0;         ///< As found (or given).
  /// False when the events do not cover the whole window (history starts inside it, the
  /// kernel reported lost events for this CPU in it): the gap is in kUnaccounted and
  /// `incomplete_reason` says why.
  bool complete = true;
  std::string incomplete_reason;
  /// Task switches on the spike's CPU the kernel did not record, inferred from common_pid
  /// (see the top of this file), whose run overlaps the window; the verdict says so when
  /// there are any.
  int inferred_switches = 0;
  std::string window_file;  ///< Set by the explainer when the raw window was saved.
};

/// Attributes one spike. `events` are the events of the window's CPUs (and of any CPU that
/// woke the probe) in timestamp order, including history before expected_ns (the last
/// sched_switch on the CPU tells which task was running when the window opened) and, after
/// actual_ns, at least the first event on the spike's CPU if there is one (it tells who ran at
/// actual_ns when that switch went unrecorded). `loss` says whether the kernel dropped events
/// in the window or rtpulse's store had dropped its start: either makes it incomplete, each
/// with its own reason.
Explanation Attribute(const std::vector<TraceEvent>& events, const SpikeInput& spike,
                      const WindowLoss& loss = {});

/// One line: "+83 us: 61 us softirq NET_RX in ktimers/2, 15 us irq 45 eth0, 7 us
/// unaccounted (likely the host)". Values in us with one decimal below 10 us, whole us
/// above; parts below 1 % of the lateness are folded into "+N other".
std::string Verdict(const Explanation& explanation);

/// A row of the per-run cause table.
struct CauseRow {
  CauseKind kind = CauseKind::kUnaccounted;
  std::string name;
  int64_t total_ns = 0;  ///< Sum over spikes.
  uint64_t spikes = 0;   ///< Spikes it appears in.
  int64_t max_ns = 0;    ///< Largest share in one spike.
};

struct CauseTable {
  std::vector<CauseRow> by_time;   ///< Sorted by total_ns, largest first.
  std::vector<CauseRow> by_count;  ///< Same rows sorted by spikes, then total_ns.
};
CauseTable Summarise(const std::vector<Explanation>& explanations);

}  // namespace rtpulse::trace
