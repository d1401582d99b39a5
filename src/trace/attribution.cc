// Attribution of one late wake-up (docs/explain.md#attribution). Two steps: a replay of the
// spike CPU's events cuts the window into stretches with a fixed context (innermost hard-IRQ
// frame, innermost softirq frame of the running task, the task run), then the wake chain found
// in the events labels every stretch. Each ns of the window lands in exactly one stretch.
#include "trace/attribution.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

namespace rtpulse::trace {
namespace {

constexpr int kAttrNone = -1;
constexpr int kAttrUnknownOwner = -1;       // Pids are >= 0.
constexpr int kAttrPrioUnknown = -1000;     // An inferred run of a task no event describes.
constexpr int64_t kAttrInferredState = -1;  // prev_state of a synthetic (inferred) sched_switch.

// One hard-IRQ or softirq frame: an entry and (maybe) its exit on the spike's CPU.
struct AttrFrame {
  bool hard = true;
  bool vector = false;   // hard: an x86 vector rather than an irq_handler.
  int64_t number = 0;    // irq, vector or softirq vec.
  std::string name;      // "irq 45 eth0", "local_timer", "NET_RX in ktimers/1".
  std::string vec_name;  // softirq: "NET_RX".
  std::string task;      // softirq: the task that ran it ("ktimers/1").
  int64_t entry_ns = 0;
  int parent_hard = kAttrNone;  // softirq: the hard frame open when it entered.
  bool saw_hrtimer = false;     // hard: an hrtimer expired with it innermost.
};

// One run of a task on the CPU, from a sched_switch to the next (or the unknown start). A
// rename inside it (an exec, prctl) starts a new piece with the new name; every piece of one
// run (`group`: the index of its first) is named with the policy at the run's end, since a
// policy change (sched_setscheduler) leaves no event: the switch-out states it.
struct AttrRun {
  bool known = false;
  int pid = 0;
  std::string comm;
  int prio = 0;
  int group = 0;
};

// A stretch of the window with one context.
struct AttrStretch {
  int64_t from_ns = 0;
  int64_t to_ns = 0;
  int hard = kAttrNone;
  int soft = kAttrNone;
  int run = kAttrNone;
};

struct AttrContext {
  int hard = kAttrNone;
  int soft = kAttrNone;
  int run = kAttrNone;
};

// Frames and runs are referred to by int index (kAttrNone = none).
template <typename T>
auto& AttrAt(T& items, int index) {
  return items[static_cast<size_t>(index)];
}

std::string_view AttrSoftirqVectorName(int64_t vec) {
  static constexpr std::string_view kNames[] = {"HI",       "TIMER",   "NET_TX", "NET_RX",  "BLOCK",
                                                "IRQ_POLL", "TASKLET", "SCHED",  "HRTIMER", "RCU"};
  if (vec >= 0 && vec < static_cast<int64_t>(std::size(kNames))) return kNames[vec];
  return "";
}

std::string AttrThreadPartName(const AttrRun& run) {
  std::string policy;
  if (run.prio == kAttrPrioUnknown) {
    policy = "policy unknown";
  } else if (run.prio == -1) {
    policy = "deadline";
  } else if (run.prio >= 0 && run.prio < 100) {
    policy = "rt " + std::to_string(99 - run.prio);
  } else {
    policy = "other";
  }
  return run.comm + " " + std::to_string(run.pid) + " " + policy;
}

bool AttrNameSaysTimer(std::string_view name) {
  return name.find("timer") != std::string_view::npos;
}

// The comm and kernel prio of `pid` as the events name it (sched_waking, sched_switch): the
// first mention at or after `ts` (its name while it runs from there, after an exec too, and
// what a saved window, shorter in history, shows as well), else the latest before; "pid N"
// and an unknown prio if none.
std::pair<std::string, int> AttrDescribeTask(const std::vector<TraceEvent>& events, int pid,
                                             int64_t ts) {
  std::optional<std::pair<std::string, int>> before, after;
  for (const TraceEvent& e : events) {
    std::optional<std::pair<std::string, int>> seen;
    if ((e.kind == EventKind::kSchedWaking || e.kind == EventKind::kSchedSwitch) &&
        e.next_pid == pid) {
      seen.emplace(std::string(e.NextComm()), e.next_prio);
    } else if (e.kind == EventKind::kSchedSwitch && e.prev_pid == pid) {
      seen.emplace(std::string(e.PrevComm()), e.prev_prio);
    }
    if (!seen) continue;
    if (e.ts_ns < ts) {
      before = seen;
    } else if (!after) {
      after = seen;
    }
  }
  if (after) return *after;
  if (before) return *before;
  return {"pid " + std::to_string(pid), kAttrPrioUnknown};
}

// The spike CPU's events up to actual_ns (and every other CPU's) with the switches the kernel
// did not record added as synthetic sched_switch events (docs/explain.md#the-contexts-on-the-cpu):
// each event's common_pid (a sched_switch's prev_pid) is the task current on its CPU (in
// hard-IRQ or softirq context: the interrupted task). When it disagrees with the task the
// timeline has, the CPU switched between the previous event on that CPU and this one; the
// switch is placed at the previous event (the idle loop schedules as soon as it leaves the
// interrupt). The probe's clock read at actual_ns is such an observation too: of the probe
// when its tid is known, else of the task the first event on the CPU after actual_ns names
// (not the idle task: something read a clock). Nothing is inferred while the task is unknown
// (no sched_switch yet).
std::vector<TraceEvent> AttrWithInferredSwitches(const std::vector<TraceEvent>& events,
                                                 const SpikeInput& spike, int* inferred) {
  std::vector<TraceEvent> out;
  out.reserve(events.size() + 4);
  std::optional<int> current;            // The timeline's task on spike.cpu.
  std::optional<size_t> previous_local;  // Index in `out` of the previous spike.cpu event.
  auto add_switch = [&](int next_pid) {
    const TraceEvent& at = out[*previous_local];
    TraceEvent sw;
    sw.ts_ns = at.ts_ns;
    sw.cpu = spike.cpu;
    sw.kind = EventKind::kSchedSwitch;
    sw.pid = *current;
    sw.prev_pid = *current;
    sw.prev_state = kAttrInferredState;
    const auto [prev_comm, prev_prio] = AttrDescribeTask(events, *current, at.ts_ns);
    prev_comm.copy(sw.prev_comm.data(), std::min(prev_comm.size(), sw.prev_comm.size() - 1));
    sw.prev_prio = prev_prio;
    sw.next_pid = next_pid;
    const auto [next_comm, next_prio] = AttrDescribeTask(events, next_pid, at.ts_ns);
    next_comm.copy(sw.next_comm.data(), std::min(next_comm.size(), sw.next_comm.size() - 1));
    sw.next_prio = next_prio;
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(*previous_local) + 1, sw);
    current = next_pid;
  };
  std::optional<int> seen_after;  // common_pid of the first spike.cpu event after actual_ns.
  for (const TraceEvent& event : events) {
    const int seen = event.kind == EventKind::kSchedSwitch ? event.prev_pid : event.pid;
    if (event.cpu == spike.cpu && event.ts_ns <= spike.actual_ns) {
      if (current && previous_local && seen != *current) add_switch(seen);
      out.push_back(event);
      previous_local = out.size() - 1;
      if (event.kind == EventKind::kSchedSwitch) current = event.next_pid;
    } else {
      if (event.cpu == spike.cpu && !seen_after) seen_after = seen;
      out.push_back(event);
    }
  }
  // The probe read its clock at actual_ns: it was current then (its tid known), else the
  // first event on the CPU after actual_ns names who was (never the idle task).
  const std::optional<int> at_actual =
      spike.probe_tid > 0 ? std::optional<int>(spike.probe_tid) : seen_after;
  if (current && previous_local && at_actual && *at_actual != 0 && *at_actual != *current) {
    add_switch(*at_actual);
  }
  // Counted: the inferred switches whose run overlaps [expected, actual).
  std::vector<std::pair<int64_t, bool>> switches;  // (ts, inferred) on spike.cpu.
  for (const TraceEvent& e : out) {
    if (e.cpu == spike.cpu && e.kind == EventKind::kSchedSwitch && e.ts_ns <= spike.actual_ns) {
      switches.emplace_back(e.ts_ns, e.prev_state == kAttrInferredState);
    }
  }
  for (size_t k = 0; k < switches.size(); ++k) {
    const int64_t end = k + 1 < switches.size() ? switches[k + 1].first : spike.actual_ns;
    if (switches[k].second &&
        std::max(switches[k].first, spike.expected_ns) < std::min(end, spike.actual_ns)) {
      ++*inferred;
    }
  }
  return out;
}

// Replays the spike CPU's events: the frames, the runs, the stretches of [expected, actual]
// and the context at every sched_waking and softirq_raise on the CPU.
class AttrReplay {
 public:
  AttrReplay(const std::vector<TraceEvent>& events, const SpikeInput& spike) {
    runs_.push_back(AttrRun{});  // The run before the first sched_switch: unknown.
    int64_t last_ns = spike.expected_ns;
    for (size_t i = 0; i < events.size(); ++i) {
      const TraceEvent& event = events[i];
      if (event.ts_ns > spike.actual_ns) break;
      if (event.cpu != spike.cpu) continue;
      if (event.ts_ns > last_ns) {
        Emit(last_ns, event.ts_ns);
        last_ns = event.ts_ns;
      }
      Apply(event, i);
    }
    if (spike.actual_ns > last_ns) Emit(last_ns, spike.actual_ns);
    // The run open at the spike ends at the CPU's first switch after it: its name and policy
    // then are the ones nearest the spike.
    for (const TraceEvent& event : events) {
      if (event.cpu != spike.cpu || event.ts_ns <= spike.actual_ns ||
          event.kind != EventKind::kSchedSwitch) {
        continue;
      }
      EndRun(event);
      break;
    }
  }

  const std::vector<AttrFrame>& frames() const { return frames_; }
  const std::vector<AttrRun>& runs() const { return runs_; }
  const std::vector<AttrStretch>& stretches() const { return stretches_; }
  std::optional<AttrContext> ContextAt(size_t event_index) const {
    auto it = context_of_event_.find(event_index);
    if (it == context_of_event_.end()) return std::nullopt;
    return it->second;
  }
  // The run started by the sched_switch at `event_index` (kAttrNone if none).
  int RunOf(size_t event_index) const {
    auto it = run_of_switch_.find(event_index);
    return it == run_of_switch_.end() ? kAttrNone : it->second;
  }

 private:
  // Softirqs nest in the task that runs them; while that task is unknown they share one key.
  int SoftOwner() const {
    const AttrRun& run = AttrAt(runs_, current_run_);
    return run.known ? run.pid : kAttrUnknownOwner;
  }
  AttrContext Now() const {
    AttrContext context;
    context.run = current_run_;
    if (!hard_.empty()) context.hard = hard_.back();
    auto it = soft_.find(SoftOwner());
    if (it != soft_.end() && !it->second.empty()) context.soft = it->second.back();
    return context;
  }
  void Emit(int64_t from_ns, int64_t to_ns) {
    const AttrContext context = Now();
    stretches_.push_back({from_ns, to_ns, context.hard, context.soft, context.run});
  }
  static void PopThrough(std::vector<int>& stack, const std::vector<AttrFrame>& frames, bool hard,
                         bool vector, int64_t number) {
    for (size_t k = stack.size(); k-- > 0;) {
      const AttrFrame& frame = AttrAt(frames, stack[k]);
      if (frame.hard == hard && frame.vector == vector && frame.number == number) {
        stack.resize(k);
        return;
      }
    }
  }
  // A recorded switch away from the current run: its name and policy as they were at its end.
  void EndRun(const TraceEvent& sw) {
    const AttrRun& current = AttrAt(runs_, current_run_);
    if (!current.known || current.pid != sw.prev_pid || sw.prev_state == kAttrInferredState) {
      return;
    }
    AttrAt(runs_, current_run_).comm = std::string(sw.PrevComm());
    // A run's pieces are the runs from its first to the current one: a rename appends a
    // piece, and any switch starts a new run.
    for (int k = current.group; k <= current_run_; ++k) AttrAt(runs_, k).prio = sw.prev_prio;
  }
  void StartRun(AttrRun run) {
    runs_.push_back(std::move(run));
    current_run_ = static_cast<int>(runs_.size()) - 1;
  }
  void Apply(const TraceEvent& event, size_t index) {
    switch (event.kind) {
      case EventKind::kSchedSwitch: {
        EndRun(event);
        AttrRun run;
        run.known = true;
        run.pid = event.next_pid;
        run.comm = std::string(event.NextComm());
        run.prio = event.next_prio;
        run.group = static_cast<int>(runs_.size());
        StartRun(std::move(run));
        run_of_switch_[index] = current_run_;
        break;
      }
      case EventKind::kTaskRename: {
        const AttrRun& current = AttrAt(runs_, current_run_);
        if (!current.known || current.pid != event.next_pid) break;
        AttrRun piece = current;
        piece.comm = std::string(event.NextComm());
        StartRun(std::move(piece));
        break;
      }
      case EventKind::kIrqEntry:
      case EventKind::kVectorEntry: {
        AttrFrame frame;
        frame.vector = event.kind == EventKind::kVectorEntry;
        frame.number = event.number;
        if (frame.vector) {
          frame.name = event.Name().empty() ? "vector " + std::to_string(event.number)
                                            : std::string(event.Name());
        } else {
          frame.name = "irq " + std::to_string(event.number);
          if (!event.Name().empty()) frame.name += " " + std::string(event.Name());
        }
        frame.entry_ns = event.ts_ns;
        frames_.push_back(std::move(frame));
        hard_.push_back(static_cast<int>(frames_.size()) - 1);
        break;
      }
      case EventKind::kIrqExit:
      case EventKind::kVectorExit:
        PopThrough(hard_, frames_, true, event.kind == EventKind::kVectorExit, event.number);
        break;
      case EventKind::kSoftirqEntry: {
        AttrFrame frame;
        frame.hard = false;
        frame.number = event.number;
        frame.vec_name = event.Name().empty() ? std::string(AttrSoftirqVectorName(event.number))
                                              : std::string(event.Name());
        if (frame.vec_name.empty()) frame.vec_name = "vec " + std::to_string(event.number);
        const AttrRun& run = AttrAt(runs_, current_run_);
        frame.task = run.known ? run.comm : "pid " + std::to_string(event.pid);
        frame.name = frame.vec_name + " in " + frame.task;
        frame.entry_ns = event.ts_ns;
        frame.parent_hard = hard_.empty() ? kAttrNone : hard_.back();
        frames_.push_back(std::move(frame));
        soft_[SoftOwner()].push_back(static_cast<int>(frames_.size()) - 1);
        break;
      }
      case EventKind::kSoftirqExit: {
        auto it = soft_.find(SoftOwner());
        if (it != soft_.end()) PopThrough(it->second, frames_, false, false, event.number);
        break;
      }
      case EventKind::kHrtimerExpireEntry:
        if (!hard_.empty()) AttrAt(frames_, hard_.back()).saw_hrtimer = true;
        break;
      case EventKind::kSchedWaking:
      case EventKind::kSoftirqRaise:
        context_of_event_[index] = Now();
        break;
      default:
        break;
    }
  }

  std::vector<AttrFrame> frames_;
  std::vector<AttrRun> runs_;
  std::vector<AttrStretch> stretches_;
  std::vector<int> hard_;
  std::map<int, std::vector<int>> soft_;  // Per task (pid): softirqs nest in their thread.
  int current_run_ = 0;
  std::map<size_t, AttrContext> context_of_event_;
  std::map<size_t, int> run_of_switch_;
};

// The wake chain as the events show it.
struct AttrChain {
  ChainKind kind = ChainKind::kUnknown;
  int probe_tid = 0;
  int probe_run = kAttrNone;  // The run the probe's switch-in started.
  int chain_hard = kAttrNone;
  int chain_soft = kAttrNone;
  int deferring_pid = kAttrNone;
  std::string chain_thread;
  int64_t start_ns = std::numeric_limits<int64_t>::max();  // When the chain's IRQ arrived.
  // The probe's own syscalls on the spike's CPU (raw_syscalls, full event set): its first
  // sys_enter after the deadline (it went to wait only then: late to sleep) and its last
  // sys_exit up to the clock read (the return from the wait). Never = not in the window.
  int64_t late_enter_ns = std::numeric_limits<int64_t>::max();
  int64_t exit_ns = std::numeric_limits<int64_t>::max();
};

void AttrFindProbeSyscalls(const std::vector<TraceEvent>& events, const SpikeInput& spike,
                           AttrChain& chain) {
  for (const TraceEvent& e : events) {
    if (e.ts_ns > spike.actual_ns) break;
    if (e.cpu != spike.cpu || e.pid != chain.probe_tid || e.ts_ns < spike.expected_ns) continue;
    if (e.kind == EventKind::kSyscallEnter && e.ts_ns > spike.expected_ns &&
        chain.late_enter_ns == std::numeric_limits<int64_t>::max()) {
      chain.late_enter_ns = e.ts_ns;
    }
    if (e.kind == EventKind::kSyscallExit) chain.exit_ns = e.ts_ns;
  }
}

std::optional<size_t> AttrLastSwitchInto(const std::vector<TraceEvent>& events, int cpu, int pid,
                                         int64_t from_ns, int64_t to_ns) {
  std::optional<size_t> found;
  for (size_t i = 0; i < events.size() && events[i].ts_ns <= to_ns; ++i) {
    const TraceEvent& e = events[i];
    if (e.kind == EventKind::kSchedSwitch && e.cpu == cpu && e.ts_ns >= from_ns &&
        (pid < 0 || e.next_pid == pid)) {
      found = i;
    }
  }
  return found;
}

std::optional<size_t> AttrLastWaking(const std::vector<TraceEvent>& events, int pid,
                                     int64_t from_ns, int64_t to_ns) {
  std::optional<size_t> found;
  for (size_t i = 0; i < events.size() && events[i].ts_ns <= to_ns; ++i) {
    const TraceEvent& e = events[i];
    if (e.kind == EventKind::kSchedWaking && e.next_pid == pid && e.ts_ns >= from_ns) found = i;
  }
  return found;
}

std::optional<size_t> AttrLastRaise(const std::vector<TraceEvent>& events, int cpu, int64_t vec,
                                    int64_t from_ns, int64_t to_ns) {
  std::optional<size_t> found;
  for (size_t i = 0; i < events.size() && events[i].ts_ns <= to_ns; ++i) {
    const TraceEvent& e = events[i];
    if (e.kind == EventKind::kSoftirqRaise && e.cpu == cpu && e.number == vec &&
        e.ts_ns >= from_ns) {
      found = i;
    }
  }
  return found;
}

AttrChain AttrFindChain(const std::vector<TraceEvent>& events, const SpikeInput& spike,
                        const AttrReplay& replay) {
  AttrChain chain;
  chain.probe_tid = spike.probe_tid;
  if (chain.probe_tid <= 0) {
    auto last = AttrLastSwitchInto(events, spike.cpu, -1, std::numeric_limits<int64_t>::min(),
                                   spike.actual_ns);
    chain.probe_tid = last ? events[*last].next_pid : 0;
  }
  if (chain.probe_tid <= 0) return chain;
  AttrFindProbeSyscalls(events, spike, chain);
  auto switch_in =
      AttrLastSwitchInto(events, spike.cpu, chain.probe_tid, spike.expected_ns, spike.actual_ns);
  if (switch_in) chain.probe_run = replay.RunOf(*switch_in);
  const int64_t wake_until = switch_in ? events[*switch_in].ts_ns : spike.actual_ns;
  auto waking = AttrLastWaking(events, chain.probe_tid, spike.expected_ns, wake_until);
  if (!waking) return chain;
  const TraceEvent& wake = events[*waking];
  if (wake.cpu != spike.cpu) {
    chain.kind = ChainKind::kCrossCpu;
    chain.start_ns = wake.ts_ns;
    return chain;
  }
  const AttrContext context = replay.ContextAt(*waking).value_or(AttrContext{});
  const auto& frames = replay.frames();
  const auto& runs = replay.runs();
  if (context.hard != kAttrNone) {
    chain.kind = ChainKind::kDirect;
    chain.chain_hard = context.hard;
    chain.start_ns = AttrAt(frames, context.hard).entry_ns;
    return chain;
  }
  if (context.soft == kAttrNone) {
    // Woken from task context on this CPU (no IRQ): the chain starts with the wake itself.
    chain.kind = ChainKind::kDirect;
    chain.start_ns = wake.ts_ns;
    return chain;
  }
  chain.chain_soft = context.soft;
  const AttrRun& run = AttrAt(runs, context.run);
  if (!run.known || run.pid == 0 || AttrAt(frames, context.soft).parent_hard != kAttrNone) {
    // A softirq on the way out of an interrupt (idle, or nested in the IRQ): direct.
    chain.kind = ChainKind::kDirect;
    chain.chain_hard = AttrAt(frames, context.soft).parent_hard;
    chain.start_ns = chain.chain_hard != kAttrNone ? AttrAt(frames, chain.chain_hard).entry_ns
                                                   : AttrAt(frames, context.soft).entry_ns;
    return chain;
  }
  chain.kind = ChainKind::kDeferred;
  chain.deferring_pid = run.pid;
  chain.chain_thread = run.comm;
  chain.start_ns = AttrAt(frames, context.soft).entry_ns;
  auto thread_waking = AttrLastWaking(events, run.pid, spike.expected_ns, wake.ts_ns);
  if (thread_waking) {
    const TraceEvent& thread_wake = events[*thread_waking];
    chain.start_ns = thread_wake.ts_ns;
    if (thread_wake.cpu == spike.cpu) {
      const AttrContext thread_context = replay.ContextAt(*thread_waking).value_or(AttrContext{});
      if (thread_context.hard != kAttrNone) {
        chain.chain_hard = thread_context.hard;
        chain.start_ns = AttrAt(frames, thread_context.hard).entry_ns;
      }
    }
    return chain;
  }
  // The thread was running already: the IRQ that raised the chain's softirq on this CPU.
  const AttrFrame& soft = AttrAt(frames, context.soft);
  auto raise = AttrLastRaise(events, spike.cpu, soft.number, spike.expected_ns, soft.entry_ns);
  if (raise) {
    const AttrContext raise_context = replay.ContextAt(*raise).value_or(AttrContext{});
    if (raise_context.hard != kAttrNone) {
      chain.chain_hard = raise_context.hard;
      chain.start_ns = AttrAt(frames, raise_context.hard).entry_ns;
    }
  }
  return chain;
}

// A running thread's gap has no chain: the thread (given, else the task switched in last
// before the gap) and the run open at the gap's start.
AttrChain AttrRunningChain(const std::vector<TraceEvent>& events, const SpikeInput& spike,
                           const AttrReplay& replay) {
  AttrChain chain;
  chain.kind = ChainKind::kRunning;
  chain.probe_tid = spike.probe_tid;
  if (chain.probe_tid <= 0) {
    auto last = AttrLastSwitchInto(events, spike.cpu, -1, std::numeric_limits<int64_t>::min(),
                                   spike.expected_ns);
    chain.probe_tid = last ? events[*last].next_pid : 0;
  }
  if (!replay.stretches().empty()) chain.probe_run = replay.stretches().front().run;
  chain.start_ns = spike.expected_ns;
  return chain;
}

struct AttrLabel {
  CauseKind kind = CauseKind::kUnaccounted;
  std::string name;
  std::pair<int, int> instance;  // (0 frame / 1 run, index): counts separate stretches.
};

// A running thread's gap (ChainKind::kRunning): `chain.probe_run` is the run open when the
// gap began, the thread's own if it was current.
AttrLabel AttrLabelOfRunning(const AttrStretch& stretch, const AttrChain& chain,
                             const AttrReplay& replay) {
  const auto& frames = replay.frames();
  if (stretch.hard != kAttrNone) {
    return {CauseKind::kIrq, AttrAt(frames, stretch.hard).name, {0, stretch.hard}};
  }
  if (stretch.soft != kAttrNone) {
    return {CauseKind::kSoftirq, AttrAt(frames, stretch.soft).name, {0, stretch.soft}};
  }
  const AttrRun& run = AttrAt(replay.runs(), stretch.run);
  const std::pair<int, int> instance{1, stretch.run};
  if (!run.known) return {CauseKind::kUnaccounted, "unaccounted", instance};
  if (run.pid == chain.probe_tid && chain.probe_tid > 0) {
    const bool opening =
        chain.probe_run != kAttrNone && run.group == AttrAt(replay.runs(), chain.probe_run).group;
    if (opening) return {CauseKind::kUnaccounted, "unaccounted", instance};
    return {CauseKind::kWake, "switch-in", instance};
  }
  if (run.pid == 0) return {CauseKind::kIdle, "idle", instance};
  return {CauseKind::kThread, AttrThreadPartName(run), instance};
}

AttrLabel AttrLabelOf(const AttrStretch& stretch, const AttrChain& chain,
                      const AttrReplay& replay) {
  if (chain.kind == ChainKind::kRunning) return AttrLabelOfRunning(stretch, chain, replay);
  const auto& frames = replay.frames();
  if (stretch.hard != kAttrNone) {
    const AttrFrame& frame = AttrAt(frames, stretch.hard);
    if (stretch.hard == chain.chain_hard) {
      const bool timer = frame.saw_hrtimer || AttrNameSaysTimer(frame.name);
      return {CauseKind::kWake, timer ? "timer irq" : frame.name, {0, stretch.hard}};
    }
    return {CauseKind::kIrq, frame.name, {0, stretch.hard}};
  }
  if (stretch.soft != kAttrNone) {
    const AttrFrame& frame = AttrAt(frames, stretch.soft);
    if (stretch.soft == chain.chain_soft) {
      return {CauseKind::kWake, frame.vec_name + " softirq in " + frame.task, {0, stretch.soft}};
    }
    return {CauseKind::kSoftirq, frame.name, {0, stretch.soft}};
  }
  const AttrRun& run = AttrAt(replay.runs(), stretch.run);
  const std::pair<int, int> instance{1, stretch.run};
  if (!run.known) return {CauseKind::kUnaccounted, "unaccounted", instance};
  if (run.pid == 0) return {CauseKind::kIdle, "idle", instance};
  // The probe's syscalls, where the window has them: after its sys_exit it is on its way
  // back to the clock read; before a late sys_enter it had not gone to wait yet (whoever ran
  // held the CPU while it was runnable); between the two the wait returned at once.
  const bool probe = run.pid == chain.probe_tid;
  if (probe && stretch.from_ns >= chain.exit_ns) {
    return {CauseKind::kWake, "return to user", instance};
  }
  if (stretch.from_ns < chain.late_enter_ns) {
    if (chain.late_enter_ns != std::numeric_limits<int64_t>::max()) {
      return {CauseKind::kThread, probe ? "probe late to sleep" : AttrThreadPartName(run),
              instance};
    }
  } else if (probe) {
    return {CauseKind::kWake, "syscall", instance};
  }
  if (chain.probe_run != kAttrNone && run.group == AttrAt(replay.runs(), chain.probe_run).group) {
    return {CauseKind::kWake, "switch-in", instance};  // Its run, renamed or not.
  }
  if (stretch.from_ns >= chain.start_ns) {
    if (run.pid == chain.deferring_pid) return {CauseKind::kWake, "switch-in", instance};
    return {CauseKind::kThread, AttrThreadPartName(run), instance};
  }
  return {CauseKind::kUnaccounted, "unaccounted", instance};
}

// Whole us above 10 us, one decimal below (rounded half up, in integers).
std::string AttrFormatUs(int64_t ns) {
  if (ns < 0) return "-" + AttrFormatUs(-ns);
  if (ns < 9'950) {
    const int64_t tenths = (ns + 50) / 100;
    return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10);
  }
  return std::to_string((ns + 500) / 1000);
}

std::string AttrPartPhrase(const Part& part) {
  switch (part.kind) {
    case CauseKind::kIrq:
      return part.name.rfind("irq ", 0) == 0 ? part.name : "irq " + part.name;
    case CauseKind::kSoftirq:
      return "softirq " + part.name;
    case CauseKind::kThread:
      return "thread " + part.name;
    case CauseKind::kWake:
      return "wake " + part.name;
    case CauseKind::kIdle:
      return "idle";
    case CauseKind::kUnaccounted:
      return "unaccounted (likely the host)";
  }
  return part.name;
}

}  // namespace

Explanation Attribute(const std::vector<TraceEvent>& events, const SpikeInput& spike,
                      const WindowLoss& loss) {
  Explanation out;
  out.spike = spike;
  out.lateness_ns = std::max<int64_t>(0, spike.actual_ns - spike.expected_ns);
  SpikeInput window = spike;
  if (window.actual_ns < window.expected_ns) window.actual_ns = window.expected_ns;

  int inferred = 0;
  const std::vector<TraceEvent> timeline = AttrWithInferredSwitches(events, window, &inferred);
  out.inferred_switches = inferred;
  const AttrReplay replay(timeline, window);
  const AttrChain chain = spike.running ? AttrRunningChain(timeline, window, replay)
                                        : AttrFindChain(timeline, window, replay);
  out.chain = chain.kind;
  out.chain_thread = chain.chain_thread;
  out.probe_tid = chain.probe_tid;

  struct PartSum {
    int64_t ns = 0;
    std::set<std::pair<int, int>> instances;
  };
  std::map<std::pair<CauseKind, std::string>, PartSum> sums;
  bool unknown_task = false;
  for (AttrStretch stretch : replay.stretches()) {
    // The chain's start may fall inside a stretch (a wake on another CPU): split there.
    std::vector<AttrStretch> pieces;
    if (chain.start_ns > stretch.from_ns && chain.start_ns < stretch.to_ns) {
      AttrStretch before = stretch;
      before.to_ns = chain.start_ns;
      stretch.from_ns = chain.start_ns;
      pieces.push_back(before);
    }
    pieces.push_back(stretch);
    for (const AttrStretch& piece : pieces) {
      if (!AttrAt(replay.runs(), piece.run).known) unknown_task = true;
      AttrLabel label = AttrLabelOf(piece, chain, replay);
      PartSum& sum = sums[{label.kind, label.name}];
      sum.ns += piece.to_ns - piece.from_ns;
      sum.instances.insert(label.instance);
    }
  }
  int64_t total_ns = 0;
  for (const auto& [key, value] : sums) {
    Part part;
    part.kind = key.first;
    part.name = key.second;
    part.ns = value.ns;
    part.count = static_cast<uint32_t>(value.instances.size());
    total_ns += part.ns;
    out.parts.push_back(std::move(part));
  }
  if (total_ns != out.lateness_ns) {
    std::fprintf(stderr, "rtpulse: attribution lost ns (%lld of %lld)\n",
                 static_cast<long long>(total_ns), static_cast<long long>(out.lateness_ns));
    std::abort();
  }
  std::sort(out.parts.begin(), out.parts.end(), [](const Part& a, const Part& b) {
    return std::tie(b.ns, a.kind, a.name) < std::tie(a.ns, b.kind, b.name);
  });

  std::vector<std::string> reasons;
  if (unknown_task) {
    reasons.push_back("no sched_switch on CPU " + std::to_string(spike.cpu) +
                      " before the window: the task running when it opened is unknown");
  }
  if (loss.kernel) {
    reasons.push_back("the kernel lost events on CPU " + std::to_string(spike.cpu) +
                      " in the window");
  }
  if (loss.trimmed) {
    reasons.push_back(
        "explained too late: rtpulse's trace store had already dropped the start of the "
        "window");
  }
  if (!reasons.empty()) {
    out.complete = false;
    for (size_t i = 0; i < reasons.size(); ++i) {
      out.incomplete_reason += (i ? "; " : "") + reasons[i];
    }
  }
  return out;
}

std::string Verdict(const Explanation& explanation) {
  std::string line = "+" + AttrFormatUs(explanation.lateness_ns) + " us:";
  if (explanation.parts.empty()) return line + " no lateness";
  int folded = 0;
  int64_t folded_ns = 0;
  bool first = true;
  for (const Part& part : explanation.parts) {
    if (part.ns * 100 < explanation.lateness_ns) {
      ++folded;
      folded_ns += part.ns;
      continue;
    }
    line += (first ? " " : ", ") + AttrFormatUs(part.ns) + " us " + AttrPartPhrase(part);
    first = false;
  }
  if (folded > 0) {
    line += (first ? " +" : ", +") + std::to_string(folded) + " other (" + AttrFormatUs(folded_ns) +
            " us)";
  }
  if (explanation.inferred_switches > 0) {
    line += " [" + std::to_string(explanation.inferred_switches) +
            (explanation.inferred_switches == 1 ? " switch" : " switches") +
            " inferred from common_pid: the kernel did not trace it]";
  }
  if (!explanation.complete) line += " [incomplete: " + explanation.incomplete_reason + "]";
  return line;
}

CauseTable Summarise(const std::vector<Explanation>& explanations) {
  std::map<std::pair<CauseKind, std::string>, CauseRow> rows;
  for (const Explanation& explanation : explanations) {
    for (const Part& part : explanation.parts) {
      CauseRow& row = rows[{part.kind, part.name}];
      row.kind = part.kind;
      row.name = part.name;
      row.total_ns += part.ns;
      ++row.spikes;
      row.max_ns = std::max(row.max_ns, part.ns);
    }
  }
  CauseTable table;
  for (auto& [key, row] : rows) table.by_time.push_back(row);
  table.by_count = table.by_time;
  std::sort(table.by_time.begin(), table.by_time.end(), [](const CauseRow& a, const CauseRow& b) {
    return std::tie(b.total_ns, a.kind, a.name) < std::tie(a.total_ns, b.kind, b.name);
  });
  std::sort(table.by_count.begin(), table.by_count.end(), [](const CauseRow& a, const CauseRow& b) {
    return std::tie(b.spikes, b.total_ns, a.kind, a.name) <
           std::tie(a.spikes, a.total_ns, b.kind, b.name);
  });
  return table;
}

}  // namespace rtpulse::trace
