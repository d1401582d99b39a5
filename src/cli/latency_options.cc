#include "cli/latency_options.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <utility>

#include "cli/command.h"
#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/parse.h"
#include "core/printable.h"
#include "core/run_cap.h"
#include "export/textfile.h"
#include "measure/gpio.h"
#include "measure/wake_clock.h"
#include "measure/wake_path.h"
#include "measure/wake_source.h"
#include "trace/session.h"

namespace rtpulse::cli {
namespace {

using measure::LatencyPlan;
using measure::WakePath;

/// Policy and priority from -p/--policy with cyclictest's meaning; rtpulse's default when
/// neither is given is SCHED_FIFO 80 (cyclictest's is SCHED_OTHER).
Status ResolvePolicy(const LatencyOptions& o, SchedPolicy& policy, int& priority) {
  priority = o.priority.value_or(80);
  if (!o.policy.empty()) {
    auto p = measure::ParsePolicy(o.policy);
    if (!p) return p.error();
    policy = *p;
  } else {
    policy = o.priority && *o.priority == 0 ? SchedPolicy::kOther : SchedPolicy::kFifo;
  }
  if (IsRealtime(policy)) {
    if (priority < 1 || priority > 99) {
      return UsageError(
          fmt::format("priority {} is out of range for --policy {}: use -p 1..99 (-p 0 alone means "
                      "SCHED_OTHER)",
                      priority, SchedPolicyName(policy)));
    }
  } else {
    if (o.priority && *o.priority != 0) {
      return UsageError(fmt::format(
          "-p {} conflicts with --policy {}: only fifo and rr take a priority; use -p 0 or "
          "--policy fifo",
          *o.priority, o.policy));
    }
    if (priority < 0 || priority > 99) {
      return UsageError(fmt::format("priority {} is out of range: use -p 0..99", priority));
    }
    priority = 0;
  }
  return Status::Ok();
}

Expected<std::vector<WakePath>> ResolveWake(const LatencyOptions& o) {
  if (o.relative && o.posix && !o.system) {
    return UsageError("-r (relative clock_nanosleep) and -x (POSIX timers) conflict: pick one");
  }
  if (!o.wake.empty() && (o.relative || o.posix || o.system)) {
    return UsageError(
        fmt::format("--wake '{}' conflicts with {}: -r and -s mean --wake rel, -x means "
                    "--wake posix; use only --wake",
                    o.wake,
                    o.relative ? "-r"
                    : o.system ? "-s"
                               : "-x"));
  }
  // -s: cyclictest's sys_nanosleep mode, relative sleeps (it drops -x for it, with a warning).
  if (o.relative || o.system) return std::vector<WakePath>{WakePath::kRel};
  if (o.posix) return std::vector<WakePath>{WakePath::kPosix};
  if (o.wake.empty()) return std::vector<WakePath>{WakePath::kAbs};
  if (o.wake.rfind("gpio", 0) == 0 || o.wake.find(",gpio") != std::string::npos) {
    if (o.wake.find(',') != std::string::npos || o.wake.rfind("gpio:", 0) != 0) {
      return UsageError(
          fmt::format("--wake '{}': the gpio path needs its input line and runs alone: --wake "
                      "gpio:CHIP:LINE (docs/gpio.md)",
                      o.wake));
    }
    return std::vector<WakePath>{WakePath::kGpio};
  }
  std::vector<std::string> also;
  if (trace::TracingCompiledIn()) also.emplace_back("timerlat");
  if (measure::GpioCompiledIn()) also.emplace_back("gpio:CHIP:LINE");
  return measure::ParseWakeList(o.wake, also);
}

/// --wake gpio:CHIP:LINE [--wake-drive gpio:CHIP:LINE]: the lines' syntax now, the devices
/// when the probe opens them (a missing chip or a busy line fails the run before it starts).
Status ResolveGpioWake(const LatencyOptions& o, LatencyPlan& plan) {
  const bool gpio = plan.paths.size() == 1 && plan.paths[0] == WakePath::kGpio;
  if (!gpio) {
    if (!o.wake_drive.empty()) {
      return UsageError(fmt::format(
          "--wake-drive {} needs --wake gpio:CHIP:LINE (the input line its wire drives)",
          o.wake_drive));
    }
    return Status::Ok();
  }
  auto line = measure::ParseGpioLine(o.wake);
  if (!line) return UsageError("--wake: " + line.error().message);
  if (plan.threads.size() != 1) {
    return UsageError(
        fmt::format("--wake {} needs a single thread (one probe owns the line's events), but {} "
                    "threads were asked for: add -t 1",
                    o.wake, plan.threads.size()));
  }
  plan.gpio_wake = line->text;
  if (!o.wake_drive.empty()) {
    auto drive = measure::ParseGpioLine(o.wake_drive);
    if (!drive) return UsageError("--wake-drive: " + drive.error().message);
    if (drive->chip == line->chip && drive->line == line->line) {
      return UsageError(fmt::format(
          "--wake-drive {} is the input line itself: drive another pin wired to it", o.wake_drive));
    }
    plan.gpio_drive = drive->text;
  }
  if (!measure::GpioCompiledIn()) {
    return ResourceError(fmt::format(
        "--wake {}: this rtpulse was built without GPIO support: install libgpiod-dev (Debian, "
        "scripts/install-deps) and rebuild with -DRTPULSE_GPIO=ON (docs/gpio.md)",
        o.wake));
  }
  return Status::Ok();
}

Status CheckOutputs(const LatencyOptions& o) {
  if (o.json == "-" && o.verbose) {
    return UsageError("--json - and -v both write to standard output: give --json a file name");
  }
  for (const auto* path : {&o.json, &o.histfile, &o.samples}) {
    if (path->empty() || (path == &o.json && *path == "-")) continue;
    if (Status s = CheckWritable(*path); !s) return s;
  }
  if (!o.json.empty() && !o.samples.empty() && o.json == o.samples) {
    return UsageError(fmt::format("--json and --samples both name '{}': give two files", o.json));
  }
  if (!o.textfile.empty()) return exporter::CheckTextfileDir(o.textfile);
  return Status::Ok();
}

}  // namespace

Expected<measure::InjectPlan> ParseInject(const std::string& text) {
  const size_t at = text.find('@');
  if (at == std::string::npos) {
    return UsageError(fmt::format("invalid --inject '{}': use DELAY@RATE, e.g. 2ms@10Hz", text));
  }
  auto delay = ParseTimeNs(text.substr(0, at));
  if (!delay) return UsageError("--inject: " + delay.error().message);
  auto rate = ParseRateHz(text.substr(at + 1));
  if (!rate) return UsageError("--inject: " + rate.error().message);
  if (*delay <= 0) return UsageError(fmt::format("--inject '{}': the delay must be above 0", text));
  if (static_cast<double>(*delay) * *rate >= 1e9) {
    return UsageError(fmt::format(
        "--inject '{}': a {} ns spin at {} Hz would never stop; lower the delay or the rate", text,
        *delay, *rate));
  }
  return measure::InjectPlan{*delay, *rate};
}

Status CheckCpusOnline(const std::vector<int>& cpus, const std::vector<int>& online,
                       const char* flag) {
  for (int cpu : cpus) {
    if (std::find(online.begin(), online.end(), cpu) == online.end()) {
      return UsageError(fmt::format("{}: CPU {} is offline or does not exist (online: {})", flag,
                                    cpu, FormatCpuList(online)));
    }
  }
  return Status::Ok();
}

void DeclareLatencyOptions(CLI::App& sub, LatencyOptions& o) {
  // cyclictest uses -h for its histogram, so help is --help only.
  sub.set_help_flag("--help", "Print this help message and exit");
  sub.add_option("-a,--affinity", o.affinity,
                 "pin threads to CPUSET round robin (no value: thread N on CPU N)")
      ->expected(0, 1);
  sub.add_option("-t,--threads", o.threads, "number of threads (no value: one per CPU)")
      ->expected(0, 1);
  sub.add_flag("-S,--smp", o.smp,
               "one pinned thread per online CPU, same priority (-a and -t are ignored)");
  sub.add_option("-p,--priority", o.priority,
                 "priority of the threads 1..99 (default 80 SCHED_FIFO; 0 = SCHED_OTHER)");
  sub.add_option("--policy", o.policy, "policy: other, normal, batch, idle, fifo, rr");
  sub.add_flag("--priospread", o.priospread, "thread N runs at priority PRIO - N");
  sub.add_option("-i,--interval", o.interval_us, "base interval in us (default 1000)");
  sub.add_option("-d,--distance", o.distance_us,
                 "thread N's interval is -i + N x US (default 500; ignored with -h/-H)");
  sub.add_option("-D,--duration", o.duration, "run time: number with s, m, h or d (per wake path)");
  sub.add_option("-l,--loops", o.loops, "samples per thread (0 = endless)");
  sub.add_flag("-m,--mlockall", o.mlockall, "lock memory (always done; accepted for cyclictest)");
  sub.add_option("-h,--histogram", o.histogram_us, "print a 1 us histogram up to US at the end");
  sub.add_option("-H,--histofall", o.histofall_us, "as -h, with a sum column");
  sub.add_option("--histfile", o.histfile, "write the -h/-H histogram to PATH instead of stdout");
  sub.add_flag("-q,--quiet", o.quiet, "print only cyclictest's final lines");
  sub.add_flag("-u,--unbuffered", o.unbuffered, "unbuffered standard output (live processing)");
  // --aligned is cyclictest 2.4's name, --align rt-tests main's (its man page).
  sub.add_option("-A,--aligned,--align", o.aligned_us,
                 "start every thread's grid at one moment, thread N's N x USEC later");
  sub.add_option("--secaligned", o.secaligned,
                 "start every thread's grid at the next whole second (CLOCK_MONOTONIC), USEC "
                 "later (no value: 0)")
      ->expected(0, 1);
  sub.add_flag("-N,--nsecs", o.nsecs, "cyclictest fields in ns instead of us");
  sub.add_flag("-r,--relative", o.relative, "relative timer (= --wake rel)");
  sub.add_flag("-x,--posix_timers", o.posix, "POSIX timers (= --wake posix)");
  sub.add_flag("-s,--system", o.system,
               "nanosleep(2) (= --wake rel: the kernel runs both as one relative hrtimer sleep)");
  sub.add_option("-c,--clock", o.clock,
                 "clock the abs, rel and posix paths sleep on: 0 or monotonic (default), 1 or "
                 "realtime, boottime, tai, aux0..aux7");
  sub.add_option("-F,--fifo", o.fifo,
                 "make a named pipe at PATH; each reader gets the current status lines");
  sub.add_option("-o,--oscope", o.oscope,
                 "with -v: print only the largest latency of every RED samples (and its cycle)");
  sub.add_flag("-M,--refresh_on_max", o.refresh_on_max,
               "redraw the live view only when a thread's maximum grew");
  sub.add_flag("-R,--resolution", o.resolution,
               "measure the clock's resolution before the run, print it beside the kernel's "
               "figure, and warn when it steps by more than 1 us");
  sub.add_flag("--dbg_cyclictest", o.debug,
               "print each thread's CPU, policy, priority, interval and grid offset first");
  sub.add_flag("--smi", o.smi,
               "count System Management Interrupts on each thread's CPU (x86 MSR 0x34; needs "
               "pinned threads and the msr module)");
  sub.add_option("--deepest-idle-state", o.deepest_idle_state,
                 "on the measured CPUs, disable every cpuidle state deeper than N (-1: all) for "
                 "the run; restored after");
  sub.add_option("-b,--breaktrace", o.breaktrace_us, "stop (and stop ftrace) when latency > US");
  sub.add_flag("--tracemark", o.tracemark, "write an ftrace marker when -b fires");
  sub.add_option("--spike", o.spike_us, "record every sample above US");
  sub.add_option("--spike-nodes", o.spike_nodes, "spikes kept per thread (default 1024)");
  sub.add_flag("-v,--verbose", o.verbose, "print every sample as thread:cycle:latency_us");
  sub.add_option("--json", o.json,
                 "write results as JSON (cyclictest schema + rtpulse fields); - = stdout");
  sub.add_flag("--laptop", o.laptop, "leave /dev/cpu_dma_latency alone (save battery)");
  sub.add_flag("--allow-degraded", o.allow_degraded,
               "measure even if the RT policy, CPU or memory lock is refused (marked degraded; "
               "without it: exit 3 before measuring)");
  sub.add_flag("--default-system", o.default_system, "do not tune the system");
  sub.add_option("--latency", o.latency_pm_qos, "value for /dev/cpu_dma_latency (default 0)");
  sub.add_option("--mainaffinity", o.mainaffinity, "pin the main (non-RT) thread to CPUSET");
  sub.add_option("--wake", o.wake,
                 "activation path(s), run in turn: abs, rel, timerfd, posix, itimer, epoll, "
                 "busy, deadline, xthread, or all (default abs); timerlat (the kernel's timerlat "
                 "tracer, after the others); or gpio:CHIP:LINE, the edges of a GPIO input line "
                 "(docs/gpio.md)");
  sub.add_option("--wake-drive", o.wake_drive,
                 "with --wake gpio: toggle this output line (gpio:CHIP:LINE) at the interval; "
                 "a wire to the input line makes the edges");
  sub.add_option("--samples", o.samples, "log every sample to FILE (binary; see rtpulse samples)");
  sub.add_option("--textfile", o.textfile,
                 "also write DIR/rtpulse.prom (node_exporter's textfile collector) every 10 s and "
                 "at the end (docs/fleet.md)");
  sub.add_option("--inject", o.inject,
                 "ground truth: spin DELAY at RATE above the probes on each CPU, e.g. 2ms@10Hz");
  sub.add_option("--budget", o.budget,
                 "judge the run: LATENCY[@PERCENTILE], e.g. 100us@p99.99 (without: the max); "
                 "exit 4 when not met (docs/budget.md)");
  sub.add_option("--dl-runtime", o.dl_runtime_us,
                 "SCHED_DEADLINE runtime in us for --wake deadline (default interval/10)");
  sub.add_option("--explain", o.explain,
                 "explain every sample later than US (e.g. 200 or 0.2ms) from a kernel trace: "
                 "a verdict line per spike, a cause table (docs/explain.md)");
  sub.add_option("--explain-windows", o.explain_windows,
                 "with --explain: save each spike's raw trace window (ftrace text) in DIR");
  sub.add_option("--explain-cost", o.explain_cost,
                 "with --explain: measure the first DUR without the trace, the rest with it, "
                 "and state both (default 2s; 0 = off)");
  sub.add_option("--explain-events", o.explain_events,
                 "with --explain: lean (default: the events the attribution reads) or full "
                 "(also wakeup, hrtimer_start/exit, ipi, workqueue, cpu_idle: richer raw "
                 "windows, more cost; docs/trace.md#events)");
}

void NoteGivenOptions(const CLI::App& sub, LatencyOptions& o) {
  o.affinity_given = sub.count("--affinity") > 0;
  o.threads_given = sub.count("--threads") > 0;
  o.secaligned_given = sub.count("--secaligned") > 0;
  o.explain_cost_given = sub.count("--explain-cost") > 0;
}

std::string TracefsDirFromEnv() {
  const char* env = std::getenv(kTracefsEnv);
  return env == nullptr ? std::string() : std::string(env);
}

Expected<int64_t> ParseExplainThresholdNs(const std::string& text, const char* flag) {
  auto ns = ParseTimeNs(text, kNsPerUs);
  if (!ns) {
    return UsageError(fmt::format(
        "{} '{}': not a time: give microseconds (e.g. {} 200) or a time with a unit (200us, "
        "0.2ms)",
        flag, Printable(text), flag));
  }
  if (*ns <= 0) {
    return UsageError(fmt::format(
        "{} '{}': the threshold must be above 0 (samples later than it are explained), e.g. "
        "{} 200",
        flag, Printable(text), flag));
  }
  return *ns;
}

Expected<trace::EventSet> ParseExplainEvents(const std::string& text, bool explain_given) {
  if (text.empty()) return trace::EventSet::kLean;
  if (!explain_given) {
    return UsageError(fmt::format(
        "--explain-events {} needs --explain US (it chooses the events --explain's trace "
        "records)",
        Printable(text)));
  }
  auto set = trace::ParseEventSet(text);
  if (!set) {
    return UsageError(fmt::format(
        "--explain-events '{}': give lean (the events the attribution reads; the default) or "
        "full (every event the trace knows, for reading the raw windows; costs more)",
        Printable(text)));
  }
  return *set;
}

Expected<std::optional<trace::ExplainPlan>> ParseExplainOption(const std::string& explain,
                                                               const std::string& events) {
  auto event_set = ParseExplainEvents(events, !explain.empty());
  if (!event_set) return event_set.error();
  if (explain.empty()) return std::optional<trace::ExplainPlan>();
  auto threshold = ParseExplainThresholdNs(explain);
  if (!threshold) return threshold.error();
  trace::ExplainPlan plan;
  plan.threshold_ns = *threshold;
  plan.session.tracefs_dir = TracefsDirFromEnv();
  plan.session.events = *event_set;
  return std::optional<trace::ExplainPlan>(std::move(plan));
}

namespace {

Status CheckWindowsDir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st)) {
      return UsageError(fmt::format(
          "--explain-windows '{}' is a file, not a folder: give a folder (it is created if "
          "missing)",
          Printable(dir)));
    }
    return Status::Ok();
  }
  fs::path parent = fs::path(dir).parent_path();
  if (parent.empty()) parent = ".";
  if (!fs::is_directory(parent, ec)) {
    return UsageError(fmt::format(
        "--explain-windows '{}': the folder '{}' it would be created in does not exist: create "
        "it first or give another folder",
        Printable(dir), Printable(parent.string())));
  }
  return Status::Ok();
}

}  // namespace

Expected<std::optional<trace::ExplainPlan>> BuildExplainPlan(const LatencyOptions& o,
                                                             const measure::LatencyPlan& plan,
                                                             const std::vector<int>& online_cpus) {
  auto events = ParseExplainEvents(o.explain_events, !o.explain.empty());
  if (!events) return events.error();
  if (o.explain.empty()) {
    if (!o.explain_windows.empty()) {
      return UsageError(
          fmt::format("--explain-windows {} needs --explain US (which spikes to explain and save)",
                      Printable(o.explain_windows)));
    }
    if (o.explain_cost_given) {
      return UsageError(fmt::format(
          "--explain-cost {} needs --explain US (it measures the cost of --explain's trace)",
          Printable(o.explain_cost)));
    }
    return std::optional<trace::ExplainPlan>();
  }
  trace::ExplainPlan explain;
  auto threshold = ParseExplainThresholdNs(o.explain);
  if (!threshold) return threshold.error();
  explain.threshold_ns = *threshold;
  if (!o.explain_windows.empty()) {
    if (Status s = CheckWindowsDir(o.explain_windows); !s) return s.error();
    explain.window_dir = o.explain_windows;
  }
  auto cost = ParseTimeNs(o.explain_cost, kNsPerSec);
  if (!cost || *cost < 0) {
    return UsageError(fmt::format(
        "--explain-cost '{}': give a duration such as 2s or 500ms (a bare number is seconds; 0 "
        "= no cost phase)",
        Printable(o.explain_cost)));
  }
  explain.cost_phase_ns = *cost;
  if (plan.duration_ns > 0 && explain.cost_phase_ns > 0 &&
      explain.cost_phase_ns * 2 > plan.duration_ns) {
    if (o.explain_cost_given) {
      return UsageError(fmt::format(
          "--explain-cost {} is more than half of -D {}: the run would mostly go unexplained; "
          "give a longer -D or a shorter --explain-cost (0 = off)",
          Printable(o.explain_cost), Printable(o.duration)));
    }
    // The default 2 s does not fit a short run: no cost phase, and the notes say so.
    explain.cost_phase_ns = 0;
  }
  explain.session.cpus = measure::MeasuredCpus(plan.threads, online_cpus);
  explain.session.tracefs_dir = TracefsDirFromEnv();
  explain.session.events = *events;
  return std::optional<trace::ExplainPlan>(std::move(explain));
}

namespace {

/// -A and --secaligned: each thread's grid phase and the origin on a whole second.
Status ApplyAlignment(const LatencyOptions& o, LatencyPlan& plan) {
  if (!o.aligned_us && !o.secaligned_given) return Status::Ok();
  if (o.aligned_us && o.secaligned_given) {
    return UsageError(
        "-A and --secaligned both set where the threads' grids start: give one (as cyclictest)");
  }
  if (plan.inject) {
    return UsageError(
        "--inject aligns its spins to the shared grid; -A/--secaligned move the threads' own: "
        "drop one");
  }
  constexpr int64_t kHourUs = 3600LL * 1000 * 1000;
  int64_t offset_us = 0;
  if (o.aligned_us) {
    offset_us = *o.aligned_us;
    const auto last = static_cast<int64_t>(plan.threads.size()) - 1;
    if (offset_us < 0 || offset_us * last > kHourUs) {
      return UsageError(fmt::format(
          "-A {}: thread N starts N x {} us after the first; give 0 or more, at most an hour "
          "for the last thread (e.g. -A 100)",
          offset_us, offset_us));
    }
  } else if (!o.secaligned.empty()) {
    auto parsed = ParseInt(o.secaligned, "--secaligned");
    if (!parsed || *parsed >= 1'000'000) {
      return UsageError(
          fmt::format("--secaligned {}: the offset after the whole second is 0 to 999999 us (e.g. "
                      "--secaligned 500)",
                      Printable(o.secaligned)));
    }
    offset_us = *parsed;
  }
  plan.origin_on_second = o.secaligned_given;
  for (auto& t : plan.threads) {
    t.phase_ns = (o.aligned_us ? offset_us * t.index : offset_us) * kNsPerUs;
  }
  return Status::Ok();
}

/// cyclictest's -s with -x, -c, -o, --smi and --deepest-idle-state: checked, and set in
/// `plan` where the engine does them.
Status ApplyCyclictestModes(const LatencyOptions& o, LatencyPlan& plan) {
  if (o.system && o.posix) {
    plan.notes.push_back(
        "-x ignored: -s sleeps with nanosleep(2), which needs no timer (as cyclictest, which "
        "warns and does the same)");
  }
  if (!o.clock.empty()) {
    auto clock = measure::ParseWakeClock(o.clock);
    if (!clock) return clock.error();
    for (WakePath p : plan.paths) {
      if (*clock != CLOCK_MONOTONIC && !measure::WakePathTakesClock(p)) {
        return UsageError(fmt::format(
            "-c {} applies to cyclictest's own ways of waiting (--wake abs, rel, posix); --wake "
            "{} sleeps on CLOCK_MONOTONIC: drop -c or that path",
            Printable(o.clock), measure::WakePathName(p)));
      }
    }
    if (Status s = measure::CheckWakeClock(*clock); !s) return s;
    plan.wake_clock = *clock;
  }
  if (o.oscope) {
    if (*o.oscope < 1) {
      return UsageError(fmt::format(
          "-o {}: RED is how many samples make one printed line: give 1 or more (e.g. -o 10)",
          *o.oscope));
    }
    if (!o.verbose) {
      return UsageError(fmt::format(
          "-o {} reduces -v's sample lines: add -v (as cyclictest, which refuses it alone)",
          *o.oscope));
    }
  }
  if (o.smi) {
    if (std::any_of(plan.threads.begin(), plan.threads.end(),
                    [](const measure::ThreadPlan& t) { return t.cpu < 0; })) {
      return UsageError(
          "--smi counts SMIs on each thread's CPU, so the threads must be pinned: add -a or -S "
          "(as cyclictest)");
    }
    plan.count_smis = true;
  }
  if (o.deepest_idle_state && *o.deepest_idle_state < -1) {
    return UsageError(fmt::format(
        "--deepest-idle-state {}: give the deepest cpuidle state to keep (0 = only the first, "
        "the polling one on x86), or -1 to disable every state",
        *o.deepest_idle_state));
  }
  return Status::Ok();
}

/// The threads: which CPUs, how many, their policy, priority and interval, by cyclictest's
/// rules (-S, -a, -t, -p, --priospread, -i, -d, -h/-H).
Status PlanThreads(const LatencyOptions& o, const std::vector<int>& online_cpus,
                   LatencyPlan& plan) {
  // Which CPUs the threads go on, and how many threads. As in cyclictest, -S means one
  // thread on every online CPU whatever -a and -t say (cyclictest warns and ignores them).
  std::vector<int> cpu_set = online_cpus;
  const bool pin = o.affinity_given || o.smp;
  if (o.smp && o.affinity_given) {
    plan.notes.push_back(
        "-a ignored: -S runs one thread on every online CPU (as cyclictest does); for one "
        "thread per CPU of a set use -a CPUSET -t");
  }
  if (o.smp && o.threads_given) {
    plan.notes.push_back("-t ignored: -S runs one thread per online CPU (as cyclictest does)");
  }
  if (!o.smp && o.affinity_given && !o.affinity.empty()) {
    auto cpus = ParseCpuList(o.affinity);
    if (!cpus) return UsageError("-a: " + cpus.error().message);
    if (Status s = CheckCpusOnline(*cpus, online_cpus, "-a"); !s) return s;
    cpu_set = *cpus;
  }
  size_t thread_count = 1;
  if (o.smp || (o.threads_given && o.threads.empty())) thread_count = cpu_set.size();
  if (!o.smp && o.threads_given && !o.threads.empty()) {
    auto n = ParseInt(o.threads, "thread count (-t)");
    if (!n) return n.error();
    if (*n < 1 || *n > 4096) {
      return UsageError(fmt::format("-t {}: use 1..4096 threads, or -t alone for one per CPU", *n));
    }
    thread_count = static_cast<size_t>(*n);
  }

  SchedPolicy policy = SchedPolicy::kFifo;
  int priority = 80;
  if (Status s = ResolvePolicy(o, policy, priority); !s) return s;
  if (o.priospread && o.smp) {
    return UsageError(
        "--priospread conflicts with -S (which runs every thread at the same "
        "priority): drop one");
  }
  if (o.priospread && (o.histogram_us || o.histofall_us)) {
    return UsageError(
        "--priospread conflicts with -h/-H (a histogram run puts every thread at "
        "the same priority, as in cyclictest): drop one");
  }
  if (o.interval_us <= 0) {
    return UsageError(
        fmt::format("interval -i {} must be above 0 us (e.g. -i 1000)", o.interval_us));
  }
  if (o.interval_us > 3600LL * 1000 * 1000) {
    return UsageError(fmt::format("interval -i {} us is longer than an hour", o.interval_us));
  }
  if (o.distance_us && *o.distance_us < 0) {
    return UsageError(
        fmt::format("distance -d {} must be >= 0 us (e.g. -d 500, or -d 0 for one "
                    "interval on every thread)",
                    *o.distance_us));
  }
  // cyclictest's rule: thread N's interval is -i + N x -d (500 by default, with or without
  // -S); a histogram run (-h/-H) gives every thread the -i interval and ignores -d.
  const bool histogram = o.histogram_us || o.histofall_us;
  const int64_t distance_us = histogram ? 0 : o.distance_us.value_or(kDefaultDistanceUs);
  if (histogram && o.distance_us) {
    plan.notes.push_back(fmt::format(
        "-d {} ignored: with -h/-H every thread runs at the -i interval (as cyclictest does)",
        *o.distance_us));
  }
  // -h/-H (cyclictest) puts every thread at the same priority.
  const bool same_priority = o.smp || histogram;

  for (size_t i = 0; i < thread_count; ++i) {
    measure::ThreadPlan t;
    t.index = static_cast<int>(i);
    t.cpu = pin ? cpu_set[i % cpu_set.size()] : -1;
    t.policy = policy;
    t.priority = priority;
    if (o.priospread && !same_priority && IsRealtime(policy)) {
      t.priority = std::max(1, priority - static_cast<int>(i));
    }
    t.interval_ns = (o.interval_us + static_cast<int64_t>(i) * distance_us) * kNsPerUs;
    plan.threads.push_back(t);
  }
  return Status::Ok();
}

/// The wake paths (--wake, -r, --posix, gpio) and the one-per-process rule.
Status PlanWakePaths(const LatencyOptions& o, LatencyPlan& plan) {
  auto paths = ResolveWake(o);
  if (!paths) return paths.error();
  plan.paths = *paths;
  if (o.wake.find("all") != std::string::npos) {
    measure::DropOnePerProcessPaths(plan.paths, plan.threads.size(), plan.notes);
  }
  if (Status s = ResolveGpioWake(o, plan); !s) return s;
  return measure::CheckOnePerProcess(plan.paths, plan.threads.size(), "threads were asked for",
                                     "add -t 1");
}

/// How long the run lasts (-D, -l) and its linear histogram (-h, -H, --histfile).
Status PlanLengthAndHistogram(const LatencyOptions& o, LatencyPlan& plan) {
  if (!o.duration.empty()) {
    auto d = ParseDurationNs(o.duration);
    if (!d) return UsageError("-D: " + d.error().message);
    plan.duration_ns = *d;
  }
  if (o.loops < 0) return UsageError(fmt::format("-l {} must be >= 0 (0 = endless)", o.loops));
  plan.loops = static_cast<uint64_t>(o.loops);
  const std::string asked = plan.duration_ns != 0 ? std::string(o.duration)
                            : plan.loops != 0     ? fmt::format("none (-l {})", plan.loops)
                                                  : std::string("no end");
  if (Status s = CapRunDuration(plan.duration_ns, "-D", asked, plan.notes); !s) return s;

  if (o.histogram_us && o.histofall_us && *o.histogram_us != *o.histofall_us) {
    return UsageError(
        "-h and -H both given with different sizes: -H is -h plus a sum column; "
        "use one");
  }
  const int64_t hist_us = o.histofall_us.value_or(o.histogram_us.value_or(0));
  if ((o.histogram_us || o.histofall_us) && (hist_us < 1 || hist_us > 1'000'000)) {
    return UsageError(fmt::format("histogram size {} us: use 1..1000000", hist_us));
  }
  if (!o.histfile.empty() && hist_us == 0) {
    return UsageError("--histfile needs -h US or -H US (what histogram to write)");
  }
  plan.linear_histogram_us = hist_us;
  return Status::Ok();
}

/// What a spike triggers: -b (stop and mark the trace), --tracemark, --spike, --spike-nodes.
Status PlanSpikeActions(const LatencyOptions& o, LatencyPlan& plan) {
  if (o.breaktrace_us) {
    if (*o.breaktrace_us <= 0) return UsageError("-b must be above 0 us");
    plan.breaktrace_ns = *o.breaktrace_us * kNsPerUs;
  }
  if (o.tracemark && !o.breaktrace_us) {
    return UsageError("--tracemark needs -b US (it marks the trace when -b fires)");
  }
  plan.tracemark = o.tracemark;
  if (o.spike_us) {
    if (*o.spike_us <= 0) return UsageError("--spike must be above 0 us");
    plan.spike_ns = *o.spike_us * kNsPerUs;
  }
  if (o.spike_nodes < 1 || o.spike_nodes > 10'000'000) {
    return UsageError(fmt::format("--spike-nodes {}: use 1..10000000", o.spike_nodes));
  }
  plan.spike_nodes = static_cast<size_t>(o.spike_nodes);
  return Status::Ok();
}

/// --inject: pinned probes at a FIFO/RR priority the injector can run above.
Status PlanInject(const LatencyOptions& o, LatencyPlan& plan) {
  if (o.inject.empty()) return Status::Ok();
  auto inject = ParseInject(o.inject);
  if (!inject) return inject.error();
  if (!o.affinity_given && !o.smp) {
    return UsageError(
        "--inject needs pinned threads (it spins on each measured CPU): add -a "
        "or -S");
  }
  if (std::find(plan.paths.begin(), plan.paths.end(), WakePath::kDeadline) != plan.paths.end()) {
    return UsageError(
        "--inject cannot be combined with --wake deadline (SCHED_DEADLINE "
        "threads are not pinned)");
  }
  for (const auto& t : plan.threads) {
    if (!IsRealtime(t.policy) || t.priority >= 99) {
      return UsageError(
          "--inject needs probes at SCHED_FIFO/RR priority 1..98 so the injector "
          "can run above them (e.g. -p 80)");
    }
  }
  plan.inject = *inject;
  return Status::Ok();
}

/// What the run sets on the system and the main thread: /dev/cpu_dma_latency (--latency,
/// --laptop, --default-system), --mainaffinity, SCHED_DEADLINE's runtime (--dl-runtime).
Status PlanSystemSettings(const LatencyOptions& o, const std::vector<int>& online_cpus,
                          LatencyPlan& plan) {
  if (o.laptop || o.default_system) {
    if (o.latency_pm_qos) {
      return UsageError(
          "--latency conflicts with --laptop/--default-system (which leave "
          "/dev/cpu_dma_latency alone)");
    }
    plan.pm_qos_us.reset();
  } else {
    plan.pm_qos_us = o.latency_pm_qos.value_or(0);
    if (*plan.pm_qos_us < 0) return UsageError("--latency must be >= 0 us");
  }
  if (!o.mainaffinity.empty()) {
    auto cpus = ParseCpuList(o.mainaffinity);
    if (!cpus) return UsageError("--mainaffinity: " + cpus.error().message);
    if (Status s = CheckCpusOnline(*cpus, online_cpus, "--mainaffinity"); !s) return s;
    plan.main_affinity = *cpus;
  }
  if (o.dl_runtime_us) {
    if (*o.dl_runtime_us <= 0 || *o.dl_runtime_us >= o.interval_us) {
      return UsageError(
          fmt::format("--dl-runtime {} us must be above 0 and below the interval "
                      "({} us)",
                      *o.dl_runtime_us, o.interval_us));
    }
    plan.deadline_runtime_ns = *o.dl_runtime_us * kNsPerUs;
  }
  return Status::Ok();
}

/// Where the samples go: the rings behind --samples, -v and --explain (one stream of them).
Status PlanSampleStream(const LatencyOptions& o, LatencyPlan& plan) {
  // --explain sees the samples through the same rings as the log, with or without one.
  if (!o.samples.empty() || o.verbose || !o.explain.empty()) {
    plan.sample_ring_capacity = measure::SampleRingCapacity(plan.threads);
  }
  if (!o.samples.empty() && o.verbose) {
    return UsageError(
        "--samples and -v both stream every sample: use one (rtpulse samples FILE "
        "--csv prints a samples file as text)");
  }
  return Status::Ok();
}

}  // namespace

Expected<LatencyPlan> BuildLatencyPlan(const LatencyOptions& o,
                                       const std::vector<int>& online_cpus) {
  LatencyPlan plan;
  // In this order: the first bad option is the one named.
  if (Status s = PlanThreads(o, online_cpus, plan); !s) return s.error();
  if (Status s = PlanWakePaths(o, plan); !s) return s.error();
  if (Status s = PlanLengthAndHistogram(o, plan); !s) return s.error();
  if (Status s = PlanSpikeActions(o, plan); !s) return s.error();
  if (Status s = PlanInject(o, plan); !s) return s.error();
  if (Status s = PlanSystemSettings(o, online_cpus, plan); !s) return s.error();
  if (Status s = PlanSampleStream(o, plan); !s) return s.error();
  if (Status s = ApplyAlignment(o, plan); !s) return s.error();
  if (Status s = ApplyCyclictestModes(o, plan); !s) return s.error();
  if (Status s = CheckOutputs(o); !s) return s.error();
  return plan;
}

}  // namespace rtpulse::cli
