// Attribute() on scripted event sequences with known answers (exact ns), each also rendered
// as ftrace text and attributed independently by tests/trace/explain_truth.py: both must
// agree exactly. Verdict() and Summarise() on hand-made explanations.
#include "trace/attribution.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse::trace {
namespace {

using nlohmann::json;

constexpr int64_t kUs = 1000;
constexpr int64_t kE = 1'000'000'000'000;  // The deadline: 1000 s of CLOCK_MONOTONIC.

template <size_t N>
void SetText(std::array<char, N>& field, std::string_view text) {
  field.fill('\0');
  text.copy(field.data(), std::min(text.size(), N - 1));
}

// Builds a timestamp-ordered event list and its ftrace text at the same time.
class AttrScript {
 public:
  AttrScript& Switch(int64_t ts, int cpu, std::string_view prev_comm, int prev_pid, int prev_prio,
                     std::string_view next_comm, int next_pid, int next_prio) {
    TraceEvent& e = Add(ts, cpu, EventKind::kSchedSwitch, prev_pid);
    e.prev_pid = prev_pid;
    e.prev_prio = prev_prio;
    e.prev_state = 1;
    SetText(e.prev_comm, prev_comm);
    e.next_pid = next_pid;
    e.next_prio = next_prio;
    SetText(e.next_comm, next_comm);
    comms_[prev_pid] = std::string(prev_comm);
    comms_[next_pid] = std::string(next_comm);
    return *this;
  }
  AttrScript& Waking(int64_t ts, int cpu, int current, std::string_view comm, int pid, int prio,
                     int target_cpu) {
    TraceEvent& e = Add(ts, cpu, EventKind::kSchedWaking, current);
    e.next_pid = pid;
    e.next_prio = prio;
    SetText(e.next_comm, comm);
    e.target_cpu = target_cpu;
    comms_[pid] = std::string(comm);
    return *this;
  }
  AttrScript& Irq(int64_t from, int64_t to, int cpu, int current, int irq, std::string_view name) {
    return IrqEntry(from, cpu, current, irq, name).IrqExit(to, cpu, current, irq);
  }
  AttrScript& IrqEntry(int64_t ts, int cpu, int current, int irq, std::string_view name) {
    TraceEvent& e = Add(ts, cpu, EventKind::kIrqEntry, current);
    e.number = irq;
    SetText(e.name, name);
    return *this;
  }
  AttrScript& IrqExit(int64_t ts, int cpu, int current, int irq) {
    Add(ts, cpu, EventKind::kIrqExit, current).number = irq;
    return *this;
  }
  AttrScript& VectorEntry(int64_t ts, int cpu, int current, int vector, std::string_view name) {
    TraceEvent& e = Add(ts, cpu, EventKind::kVectorEntry, current);
    e.number = vector;
    SetText(e.name, name);
    return *this;
  }
  AttrScript& VectorExit(int64_t ts, int cpu, int current, int vector, std::string_view name) {
    TraceEvent& e = Add(ts, cpu, EventKind::kVectorExit, current);
    e.number = vector;
    SetText(e.name, name);
    return *this;
  }
  AttrScript& SoftEntry(int64_t ts, int cpu, int current, int vec, std::string_view name) {
    TraceEvent& e = Add(ts, cpu, EventKind::kSoftirqEntry, current);
    e.number = vec;
    SetText(e.name, name);
    return *this;
  }
  AttrScript& SoftExit(int64_t ts, int cpu, int current, int vec, std::string_view name) {
    TraceEvent& e = Add(ts, cpu, EventKind::kSoftirqExit, current);
    e.number = vec;
    SetText(e.name, name);
    return *this;
  }
  AttrScript& SoftRaise(int64_t ts, int cpu, int current, int vec, std::string_view name) {
    TraceEvent& e = Add(ts, cpu, EventKind::kSoftirqRaise, current);
    e.number = vec;
    SetText(e.name, name);
    return *this;
  }
  AttrScript& Hrtimer(int64_t ts, int cpu, int current) {
    TraceEvent& e = Add(ts, cpu, EventKind::kHrtimerExpireEntry, current);
    e.address = 0xabcd;
    SetText(e.name, "hrtimer_wakeup");
    return *this;
  }
  AttrScript& HrtimerExit(int64_t ts, int cpu, int current) {
    Add(ts, cpu, EventKind::kHrtimerExpireExit, current).address = 0xabcd;
    return *this;
  }
  // raw_syscalls of task `current` (syscall 230: clock_nanosleep on arm64 and x86-64 alike
  // is not assumed; the number is only printed).
  AttrScript& SysEnter(int64_t ts, int cpu, int current) {
    Add(ts, cpu, EventKind::kSyscallEnter, current).number = 230;
    return *this;
  }
  AttrScript& SysExit(int64_t ts, int cpu, int current) {
    Add(ts, cpu, EventKind::kSyscallExit, current).number = 230;
    return *this;
  }
  // An exec or prctl(PR_SET_NAME) renaming task `pid`: it fires in the task itself, or in
  // `current` when another task names it (a kthread by its creator).
  AttrScript& Rename(int64_t ts, int cpu, int pid, std::string_view old_comm,
                     std::string_view new_comm, int current = -1) {
    TraceEvent& e = Add(ts, cpu, EventKind::kTaskRename, current >= 0 ? current : pid);
    e.next_pid = pid;
    SetText(e.next_comm, new_comm);
    SetText(e.prev_comm, old_comm);  // For the text only, as the kernel prints it.
    comms_[pid] = std::string(new_comm);
    return *this;
  }
  // An event the attribution does not use (the text keeps it, the script must skip it).
  AttrScript& Other(int64_t ts, int cpu, int current) {
    Add(ts, cpu, EventKind::kOther, current);
    return *this;
  }

  const std::vector<TraceEvent>& events() const { return events_; }

  // The window as ftrace text, the way the kernel prints it.
  std::string Text(bool lost_cpu1) const {
    std::string text = "# tracer: nop\n#\n#           TASK-PID     CPU#     TIMESTAMP  FUNCTION\n";
    bool lost_written = false;
    for (const TraceEvent& e : events_) {
      if (lost_cpu1 && !lost_written && e.ts_ns >= kE) {
        text += "CPU:1 [LOST 12 EVENTS]\n";
        lost_written = true;
      }
      const auto comm = comms_.find(e.pid);
      const std::string who =
          e.pid == 0 ? "<idle>" : (comm != comms_.end() ? comm->second : "<...>");
      char head[128];
      std::snprintf(head, sizeof head, "%16s-%-7d [%03d] %lld.%09lld: ", who.c_str(), e.pid, e.cpu,
                    static_cast<long long>(e.ts_ns / 1'000'000'000),
                    static_cast<long long>(e.ts_ns % 1'000'000'000));
      text += head + Body(e) + "\n";
    }
    return text;
  }

 private:
  TraceEvent& Add(int64_t ts, int cpu, EventKind kind, int current) {
    TraceEvent e;
    e.ts_ns = ts;
    e.cpu = cpu;
    e.kind = kind;
    e.pid = current;
    events_.push_back(e);
    return events_.back();
  }
  static std::string Body(const TraceEvent& e) {
    const std::string name(e.Name());
    const std::string n = std::to_string(e.number);
    switch (e.kind) {
      case EventKind::kSchedSwitch:
        return "sched_switch: prev_comm=" + std::string(e.PrevComm()) +
               " prev_pid=" + std::to_string(e.prev_pid) +
               " prev_prio=" + std::to_string(e.prev_prio) +
               " prev_state=S ==> next_comm=" + std::string(e.NextComm()) +
               " next_pid=" + std::to_string(e.next_pid) +
               " next_prio=" + std::to_string(e.next_prio);
      case EventKind::kSchedWaking: {
        char target[8];
        std::snprintf(target, sizeof target, "%03d", e.target_cpu);
        return "sched_waking: comm=" + std::string(e.NextComm()) +
               " pid=" + std::to_string(e.next_pid) + " prio=" + std::to_string(e.next_prio) +
               " target_cpu=" + target;
      }
      case EventKind::kIrqEntry:
        return "irq_handler_entry: irq=" + n + " name=" + name;
      case EventKind::kIrqExit:
        return "irq_handler_exit: irq=" + n + " ret=handled";
      case EventKind::kVectorEntry:
        return name + "_entry: vector=" + n;
      case EventKind::kVectorExit:
        return name + "_exit: vector=" + n;
      case EventKind::kSoftirqEntry:
        return "softirq_entry: vec=" + n + " [action=" + name + "]";
      case EventKind::kSoftirqExit:
        return "softirq_exit: vec=" + n + " [action=" + name + "]";
      case EventKind::kSoftirqRaise:
        return "softirq_raise: vec=" + n + " [action=" + name + "]";
      case EventKind::kHrtimerExpireEntry:
        return "hrtimer_expire_entry: hrtimer=00000000abcd now=" + std::to_string(e.ts_ns) +
               " function=hrtimer_wakeup";
      case EventKind::kHrtimerExpireExit:
        return "hrtimer_expire_exit: hrtimer=00000000abcd";
      case EventKind::kTaskRename:
        return "task_rename: pid=" + std::to_string(e.next_pid) +
               " oldcomm=" + std::string(e.PrevComm()) + " newcomm=" + std::string(e.NextComm()) +
               " oom_score_adj=0";
      case EventKind::kSyscallEnter:
        return "sys_enter: NR " + n + " (1, 1, 7ffc2a5e1d30, 0, 0, 0)";
      case EventKind::kSyscallExit:
        return "sys_exit: NR " + n + " = 0";
      default:
        return "sched_stat_runtime: comm=x pid=" + std::to_string(e.pid) +
               " runtime=1234 [ns] vruntime=99 [ns]";
    }
  }

  std::vector<TraceEvent> events_;
  std::map<int, std::string> comms_;
};

SpikeInput Spike(int cpu, int64_t lateness_ns, int tid = 0) {
  SpikeInput spike;
  spike.cpu = cpu;
  spike.seq = 4711;
  spike.expected_ns = kE;
  spike.actual_ns = kE + lateness_ns;
  spike.probe_tid = tid;
  return spike;
}

using PartTuple = std::tuple<CauseKind, std::string, int64_t, uint32_t>;

std::vector<PartTuple> Tuples(const Explanation& explanation) {
  std::vector<PartTuple> out;
  for (const Part& part : explanation.parts) {
    out.emplace_back(part.kind, part.name, part.ns, part.count);
  }
  return out;
}

// Attributes the script, checks the exact partition, and checks python's independent answer.
Explanation AttributeAndCompare(const AttrScript& script, const SpikeInput& spike,
                                bool lost = false) {
  const Explanation got = Attribute(script.events(), spike, WindowLoss{lost, false});
  int64_t sum = 0;
  for (const Part& part : got.parts) {
    EXPECT_GT(part.ns, 0) << part.name;
    EXPECT_GT(part.count, 0U) << part.name;
    sum += part.ns;
  }
  EXPECT_EQ(sum, got.lateness_ns);

  testutil::TempDir dir;
  const std::string window = dir.File("window.txt");
  std::ofstream(window) << script.Text(lost);
  std::vector<std::string> argv = {
      "/usr/bin/python3",
      std::string(RTPULSE_SOURCE_DIR) + "/tests/trace/explain_truth.py",
      window,
      "--cpu",
      std::to_string(spike.cpu),
      "--expected",
      std::to_string(spike.expected_ns),
      "--actual",
      std::to_string(spike.actual_ns)};
  if (spike.probe_tid > 0) {
    argv.push_back("--tid");
    argv.push_back(std::to_string(spike.probe_tid));
  }
  if (spike.running) argv.push_back("--running");
  const testutil::ProcessResult py = testutil::RunProcess(argv);
  EXPECT_EQ(py.exit_code, 0) << py.err;
  if (py.exit_code != 0) return got;
  const json truth = json::parse(py.out);
  EXPECT_EQ(truth["lateness_ns"].get<int64_t>(), got.lateness_ns);
  EXPECT_EQ(truth["probe_tid"].get<int>(), got.probe_tid);
  EXPECT_EQ(truth["chain"].get<std::string>(), ChainKindName(got.chain));
  EXPECT_EQ(truth["chain_thread"].get<std::string>(), got.chain_thread);
  EXPECT_EQ(truth["complete"].get<bool>(), got.complete);
  EXPECT_EQ(truth["inferred_switches"].get<int>(), got.inferred_switches);
  std::vector<std::tuple<std::string, std::string, int64_t, uint32_t>> want, have;
  for (const json& part : truth["parts"]) {
    want.emplace_back(part["kind"], part["name"], part["ns"], part["count"]);
  }
  for (const Part& part : got.parts) {
    have.emplace_back(CauseKindName(part.kind), part.name, part.ns, part.count);
  }
  EXPECT_EQ(have, want) << script.Text(lost);
  return got;
}

// CPU 1 idle since before the deadline; the timer IRQ comes 30 us late, wakes the probe from
// hard-IRQ context (direct), the idle task switches to it.
AttrScript IdleDirectScript() {
  AttrScript s;
  s.Switch(kE - 1000 * kUs, 1, "probe", 500, 19, "swapper/1", 0, 120)
      .IrqEntry(kE + 30 * kUs, 1, 0, 11, "arch_timer")
      .Hrtimer(kE + 31 * kUs, 1, 0)
      .Waking(kE + 32 * kUs, 1, 0, "probe", 500, 19, 1)
      .HrtimerExit(kE + 33 * kUs, 1, 0)
      .IrqExit(kE + 35 * kUs, 1, 0, 11)
      .Other(kE + 36 * kUs, 1, 0)
      .Switch(kE + 38 * kUs, 1, "swapper/1", 0, 120, "probe", 500, 19);
  return s;
}

TEST(Attribution, DirectWakeOnAnIdleCpuWithTheTimerIrqLate) {
  const Explanation e = AttributeAndCompare(IdleDirectScript(), Spike(1, 40 * kUs));
  EXPECT_EQ(e.lateness_ns, 40 * kUs);
  EXPECT_EQ(e.chain, ChainKind::kDirect);
  EXPECT_EQ(e.probe_tid, 500);
  EXPECT_TRUE(e.complete) << e.incomplete_reason;
  EXPECT_EQ(Tuples(e), (std::vector<PartTuple>{{CauseKind::kIdle, "idle", 33 * kUs, 1},
                                               {CauseKind::kWake, "timer irq", 5 * kUs, 1},
                                               {CauseKind::kWake, "switch-in", 2 * kUs, 1}}));
  EXPECT_EQ(Verdict(e), "+40 us: 33 us idle, 5.0 us wake timer irq, 2.0 us wake switch-in");
}

// The probe's syscalls (full event set): it went to wait before the deadline (sys_enter in
// the history), so only its sys_exit after the switch-in splits its own time: the switch-in
// up to sys_exit, then the return to user up to the clock read.
TEST(Attribution, TheProbesSysExitEndsTheSwitchInAndStartsTheReturnToUser) {
  AttrScript s;
  s.SysEnter(kE - 1001 * kUs, 1, 500)
      .Switch(kE - 1000 * kUs, 1, "probe", 500, 19, "swapper/1", 0, 120)
      .IrqEntry(kE + 30 * kUs, 1, 0, 11, "arch_timer")
      .Hrtimer(kE + 31 * kUs, 1, 0)
      .Waking(kE + 32 * kUs, 1, 0, "probe", 500, 19, 1)
      .IrqExit(kE + 35 * kUs, 1, 0, 11)
      .Switch(kE + 37 * kUs, 1, "swapper/1", 0, 120, "probe", 500, 19)
      .SysExit(kE + 39 * kUs, 1, 500);
  for (int tid : {500, 0}) {  // given, or found from the switch-in
    const Explanation e = AttributeAndCompare(s, Spike(1, 40 * kUs, tid));
    EXPECT_EQ(e.chain, ChainKind::kDirect);
    EXPECT_EQ(Tuples(e), (std::vector<PartTuple>{{CauseKind::kIdle, "idle", 32 * kUs, 1},
                                                 {CauseKind::kWake, "timer irq", 5 * kUs, 1},
                                                 {CauseKind::kWake, "switch-in", 2 * kUs, 1},
                                                 {CauseKind::kWake, "return to user", kUs, 1}}));
  }
}

// Preempted before it went to wait: the probe's sys_enter comes 22 us after the deadline.
// Without its syscalls nothing shows the probe was runnable while the spinner ran (no wake-up,
// no timer: unaccounted); with them the spinner held the CPU while the probe had not yet
// slept, the probe's own run up to the sys_enter is "late to sleep", and the wait returned at
// once (its deadline had passed).
TEST(Attribution, ALateSysEnterShowsTheProbeWasPreemptedBeforeItSlept) {
  auto script = [](bool syscalls) {
    AttrScript s;
    s.Switch(kE - 100 * kUs, 1, "swapper/1", 0, 120, "probe", 500, 19);
    if (syscalls) s.SysExit(kE - 90 * kUs, 1, 500);
    s.Switch(kE - 5 * kUs, 1, "probe", 500, 19, "spinner", 600, 9)
        .Switch(kE + 20 * kUs, 1, "spinner", 600, 9, "probe", 500, 19);
    if (syscalls) s.SysEnter(kE + 22 * kUs, 1, 500).SysExit(kE + 23 * kUs, 1, 500);
    return s;
  };
  const Explanation with = AttributeAndCompare(script(true), Spike(1, 24 * kUs, 500));
  EXPECT_EQ(Tuples(with),
            (std::vector<PartTuple>{{CauseKind::kThread, "spinner 600 rt 90", 20 * kUs, 1},
                                    {CauseKind::kThread, "probe late to sleep", 2 * kUs, 1},
                                    {CauseKind::kWake, "return to user", kUs, 1},
                                    {CauseKind::kWake, "syscall", kUs, 1}}));
  const Explanation without = AttributeAndCompare(script(false), Spike(1, 24 * kUs, 500));
  EXPECT_EQ(Tuples(without),
            (std::vector<PartTuple>{{CauseKind::kUnaccounted, "unaccounted", 20 * kUs, 1},
                                    {CauseKind::kWake, "switch-in", 4 * kUs, 1}}));
}

TEST(Attribution, AFifoThreadSpinningAfterTheWakeIsNamedWithItsExactTime) {
  AttrScript s;
  s.Switch(kE - 100 * kUs, 1, "swapper/1", 0, 120, "spinner", 600, 9)
      .IrqEntry(kE + 2 * kUs, 1, 600, 11, "arch_timer")
      .Waking(kE + 3 * kUs, 1, 600, "probe", 500, 19, 1)
      .IrqExit(kE + 5 * kUs, 1, 600, 11)
      .Switch(kE + 85 * kUs, 1, "spinner", 600, 9, "probe", 500, 19);
  const Explanation e = AttributeAndCompare(s, Spike(1, 87 * kUs));
  EXPECT_EQ(e.chain, ChainKind::kDirect);
  EXPECT_EQ(Tuples(e),
            (std::vector<PartTuple>{{CauseKind::kThread, "spinner 600 rt 90", 80 * kUs, 1},
                                    {CauseKind::kWake, "timer irq", 3 * kUs, 1},
                                    {CauseKind::kWake, "switch-in", 2 * kUs, 1},
                                    {CauseKind::kUnaccounted, "unaccounted", 2 * kUs, 1}}));
}

// `chrt -f 99 python3 hog.py` on the probe's CPU: switched in as chrt at SCHED_OTHER (prio
// 120), it sets SCHED_FIFO 99 (no event) and execs python3 (task_rename) while it runs; the
// woken probe waits for its switch-out, at prio 0. Named as it was at the spike: never
// "chrt 600 other".
TEST(Attribution, ATaskRenamedWhileItRunsIsNamedAtTheSpikeWithItsPolicyAtTheSwitchOut) {
  AttrScript s;
  s.Switch(kE - 100 * kUs, 1, "swapper/1", 0, 120, "chrt", 600, 120)
      .Rename(kE - 60 * kUs, 1, 600, "chrt", "python3")
      .IrqEntry(kE + 2 * kUs, 1, 600, 11, "arch_timer")
      .Waking(kE + 3 * kUs, 1, 600, "probe", 500, 19, 1)
      .IrqExit(kE + 5 * kUs, 1, 600, 11)
      .Switch(kE + 85 * kUs, 1, "python3", 600, 0, "probe", 500, 19);
  const Explanation e = AttributeAndCompare(s, Spike(1, 87 * kUs));
  EXPECT_EQ(Tuples(e),
            (std::vector<PartTuple>{{CauseKind::kThread, "python3 600 rt 99", 80 * kUs, 1},
                                    {CauseKind::kWake, "timer irq", 3 * kUs, 1},
                                    {CauseKind::kWake, "switch-in", 2 * kUs, 1},
                                    {CauseKind::kUnaccounted, "unaccounted", 2 * kUs, 1}}));

  // Renamed inside the spike: each stretch under the name it ran with, both at the policy of
  // the run's end.
  AttrScript inside;
  inside.Switch(kE - 100 * kUs, 1, "swapper/1", 0, 120, "chrt", 600, 120)
      .IrqEntry(kE + 2 * kUs, 1, 600, 11, "arch_timer")
      .Waking(kE + 3 * kUs, 1, 600, "probe", 500, 19, 1)
      .IrqExit(kE + 5 * kUs, 1, 600, 11)
      .Rename(kE + 40 * kUs, 1, 600, "chrt", "python3")
      .Switch(kE + 85 * kUs, 1, "python3", 600, 0, "probe", 500, 19);
  const Explanation renamed = AttributeAndCompare(inside, Spike(1, 87 * kUs));
  EXPECT_EQ(Tuples(renamed),
            (std::vector<PartTuple>{{CauseKind::kThread, "python3 600 rt 99", 45 * kUs, 1},
                                    {CauseKind::kThread, "chrt 600 rt 99", 35 * kUs, 1},
                                    {CauseKind::kWake, "timer irq", 3 * kUs, 1},
                                    {CauseKind::kWake, "switch-in", 2 * kUs, 1},
                                    {CauseKind::kUnaccounted, "unaccounted", 2 * kUs, 1}}));

  // Another task's rename (a kthread named by its creator) leaves the running one's name.
  AttrScript other;
  other.Switch(kE - 100 * kUs, 1, "swapper/1", 0, 120, "spinner", 600, 9)
      .Rename(kE - 50 * kUs, 1, 601, "kthreadd", "kworker/1:2", 600)
      .IrqEntry(kE + 2 * kUs, 1, 600, 11, "arch_timer")
      .Waking(kE + 3 * kUs, 1, 600, "probe", 500, 19, 1)
      .IrqExit(kE + 5 * kUs, 1, 600, 11)
      .Switch(kE + 85 * kUs, 1, "spinner", 600, 9, "probe", 500, 19);
  const Explanation kept = AttributeAndCompare(other, Spike(1, 87 * kUs));
  EXPECT_EQ(kept.parts.front().name, "spinner 600 rt 90");
}

// The issue's example: the timer IRQ wakes ktimers/2, which first runs NET_RX (with the eth0
// IRQ nested inside it), then the HRTIMER softirq that wakes the probe.
AttrScript DeferredScript() {
  AttrScript s;
  s.Switch(kE - 50 * kUs, 2, "swapper/2", 0, 120, "bash", 700, 120)
      .IrqEntry(kE + 7 * kUs, 2, 700, 11, "arch_timer")
      .Waking(kE + 8 * kUs, 2, 700, "ktimers/2", 30, 98, 2)
      .IrqExit(kE + 9 * kUs, 2, 700, 11)
      .Switch(kE + 9 * kUs, 2, "bash", 700, 120, "ktimers/2", 30, 98)
      .SoftEntry(kE + 10 * kUs, 2, 30, 3, "NET_RX")
      .IrqEntry(kE + 30 * kUs, 2, 30, 45, "eth0")
      .IrqExit(kE + 45 * kUs, 2, 30, 45)
      .SoftExit(kE + 86 * kUs, 2, 30, 3, "NET_RX")
      .SoftEntry(kE + 86 * kUs, 2, 30, 8, "HRTIMER")
      .Waking(kE + 87 * kUs, 2, 30, "probe", 800, 9, 2)
      .SoftExit(kE + 88 * kUs, 2, 30, 8, "HRTIMER")
      .Switch(kE + 89 * kUs, 2, "ktimers/2", 30, 98, "probe", 800, 9);
  return s;
}

TEST(Attribution, DeferredThroughKtimersBehindNetRxWithTheEthIrqNestedInIt) {
  const Explanation e = AttributeAndCompare(DeferredScript(), Spike(2, 90 * kUs));
  EXPECT_EQ(e.chain, ChainKind::kDeferred);
  EXPECT_EQ(e.chain_thread, "ktimers/2");
  EXPECT_EQ(e.probe_tid, 800);
  EXPECT_EQ(Tuples(e),
            (std::vector<PartTuple>{{CauseKind::kSoftirq, "NET_RX in ktimers/2", 61 * kUs, 1},
                                    {CauseKind::kIrq, "irq 45 eth0", 15 * kUs, 1},
                                    {CauseKind::kUnaccounted, "unaccounted", 7 * kUs, 1},
                                    {CauseKind::kWake, "switch-in", 3 * kUs, 2},
                                    {CauseKind::kWake, "HRTIMER softirq in ktimers/2", 2 * kUs, 1},
                                    {CauseKind::kWake, "timer irq", 2 * kUs, 1}}));
  EXPECT_EQ(Verdict(e),
            "+90 us: 61 us softirq NET_RX in ktimers/2, 15 us irq 45 eth0, 7.0 us unaccounted "
            "(likely the host), 3.0 us wake switch-in, 2.0 us wake HRTIMER softirq in "
            "ktimers/2, 2.0 us wake timer irq");
}

// PREEMPT_RT: ktimers/1 is already running NET_RX when the timer IRQ raises HRTIMER and wakes
// a deadline task, which preempts ktimers/1 in the middle of NET_RX. The softirq pauses with
// its thread; the chain starts at the IRQ that raised the HRTIMER softirq.
TEST(Attribution, ASoftirqPausesWithItsPreemptedThreadAndTheRaisingIrqStartsTheChain) {
  AttrScript s;
  s.Switch(kE - 20 * kUs, 1, "swapper/1", 0, 120, "ktimers/1", 20, 98)
      .SoftEntry(kE - 10 * kUs, 1, 20, 3, "NET_RX")
      .IrqEntry(kE + 5 * kUs, 1, 20, 11, "arch_timer")
      .SoftRaise(kE + 5 * kUs + 500, 1, 20, 8, "HRTIMER")
      .Waking(kE + 6 * kUs, 1, 20, "dl", 90, -1, 1)
      .IrqExit(kE + 7 * kUs, 1, 20, 11)
      .Switch(kE + 7 * kUs, 1, "ktimers/1", 20, 98, "dl", 90, -1)
      .Switch(kE + 20 * kUs, 1, "dl", 90, -1, "ktimers/1", 20, 98)
      .SoftExit(kE + 30 * kUs, 1, 20, 3, "NET_RX")
      .SoftEntry(kE + 30 * kUs, 1, 20, 8, "HRTIMER")
      .Waking(kE + 31 * kUs, 1, 20, "probe", 500, 19, 1)
      .SoftExit(kE + 32 * kUs, 1, 20, 8, "HRTIMER")
      .Switch(kE + 33 * kUs, 1, "ktimers/1", 20, 98, "probe", 500, 19);
  const Explanation e = AttributeAndCompare(s, Spike(1, 34 * kUs));
  EXPECT_EQ(e.chain, ChainKind::kDeferred);
  EXPECT_EQ(e.chain_thread, "ktimers/1");
  EXPECT_EQ(Tuples(e),
            (std::vector<PartTuple>{{CauseKind::kSoftirq, "NET_RX in ktimers/1", 15 * kUs, 1},
                                    {CauseKind::kThread, "dl 90 deadline", 13 * kUs, 1},
                                    {CauseKind::kWake, "HRTIMER softirq in ktimers/1", 2 * kUs, 1},
                                    {CauseKind::kWake, "switch-in", 2 * kUs, 2},
                                    {CauseKind::kWake, "timer irq", 2 * kUs, 1}}));
}

TEST(Attribution, CrossCpuWakeSplitsTheRunningThreadAtTheWake) {
  AttrScript s;
  s.Switch(kE - 10 * kUs, 1, "swapper/1", 0, 120, "worker", 650, 120)
      .IrqEntry(kE + 19 * kUs, 0, 0, 11, "arch_timer")
      .Waking(kE + 20 * kUs, 0, 0, "probe", 500, 19, 1)
      .IrqExit(kE + 21 * kUs, 0, 0, 11)
      .VectorEntry(kE + 25 * kUs, 1, 650, 253, "reschedule")
      .VectorExit(kE + 27 * kUs, 1, 650, 253, "reschedule")
      .Switch(kE + 50 * kUs, 1, "worker", 650, 120, "probe", 500, 19);
  const Explanation e = AttributeAndCompare(s, Spike(1, 52 * kUs));
  EXPECT_EQ(e.chain, ChainKind::kCrossCpu);
  EXPECT_EQ(Tuples(e),
            (std::vector<PartTuple>{{CauseKind::kThread, "worker 650 other", 28 * kUs, 1},
                                    {CauseKind::kUnaccounted, "unaccounted", 20 * kUs, 1},
                                    {CauseKind::kIrq, "reschedule", 2 * kUs, 1},
                                    {CauseKind::kWake, "switch-in", 2 * kUs, 1}}));
  EXPECT_EQ(Verdict(e),
            "+52 us: 28 us thread worker 650 other, 20 us unaccounted (likely the host), "
            "2.0 us irq reschedule, 2.0 us wake switch-in");
}

TEST(Attribution, AnIrqNestedInASoftirqInAThreadIsInnermost) {
  AttrScript s;
  s.Switch(kE - 10 * kUs, 3, "swapper/3", 0, 120, "ksoftirqd/3", 40, 120)
      .SoftEntry(kE - 5 * kUs, 3, 40, 3, "NET_RX")
      .IrqEntry(kE + 10 * kUs, 3, 40, 45, "eth0")
      .VectorEntry(kE + 14 * kUs, 3, 40, 236, "local_timer")
      .Hrtimer(kE + 15 * kUs, 3, 40)
      .Waking(kE + 16 * kUs, 3, 40, "probe", 501, 19, 3)
      .VectorExit(kE + 17 * kUs, 3, 40, 236, "local_timer")
      .IrqExit(kE + 20 * kUs, 3, 40, 45)
      .SoftExit(kE + 30 * kUs, 3, 40, 3, "NET_RX")
      .Switch(kE + 31 * kUs, 3, "ksoftirqd/3", 40, 120, "probe", 501, 19);
  const Explanation e = AttributeAndCompare(s, Spike(3, 33 * kUs));
  EXPECT_EQ(e.chain, ChainKind::kDirect);
  EXPECT_EQ(Tuples(e),
            (std::vector<PartTuple>{{CauseKind::kSoftirq, "NET_RX in ksoftirqd/3", 20 * kUs, 1},
                                    {CauseKind::kIrq, "irq 45 eth0", 7 * kUs, 1},
                                    {CauseKind::kWake, "timer irq", 3 * kUs, 1},
                                    {CauseKind::kWake, "switch-in", 2 * kUs, 1},
                                    {CauseKind::kThread, "ksoftirqd/3 40 other", 1 * kUs, 1}}));
}

TEST(Attribution, NoHistoryBeforeTheWindowIsUnaccountedAndIncomplete) {
  AttrScript s;
  s.IrqEntry(kE + 5 * kUs, 1, 77, 11, "arch_timer")
      .Waking(kE + 6 * kUs, 1, 77, "probe", 500, 19, 1)
      .IrqExit(kE + 8 * kUs, 1, 77, 11)
      .Switch(kE + 10 * kUs, 1, "make", 77, 120, "probe", 500, 19);
  const Explanation e = AttributeAndCompare(s, Spike(1, 12 * kUs));
  EXPECT_FALSE(e.complete);
  EXPECT_NE(e.incomplete_reason.find("no sched_switch on CPU 1"), std::string::npos)
      << e.incomplete_reason;
  EXPECT_EQ(Tuples(e), (std::vector<PartTuple>{{CauseKind::kUnaccounted, "unaccounted", 7 * kUs, 1},
                                               {CauseKind::kWake, "timer irq", 3 * kUs, 1},
                                               {CauseKind::kWake, "switch-in", 2 * kUs, 1}}));
  EXPECT_NE(Verdict(e).find("[incomplete: no sched_switch on CPU 1"), std::string::npos)
      << Verdict(e);
}

TEST(Attribution, LostEventsMakeItIncompleteButKeepThePartition) {
  const Explanation e = AttributeAndCompare(IdleDirectScript(), Spike(1, 40 * kUs), true);
  EXPECT_FALSE(e.complete);
  EXPECT_NE(e.incomplete_reason.find("lost events on CPU 1"), std::string::npos);
  EXPECT_EQ(e.parts.size(), 3U);
}

TEST(Attribution, ATrimmedWindowIsIncompleteForItsOwnReasonNotTheKernels) {
  const AttrScript script = IdleDirectScript();
  const SpikeInput spike = Spike(1, 40 * kUs);
  const Explanation whole = Attribute(script.events(), spike);
  const Explanation e = Attribute(script.events(), spike, WindowLoss{false, true});
  EXPECT_TRUE(whole.complete);
  EXPECT_FALSE(e.complete);
  EXPECT_EQ(e.incomplete_reason,
            "explained too late: rtpulse's trace store had already dropped the start of the "
            "window");
  EXPECT_EQ(Tuples(e), Tuples(whole)) << "the partition does not depend on why it is incomplete";
  const Explanation both = Attribute(script.events(), spike, WindowLoss{true, true});
  EXPECT_NE(both.incomplete_reason.find("the kernel lost events on CPU 1 in the window; "
                                        "explained too late"),
            std::string::npos)
      << both.incomplete_reason;
}

TEST(Attribution, AWindowWithNoEventsAtAllIsUnaccounted) {
  const Explanation e = AttributeAndCompare(AttrScript{}, Spike(1, 25 * kUs));
  EXPECT_EQ(e.chain, ChainKind::kUnknown);
  EXPECT_EQ(e.probe_tid, 0);
  EXPECT_FALSE(e.complete);
  EXPECT_EQ(Tuples(e),
            (std::vector<PartTuple>{{CauseKind::kUnaccounted, "unaccounted", 25 * kUs, 1}}));
}

TEST(Attribution, AKnownTaskAndNoEventsInTheWindowIsUnaccountedNotBlamed) {
  AttrScript s;
  s.Switch(kE - 10 * kUs, 1, "swapper/1", 0, 120, "busy", 123, 120);
  const Explanation e = AttributeAndCompare(s, Spike(1, 25 * kUs, 500));
  EXPECT_EQ(e.chain, ChainKind::kUnknown);
  EXPECT_TRUE(e.complete);
  EXPECT_EQ(Tuples(e),
            (std::vector<PartTuple>{{CauseKind::kUnaccounted, "unaccounted", 25 * kUs, 1}}));
}

TEST(Attribution, AZeroLengthOrNegativeWindowHasNoParts) {
  const Explanation zero = AttributeAndCompare(IdleDirectScript(), Spike(1, 0));
  EXPECT_EQ(zero.lateness_ns, 0);
  EXPECT_TRUE(zero.parts.empty());
  EXPECT_EQ(Verdict(zero), "+0.0 us: no lateness");
  SpikeInput early = Spike(1, 0);
  early.actual_ns = kE - 3 * kUs;
  const Explanation negative = Attribute(IdleDirectScript().events(), early);
  EXPECT_EQ(negative.lateness_ns, 0);
  EXPECT_TRUE(negative.parts.empty());
}

TEST(Attribution, TheProbeTidIsFoundOrTakenAsGiven) {
  const Explanation found = AttributeAndCompare(IdleDirectScript(), Spike(1, 40 * kUs));
  const Explanation given = AttributeAndCompare(IdleDirectScript(), Spike(1, 40 * kUs, 500));
  EXPECT_EQ(found.probe_tid, 500);
  EXPECT_EQ(given.probe_tid, 500);
  EXPECT_EQ(Tuples(found), Tuples(given));
  // Another tid: no wake of it in the window, so the chain is unknown and nothing is blamed
  // on the tasks; the IRQ is still named. Its clock read says it ran at actual_ns, so its
  // (unrecorded) switch-in is placed at the last event on the CPU.
  const Explanation other = AttributeAndCompare(IdleDirectScript(), Spike(1, 40 * kUs, 999));
  EXPECT_EQ(other.probe_tid, 999);
  EXPECT_EQ(other.chain, ChainKind::kUnknown);
  EXPECT_EQ(other.inferred_switches, 1);
  EXPECT_EQ(Tuples(other),
            (std::vector<PartTuple>{{CauseKind::kIdle, "idle", 33 * kUs, 1},
                                    {CauseKind::kIrq, "irq 11 arch_timer", 5 * kUs, 1},
                                    {CauseKind::kWake, "switch-in", 2 * kUs, 1}}));
}

// This kernel (and others) never traces the switch out of the idle task: after the wake-up
// the next events on the CPU simply carry the woken task's pid. The switch is inferred from
// common_pid and placed at the previous event on the CPU (the timer IRQ's exit here).
AttrScript IdleDirectNoSwitchScript(bool probe_events) {
  AttrScript s;
  s.Switch(kE - 1000 * kUs, 1, "probe", 500, 19, "swapper/1", 0, 120)
      .IrqEntry(kE + 30 * kUs, 1, 0, 11, "arch_timer")
      .Hrtimer(kE + 31 * kUs, 1, 0)
      .Waking(kE + 32 * kUs, 1, 0, "probe", 500, 19, 1)
      .HrtimerExit(kE + 33 * kUs, 1, 0)
      .IrqExit(kE + 35 * kUs, 1, 0, 11);
  if (probe_events) s.Other(kE + 37 * kUs, 1, 500).Other(kE + 38 * kUs, 1, 500);
  return s;
}

TEST(Attribution, AnUnrecordedSwitchOutOfIdleIsInferredFromTheProbesOwnEvents) {
  const Explanation e = AttributeAndCompare(IdleDirectNoSwitchScript(true), Spike(1, 40 * kUs));
  EXPECT_EQ(e.chain, ChainKind::kDirect);
  EXPECT_EQ(e.probe_tid, 500);
  EXPECT_EQ(e.inferred_switches, 1);
  EXPECT_TRUE(e.complete) << e.incomplete_reason;
  EXPECT_EQ(Tuples(e), (std::vector<PartTuple>{{CauseKind::kIdle, "idle", 30 * kUs, 1},
                                               {CauseKind::kWake, "switch-in", 5 * kUs, 1},
                                               {CauseKind::kWake, "timer irq", 5 * kUs, 1}}));
  EXPECT_EQ(Verdict(e),
            "+40 us: 30 us idle, 5.0 us wake switch-in, 5.0 us wake timer irq [1 switch inferred "
            "from common_pid: the kernel did not trace it]");
  // The probe's tid given: the same answer.
  EXPECT_EQ(Tuples(AttributeAndCompare(IdleDirectNoSwitchScript(true), Spike(1, 40 * kUs, 500))),
            Tuples(e));
}

TEST(Attribution, TheProbesClockReadIsTheObservationWhenItsTidIsKnown) {
  // No event of the probe at all after the IRQ: its clock read at actual_ns shows it running.
  const Explanation given =
      AttributeAndCompare(IdleDirectNoSwitchScript(false), Spike(1, 40 * kUs, 500));
  EXPECT_EQ(given.chain, ChainKind::kDirect);
  EXPECT_EQ(given.probe_tid, 500);
  EXPECT_EQ(given.inferred_switches, 1);
  EXPECT_EQ(Tuples(given), (std::vector<PartTuple>{{CauseKind::kIdle, "idle", 30 * kUs, 1},
                                                   {CauseKind::kWake, "switch-in", 5 * kUs, 1},
                                                   {CauseKind::kWake, "timer irq", 5 * kUs, 1}}));
  // Without the tid, the first event on the CPU after the clock read names who ran then (the
  // probe arming its next timer): the same answer, the tid found.
  AttrScript after = IdleDirectNoSwitchScript(false);
  after.Other(kE + 41 * kUs, 1, 500);
  const Explanation found = AttributeAndCompare(after, Spike(1, 40 * kUs));
  EXPECT_EQ(found.probe_tid, 500);
  EXPECT_EQ(found.chain, ChainKind::kDirect);
  EXPECT_EQ(found.inferred_switches, 1);
  EXPECT_EQ(Tuples(found), Tuples(given));
  // An idle event after it says nothing: nothing is inferred.
  AttrScript idle_after = IdleDirectNoSwitchScript(false);
  idle_after.Other(kE + 41 * kUs, 1, 0);
  EXPECT_EQ(AttributeAndCompare(idle_after, Spike(1, 40 * kUs)).inferred_switches, 0);
  // Without the tid and no later event nothing tells who ran: the CPU stays idle, no chain
  // is claimed.
  const Explanation unknown =
      AttributeAndCompare(IdleDirectNoSwitchScript(false), Spike(1, 40 * kUs));
  EXPECT_EQ(unknown.probe_tid, 0);
  EXPECT_EQ(unknown.chain, ChainKind::kUnknown);
  EXPECT_EQ(unknown.inferred_switches, 0);
  EXPECT_EQ(Tuples(unknown),
            (std::vector<PartTuple>{{CauseKind::kIdle, "idle", 35 * kUs, 1},
                                    {CauseKind::kIrq, "irq 11 arch_timer", 5 * kUs, 1}}));
}

// The shape seen on the real kernel: idle runs a BLOCK softirq on its way out of an IRQ, wakes
// a kworker, and the next event on the CPU is that kworker's (recorded) switch to the probe.
TEST(Attribution, AnInferredWorkerRunBetweenTheWakeAndTheProbeIsNamedWithItsExactTime) {
  AttrScript s;
  s.Switch(kE - 100 * kUs, 1, "sleep", 400, 120, "swapper/1", 0, 120)
      .IrqEntry(kE + 10 * kUs, 1, 0, 11, "arch_timer")
      .Waking(kE + 11 * kUs, 1, 0, "probe", 500, 19, 1)
      .IrqExit(kE + 12 * kUs, 1, 0, 11)
      .SoftEntry(kE + 12 * kUs, 1, 0, 4, "BLOCK")
      .Waking(kE + 13 * kUs, 1, 0, "kworker/1:1", 300, 120, 1)
      .SoftExit(kE + 14 * kUs, 1, 0, 4, "BLOCK")
      .Switch(kE + 30 * kUs, 1, "kworker/1:1", 300, 120, "probe", 500, 19);
  const Explanation e = AttributeAndCompare(s, Spike(1, 32 * kUs));
  EXPECT_EQ(e.chain, ChainKind::kDirect);
  EXPECT_EQ(e.probe_tid, 500);
  EXPECT_EQ(e.inferred_switches, 1);
  EXPECT_EQ(Tuples(e),
            (std::vector<PartTuple>{{CauseKind::kThread, "kworker/1:1 300 other", 16 * kUs, 1},
                                    {CauseKind::kIdle, "idle", 10 * kUs, 1},
                                    {CauseKind::kSoftirq, "BLOCK in swapper/1", 2 * kUs, 1},
                                    {CauseKind::kWake, "switch-in", 2 * kUs, 1},
                                    {CauseKind::kWake, "timer irq", 2 * kUs, 1}}));
}

TEST(Attribution, AnInferredTaskNoEventNamesIsNamedByItsPidWithAnUnknownPolicy) {
  AttrScript s;
  s.Switch(kE - 100 * kUs, 1, "sleep", 400, 120, "swapper/1", 0, 120)
      .IrqEntry(kE + 5 * kUs, 1, 0, 11, "arch_timer")
      .Waking(kE + 5 * kUs + 500, 1, 0, "probe", 500, 19, 1)
      .IrqExit(kE + 6 * kUs, 1, 0, 11)
      .Other(kE + 20 * kUs, 1, 4242)
      .Other(kE + 25 * kUs, 1, 4242);
  // Idle -> 4242 inferred at the IRQ exit, 4242 -> probe at 4242's last event (the probe's
  // clock read at actual_ns).
  const Explanation e = AttributeAndCompare(s, Spike(1, 30 * kUs, 500));
  EXPECT_EQ(e.inferred_switches, 2);
  EXPECT_EQ(e.chain, ChainKind::kDirect);
  EXPECT_EQ(Tuples(e), (std::vector<PartTuple>{
                           {CauseKind::kThread, "pid 4242 4242 policy unknown", 19 * kUs, 1},
                           {CauseKind::kWake, "switch-in", 5 * kUs, 1},
                           {CauseKind::kIdle, "idle", 5 * kUs, 1},
                           {CauseKind::kWake, "timer irq", 1 * kUs, 1}}));
}

// Random but well-formed sequences (seeded, so a failure repeats): task switches, nested
// hard IRQs and vectors, softirqs in their tasks, wakes of the probe and of ktimers/1 from any
// context or from CPU 0, raises, exits that close more than the innermost frame. Attribute()
// and the independent script must agree on every one.
// rtpulse noise: the poller (pid 700, rt 95) was running when it read the clock at kE and next
// read it 50 us later. In between: the timer IRQ, its TIMER softirq on the way out, a higher
// priority task that took the CPU, and the poller's own time around them in which it ran no
// code of its own (an NMI, SMI or the VM's host: unaccounted).
TEST(Attribution, ARunningThreadsGapGoesToWhatHeldTheCpuAndTheRestIsUnaccounted) {
  AttrScript s;
  s.Switch(kE - 900 * kUs, 1, "swapper/1", 0, 120, "rtpulse-noise", 700, 4)
      .Irq(kE - 500 * kUs, kE - 497 * kUs, 1, 700, 11, "arch_timer")  // Before: not in it.
      .Irq(kE + 2 * kUs, kE + 6 * kUs, 1, 700, 11, "arch_timer")
      .SoftEntry(kE + 6 * kUs, 1, 700, 1, "TIMER")
      .Waking(kE + 7 * kUs, 1, 700, "hog", 800, 0, 1)
      .SoftExit(kE + 10 * kUs, 1, 700, 1, "TIMER")
      .Switch(kE + 12 * kUs, 1, "rtpulse-noise", 700, 4, "hog", 800, 0)
      .Switch(kE + 40 * kUs, 1, "hog", 800, 0, "rtpulse-noise", 700, 4);
  SpikeInput gap = Spike(1, 50 * kUs, 700);
  gap.running = true;
  const Explanation e = AttributeAndCompare(s, gap);
  EXPECT_EQ(e.chain, ChainKind::kRunning);
  EXPECT_EQ(e.probe_tid, 700);
  EXPECT_TRUE(e.complete) << e.incomplete_reason;
  EXPECT_EQ(Tuples(e),
            (std::vector<PartTuple>{{CauseKind::kThread, "hog 800 rt 99", 28 * kUs, 1},
                                    {CauseKind::kWake, "switch-in", 10 * kUs, 1},
                                    {CauseKind::kIrq, "irq 11 arch_timer", 4 * kUs, 1},
                                    {CauseKind::kSoftirq, "TIMER in rtpulse-noise", 4 * kUs, 1},
                                    {CauseKind::kUnaccounted, "unaccounted", 4 * kUs, 1}}));
  // Nothing in the trace at all: the whole gap is the poller's, unaccounted; without its tid
  // the task switched in last before the gap is taken for it.
  AttrScript quiet;
  quiet.Switch(kE - 900 * kUs, 1, "swapper/1", 0, 120, "rtpulse-noise", 700, 4);
  SpikeInput stall = Spike(1, 9 * kUs, 0);
  stall.running = true;
  const Explanation q = AttributeAndCompare(quiet, stall);
  EXPECT_EQ(q.probe_tid, 700);
  EXPECT_EQ(Tuples(q),
            (std::vector<PartTuple>{{CauseKind::kUnaccounted, "unaccounted", 9 * kUs, 1}}));
  EXPECT_EQ(Verdict(q), "+9.0 us: 9.0 us unaccounted (likely the host)");
}

TEST(Attribution, AgreesWithTheTruthScriptOnRandomSequences) {
  struct Task {
    const char* comm;
    int pid;
    int prio;
  };
  const Task tasks[] = {{"swapper/1", 0, 120}, {"make", 100, 120}, {"spin", 101, 9},
                        {"ktimers/1", 20, 98}, {"probe", 500, 19}, {"dl", 102, -1}};
  const char* softirqs[] = {"HI",       "TIMER",   "NET_TX", "NET_RX",  "BLOCK",
                            "IRQ_POLL", "TASKLET", "SCHED",  "HRTIMER", "RCU"};
  std::mt19937 rng(20261201);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  // Rounds 40..79 leave out half the switches out of the idle task, as some kernels do;
  // rounds 80..119 add the probe's syscalls (the full event set) to rounds like 0..39;
  // rounds 120..159 rename tasks while they run and change their policy (which leaves no
  // event: only their next switch says so).
  int inferred_total = 0, renamed_total = 0;
  for (int round = 0; round < 160; ++round) {
    const bool drop_idle_exits = round >= 40 && round < 80;
    const bool syscalls = round >= 80 && round < 120;
    const bool renames = round >= 120;
    // Each task's name and prio as they are now (only make, spin and dl change).
    std::vector<std::pair<std::string, int>> live;
    for (const Task& task : tasks) live.emplace_back(task.comm, task.prio);
    auto now = [&](int k) -> std::pair<std::string, int>& { return live[static_cast<size_t>(k)]; };
    AttrScript s;
    int64_t t = kE - 40 * kUs;
    int current = pick(4);
    const bool history = round % 7 != 0;  // Some rounds start without a sched_switch.
    if (history) {
      s.Switch(t, 1, "swapper/1", 0, 120, now(current).first, tasks[current].pid,
               now(current).second);
    }
    std::vector<int> hard;                 // Open irq numbers (vectors are 200+).
    std::map<int, std::vector<int>> soft;  // Open softirq vecs per task index.
    for (int step = 0; step < 60; ++step) {
      t += (1 + pick(6)) * kUs + pick(3) * 100;
      const Task& task = tasks[current];
      const int pid = history || step > 0 ? task.pid : 77;
      if (renames && pid == task.pid && (current == 1 || current == 2 || current == 5) &&
          pick(5) == 0) {
        if (pick(2) == 0) {
          const std::string name = std::string(task.comm) + "-" + std::to_string(step);
          s.Rename(t, 1, task.pid, now(current).first, name);
          now(current).first = name;
          ++renamed_total;
        } else {
          constexpr int kPrios[] = {120, 9, 49, -1};
          now(current).second = kPrios[pick(4)];
        }
        continue;
      }
      switch (pick(9)) {
        case 0:
          if (hard.empty()) {
            const int next = pick(6);
            if (!drop_idle_exits || task.pid != 0 || pick(2) == 0) {
              s.Switch(t, 1, now(current).first, task.pid, now(current).second, now(next).first,
                       tasks[next].pid, now(next).second);
            }
            current = next;
          }
          break;
        case 1:
          if (hard.size() < 3) {
            const int irq = pick(2) == 0 ? 200 + pick(2) : 11 + pick(40);
            if (irq >= 200) {
              s.VectorEntry(t, 1, pid, irq, irq == 200 ? "local_timer" : "reschedule");
            } else {
              s.IrqEntry(t, 1, pid, irq, irq == 11 ? "arch_timer" : "eth0");
            }
            hard.push_back(irq);
          }
          break;
        case 2:
          if (!hard.empty()) {
            // Usually the innermost; sometimes an outer one, which closes the inner too.
            const size_t k = pick(4) == 0 ? static_cast<size_t>(pick(static_cast<int>(hard.size())))
                                          : hard.size() - 1;
            const int irq = hard[k];
            if (irq >= 200) {
              s.VectorExit(t, 1, pid, irq, irq == 200 ? "local_timer" : "reschedule");
            } else {
              s.IrqExit(t, 1, pid, irq);
            }
            hard.resize(k);
          }
          break;
        case 3: {
          auto& stack = soft[current];
          if (stack.size() < 2) {
            const int vec = pick(10);
            s.SoftEntry(t, 1, pid, vec, softirqs[vec]);
            stack.push_back(vec);
          }
          break;
        }
        case 4: {
          auto& stack = soft[current];
          if (!stack.empty()) {
            s.SoftExit(t, 1, pid, stack.back(), softirqs[stack.back()]);
            stack.pop_back();
          }
          break;
        }
        case 5:
          s.Waking(t, pick(4) == 0 ? 0 : 1, pid, "probe", 500, 19, 1);
          break;
        case 6:
          s.Waking(t, 1, pid, "ktimers/1", 20, 98, 1);
          break;
        case 7:
          s.SoftRaise(t, 1, pid, 8, "HRTIMER");
          break;
        default:
          if (!hard.empty()) s.Hrtimer(t, 1, pid);
          break;
      }
      // The probe's own syscalls, in task context (the probe's sys_enter before it sleeps,
      // its sys_exit after it runs again), at a fresh instant.
      if (syscalls && hard.empty() && tasks[current].pid == 500 && pick(2) == 0) {
        t += kUs;
        if (pick(2) == 0) {
          s.SysEnter(t, 1, 500);
        } else {
          s.SysExit(t, 1, 500);
        }
      }
    }
    const int64_t actual = kE + static_cast<int64_t>(pick(200)) * kUs;
    SpikeInput spike = Spike(1, actual - kE, pick(2) == 0 ? 500 : 0);
    SCOPED_TRACE("round " + std::to_string(round));
    inferred_total += AttributeAndCompare(s, spike).inferred_switches;
    // The same window as a running thread's gap (rtpulse noise): no chain.
    spike.running = true;
    EXPECT_EQ(AttributeAndCompare(s, spike).chain, ChainKind::kRunning);
  }
  EXPECT_GT(inferred_total, 10);  // The dropping rounds did exercise the inference.
  EXPECT_GT(renamed_total, 20);
}

Explanation Made(int64_t lateness_ns, std::vector<Part> parts) {
  Explanation e;
  e.lateness_ns = lateness_ns;
  e.parts = std::move(parts);
  return e;
}

TEST(AttributionVerdict, OneDecimalBelowTenUsAndSmallPartsFolded) {
  EXPECT_EQ(Verdict(Made(9'440, {{CauseKind::kWake, "timer irq", 9'000, 1},
                                 {CauseKind::kIdle, "idle", 400, 1},
                                 {CauseKind::kUnaccounted, "unaccounted", 40, 1}})),
            "+9.4 us: 9.0 us wake timer irq, 0.4 us idle, +1 other (0.0 us)");
  EXPECT_EQ(Verdict(Made(150'500, {{CauseKind::kThread, "stress 7 rt 90", 149'000, 2},
                                   {CauseKind::kIrq, "local_timer", 1'000, 1},
                                   {CauseKind::kIrq, "irq 9 x", 300, 1},
                                   {CauseKind::kSoftirq, "RCU in ksoftirqd/1", 200, 1}})),
            "+151 us: 149 us thread stress 7 rt 90, +3 other (1.5 us)");
  // Exactly 1 % is kept.
  EXPECT_EQ(Verdict(Made(100'000, {{CauseKind::kIrq, "irq 45 eth0", 99'000, 1},
                                   {CauseKind::kIdle, "idle", 1'000, 1}})),
            "+100 us: 99 us irq 45 eth0, 1.0 us idle");
  Explanation incomplete = Made(10'000, {{CauseKind::kUnaccounted, "unaccounted", 10'000, 1}});
  incomplete.complete = false;
  incomplete.incomplete_reason = "the kernel lost events on CPU 2 in the window";
  EXPECT_EQ(Verdict(incomplete),
            "+10 us: 10 us unaccounted (likely the host) [incomplete: the kernel lost events on "
            "CPU 2 in the window]");
}

TEST(AttributionSummary, RowsByTotalTimeAndByCount) {
  const std::vector<Explanation> spikes = {
      Made(100, {{CauseKind::kIrq, "irq 45 eth0", 60, 1}, {CauseKind::kIdle, "idle", 40, 1}}),
      Made(300, {{CauseKind::kThread, "spin 9 rt 90", 290, 1}, {CauseKind::kIdle, "idle", 10, 1}}),
      Made(50, {{CauseKind::kIrq, "irq 45 eth0", 30, 2}, {CauseKind::kIdle, "idle", 20, 1}}),
  };
  const CauseTable table = Summarise(spikes);
  ASSERT_EQ(table.by_time.size(), 3U);
  EXPECT_EQ(table.by_time[0].name, "spin 9 rt 90");
  EXPECT_EQ(table.by_time[0].total_ns, 290);
  EXPECT_EQ(table.by_time[0].spikes, 1U);
  EXPECT_EQ(table.by_time[1].name, "irq 45 eth0");
  EXPECT_EQ(table.by_time[1].total_ns, 90);
  EXPECT_EQ(table.by_time[1].spikes, 2U);
  EXPECT_EQ(table.by_time[1].max_ns, 60);
  EXPECT_EQ(table.by_time[2].name, "idle");
  EXPECT_EQ(table.by_time[2].total_ns, 70);
  EXPECT_EQ(table.by_time[2].spikes, 3U);
  EXPECT_EQ(table.by_time[2].max_ns, 40);
  ASSERT_EQ(table.by_count.size(), 3U);
  EXPECT_EQ(table.by_count[0].name, "idle");
  EXPECT_EQ(table.by_count[1].name, "irq 45 eth0");
  EXPECT_EQ(table.by_count[2].name, "spin 9 rt 90");
  EXPECT_TRUE(Summarise({}).by_time.empty());
}

// The truth script on text in the shape the kernel's trace file has (flags column, us
// timestamps, comms with '-' and ' ', events it does not use, a lost-events line for another
// CPU), against parts worked out by hand.
TEST(ExplainTruthScript, ReadsKernelShapedLinesAgainstHandWorkedParts) {
  testutil::TempDir dir;
  const std::string window = dir.File("window.txt");
  std::ofstream(window)
      << "# tracer: nop\n"
         "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
         "#              | |         |   |||||     |         |\n"
         " memfd:sealed-91-32765   [000] d..2. 48088.245000: sched_switch: prev_comm=bash "
         "prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=memfd:sealed-91 next_pid=32765 "
         "next_prio=120\n"
         " memfd:sealed-91-32765   [000] d.h1. 48088.246010: local_timer_entry: vector=236\n"
         " memfd:sealed-91-32765   [000] d.h1. 48088.246011: hrtimer_expire_entry: "
         "hrtimer=000000000d831f31 function=hrtimer_wakeup now=48088246010993\n"
         " memfd:sealed-91-32765   [000] d.h2. 48088.246012: sched_waking: comm=my probe "
         "pid=4000 prio=19 target_cpu=000\n"
         " memfd:sealed-91-32765   [000] d.h1. 48088.246013: softirq_raise: vec=9 "
         "[action=RCU]\n"
         " memfd:sealed-91-32765   [000] d.h1. 48088.246014: local_timer_exit: vector=236\n"
         " memfd:sealed-91-32765   [000] ..s1. 48088.246015: softirq_entry: vec=9 [action=RCU]\n"
         " memfd:sealed-91-32765   [000] ..s1. 48088.246020: softirq_exit: vec=9 [action=RCU]\n"
         "CPU:1 [LOST 3 EVENTS]\n"
         "          <idle>-0       [001] d..2. 48088.246021: sched_stat_runtime: comm=x pid=3 "
         "runtime=5 [ns] vruntime=7 [ns]\n"
         "          <idle>-0       [001] d.h2. 48088.246022: ipi_entry: (Rescheduling "
         "interrupts)\n"
         " memfd:sealed-91-32765   [000] d..2. 48088.246030: sched_switch: "
         "prev_comm=memfd:sealed-91 prev_pid=32765 prev_prio=120 prev_state=R ==> next_comm=my "
         "probe next_pid=4000 next_prio=19\n";
  const testutil::ProcessResult py = testutil::RunProcess(
      {"/usr/bin/python3", std::string(RTPULSE_SOURCE_DIR) + "/tests/trace/explain_truth.py",
       window, "--cpu", "0", "--expected", "48088246000000", "--actual", "48088246050000"});
  ASSERT_EQ(py.exit_code, 0) << py.err;
  const json truth = json::parse(py.out);
  EXPECT_EQ(truth["lateness_ns"], 50'000);
  EXPECT_EQ(truth["probe_tid"], 4000);
  EXPECT_EQ(truth["chain"], "direct");
  EXPECT_EQ(truth["complete"], true);
  const json want = json::parse(R"([
    {"kind": "wake", "name": "switch-in", "ns": 20000, "count": 1},
    {"kind": "thread", "name": "memfd:sealed-91 32765 other", "ns": 11000, "count": 1},
    {"kind": "unaccounted", "name": "unaccounted", "ns": 10000, "count": 1},
    {"kind": "softirq", "name": "RCU in memfd:sealed-91", "ns": 5000, "count": 1},
    {"kind": "wake", "name": "timer irq", "ns": 4000, "count": 1}])");
  EXPECT_EQ(truth["parts"], want) << py.out;
  // The same window with the lost events on its own CPU: the same parts, but incomplete.
  std::string text = testutil::ReadFile(window);
  text.replace(text.find("CPU:1 [LOST"), 5, "CPU:0");
  std::ofstream(dir.File("lost.txt")) << text;
  const testutil::ProcessResult lost = testutil::RunProcess(
      {"/usr/bin/python3", std::string(RTPULSE_SOURCE_DIR) + "/tests/trace/explain_truth.py",
       dir.File("lost.txt"), "--cpu", "0", "--expected", "48088246000000", "--actual",
       "48088246050000"});
  ASSERT_EQ(lost.exit_code, 0) << lost.err;
  EXPECT_EQ(json::parse(lost.out)["complete"], false);
  EXPECT_EQ(json::parse(lost.out)["parts"], want);
  // rtpulse's own saved windows say so in a comment line.
  std::ofstream(dir.File("noted.txt"))
      << "# LOST EVENTS: the kernel dropped events in this window\n" + testutil::ReadFile(window);
  const testutil::ProcessResult noted = testutil::RunProcess(
      {"/usr/bin/python3", std::string(RTPULSE_SOURCE_DIR) + "/tests/trace/explain_truth.py",
       dir.File("noted.txt"), "--cpu", "0", "--expected", "48088246000000", "--actual",
       "48088246050000"});
  ASSERT_EQ(noted.exit_code, 0) << noted.err;
  EXPECT_EQ(json::parse(noted.out)["complete"], false);
}

}  // namespace
}  // namespace rtpulse::trace
