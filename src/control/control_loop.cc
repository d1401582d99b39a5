#include "control/control_loop.h"

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

#include "control/control_jobs.h"
#include "core/clock.h"
#include "core/parse.h"
#include "core/printable.h"
#include "core/rt_bandwidth.h"
#include "core/suggest.h"
#include "measure/probe.h"
#include "measure/rt_setup.h"
#include "measure/wake_source.h"

namespace rtpulse::control {
namespace {

constexpr const char* kPolicyForms =
    "use other:NICE (-20..19), fifo:PRIO or rr:PRIO (1..99), or "
    "deadline:RUNTIME/DEADLINE/PERIOD (e.g. deadline:400us/4ms/4ms)";

#if defined(__SANITIZE_THREAD__)
constexpr size_t kControlStackBytes = 4 * 1024 * 1024;  // TSan's TLS lives on the stack
#else
constexpr size_t kControlStackBytes = 512 * 1024;
#endif
constexpr size_t kControlStackPrefaultBytes = 256 * 1024;

/// "4ms", "400us", "1500ns": the largest unit that divides the time exactly.
Expected<int> ParsePolicyNumber(std::string_view text, std::string_view value, int lo, int hi,
                                std::string_view what) {
  auto n = ParseSignedInt(text, what);
  if (!n) {
    return UsageError(fmt::format("invalid --policy '{}': {} '{}' is not a whole number; {}",
                                  Printable(value), what, Printable(text), kPolicyForms));
  }
  if (*n < lo || *n > hi) {
    return UsageError(fmt::format("invalid --policy '{}': {} '{}' is outside {}..{}; {}",
                                  Printable(value), what, Printable(text), lo, hi, kPolicyForms));
  }
  return static_cast<int>(*n);
}

Expected<PolicySpec> ParseDeadlineTimes(std::string_view times, std::string_view value) {
  PolicySpec spec;
  spec.kind = PolicySpec::Kind::kDeadline;
  int64_t parts[3] = {0, 0, 0};
  const char* names[3] = {"RUNTIME", "DEADLINE", "PERIOD"};
  size_t pos = 0;
  for (int i = 0; i < 3; ++i) {
    const size_t slash = i < 2 ? times.find('/', pos) : std::string_view::npos;
    if (i < 2 && slash == std::string_view::npos) {
      return UsageError(
          fmt::format("invalid --policy '{}': deadline needs three times "
                      "RUNTIME/DEADLINE/PERIOD, e.g. deadline:400us/4ms/4ms",
                      Printable(value)));
    }
    const std::string_view part = times.substr(pos, i < 2 ? slash - pos : std::string_view::npos);
    if (i == 2 && part.find('/') != std::string_view::npos) {
      return UsageError(
          fmt::format("invalid --policy '{}': deadline takes exactly three times "
                      "RUNTIME/DEADLINE/PERIOD, e.g. deadline:400us/4ms/4ms",
                      Printable(value)));
    }
    auto ns = ParseTimeNs(part);
    if (!ns) {
      return UsageError(
          fmt::format("invalid --policy '{}': {} '{}' is not a time; give a unit "
                      "ns, us, ms or s, e.g. deadline:400us/4ms/4ms",
                      Printable(value), names[i], Printable(part)));
    }
    if (*ns <= 0) {
      return UsageError(fmt::format("invalid --policy '{}': {} '{}' must be above zero",
                                    Printable(value), names[i], Printable(part)));
    }
    parts[i] = *ns;
    pos = slash + 1;
  }
  spec.runtime_ns = parts[0];
  spec.deadline_ns = parts[1];
  spec.period_ns = parts[2];
  if (spec.runtime_ns > spec.deadline_ns) {
    return UsageError(fmt::format(
        "invalid --policy '{}': RUNTIME {} is longer than DEADLINE {}; the kernel needs "
        "RUNTIME <= DEADLINE <= PERIOD",
        Printable(value), FormatTimeNs(spec.runtime_ns), FormatTimeNs(spec.deadline_ns)));
  }
  if (spec.deadline_ns > spec.period_ns) {
    return UsageError(fmt::format(
        "invalid --policy '{}': DEADLINE {} is longer than PERIOD {}; the kernel needs "
        "RUNTIME <= DEADLINE <= PERIOD",
        Printable(value), FormatTimeNs(spec.deadline_ns), FormatTimeNs(spec.period_ns)));
  }
  return spec;
}

std::string FormatSchedAttr(const measure::ThreadSchedAttr& attr) {
  PolicySpec spec;
  switch (attr.policy) {
    case SCHED_OTHER:
      spec.kind = PolicySpec::Kind::kOther;
      spec.nice = attr.nice;
      return FormatPolicySpec(spec);
    case SCHED_FIFO:
    case SCHED_RR:
      spec.kind = attr.policy == SCHED_FIFO ? PolicySpec::Kind::kFifo : PolicySpec::Kind::kRr;
      spec.priority = attr.priority;
      return FormatPolicySpec(spec);
    case measure::kSchedDeadlinePolicy:
      spec.kind = PolicySpec::Kind::kDeadline;
      spec.runtime_ns = attr.runtime_ns;
      spec.deadline_ns = attr.deadline_ns;
      spec.period_ns = attr.period_ns;
      return FormatPolicySpec(spec);
    case SCHED_BATCH:
      return fmt::format("batch:{}", attr.nice);
    case SCHED_IDLE:
      return "idle";
    default:
      return fmt::format("policy {}", attr.policy);
  }
}

/// SIGXCPU from SCHED_FLAG_DL_OVERRUN is process-directed: any thread may run the handler,
/// which only counts (a lock-free atomic add is async-signal-safe).
std::atomic<uint64_t> g_control_dl_overruns{0};
static_assert(std::atomic<uint64_t>::is_always_lock_free);

void CountDeadlineOverrun(int) {
  g_control_dl_overruns.fetch_add(1, std::memory_order_relaxed);
}

/// Everything the loop's thread reads and writes; owned by RunControlLoop's frame.
struct ControlThread {
  ControlThread(const ControlLoopPlan& p, JobBody& b, const std::atomic<bool>& s, ControlLive* l)
      : plan(p), body(b), stop(s), live(l) {}
  const ControlLoopPlan& plan;
  JobBody& body;
  const std::atomic<bool>& stop;
  ControlLive* live;
  int64_t deadline_ns = 0;
  std::unique_ptr<measure::WakeSource> source;
  ControlRunRecord record;
  std::optional<Error> failure;
  std::atomic<int> finished{0};
};

/// The policy other than deadline (which the deadline wake source sets when it arms).
void ApplyControlPolicy(ControlThread& t) {
  const PolicySpec& policy = t.plan.policy;
  const SchedPolicy thread_policy = ThreadSchedPolicy(policy);
  ControlRunRecord& rec = t.record;
  if (policy.kind == PolicySpec::Kind::kOther) {
    if (Status s = measure::SetThreadScheduling(SchedPolicy::kOther, 0); !s) {
      rec.degraded = true;
      rec.warnings.push_back(s.error().message);
    }
    // Linux keeps nice per thread: setpriority on the tid changes this thread only.
    if (setpriority(PRIO_PROCESS, static_cast<id_t>(rec.tid), policy.nice) != 0) {
      rec.degraded = true;
      rec.warnings.push_back(fmt::format("cannot set nice {}: {}; ran at the inherited nice",
                                         policy.nice, std::strerror(errno)));
    }
  } else if (IsRealtime(thread_policy)) {
    if (Status s = measure::SetThreadScheduling(thread_policy, policy.priority); !s) {
      rec.degraded = true;
      rec.warnings.push_back(s.error().message + "; ran as SCHED_OTHER instead");
    }
  }
}

void SetUpControlThread(ControlThread& t) {
  ControlRunRecord& rec = t.record;
  rec.tid = static_cast<int>(gettid());
  if (t.live != nullptr) t.live->tid.store(rec.tid, std::memory_order_release);
  // The POSIX timer and ITIMER signals are taken with sigwaitinfo by their sources.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGALRM);
  sigaddset(&set, measure::PosixTimerSignal());
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  const bool deadline = t.plan.policy.kind == PolicySpec::Kind::kDeadline;
  if (t.plan.cpu >= 0 && !deadline) {
    if (Status s = measure::SetThreadAffinity({t.plan.cpu}); !s) {
      rec.degraded = true;
      rec.warnings.push_back(s.error().message);
    }
  } else if (t.plan.cpu >= 0) {
    rec.warnings.push_back(
        "deadline: SCHED_DEADLINE threads cannot be pinned (the kernel refuses a CPU mask "
        "smaller than the root domain), so the job did not run on a fixed CPU");
  }
  if (t.plan.lock_memory) {
    if (auto warning = measure::LockAllMemory()) {
      rec.degraded = true;
      rec.warnings.push_back(*warning);
    }
  }
  measure::PrefaultStack(kControlStackPrefaultBytes);
  ApplyControlPolicy(t);
}

Status ArmControlSource(ControlThread& t, int64_t origin_ns) {
  const PolicySpec& policy = t.plan.policy;
  measure::WakeParams params;
  params.start_ns = origin_ns;
  params.interval_ns = t.plan.period_ns;
  params.cpu = t.plan.cpu;
  params.policy = ThreadSchedPolicy(policy);
  params.priority = policy.priority;
  params.stop = &t.stop;
  if (policy.kind != PolicySpec::Kind::kDeadline) return t.source->Arm(params);
  params.deadline_runtime_ns = policy.runtime_ns;
  params.deadline_relative_ns = policy.deadline_ns;
  params.deadline_flags = measure::kSchedFlagDlOverrun;
  if (t.source->Arm(params)) {
    t.record.deadline_overruns = 0;
    return Status::Ok();
  }
  // Kernels before 4.16 refuse the flag (EINVAL): run without it and say so.
  params.deadline_flags = 0;
  Status s = t.source->Arm(params);
  if (s) {
    t.record.warnings.push_back(
        "deadline: the kernel refused SCHED_FLAG_DL_OVERRUN, so runtime overruns are not "
        "counted (deadline_overruns unknown)");
  }
  return s;
}

void* ControlThreadMain(void* arg) {
  auto& t = *static_cast<ControlThread*>(arg);
  ControlRunRecord& rec = t.record;
  SetUpControlThread(t);
  // Grid origin one period ahead, so arming (SCHED_DEADLINE starts its period in
  // sched_setattr) happens before it.
  const int64_t planned_origin = MonotonicNs() + t.plan.period_ns;
  if (Status s = ArmControlSource(t, planned_origin); !s) {
    t.failure =
        Error{s.error().code, fmt::format("control loop ({}): {}",
                                          measure::WakePathName(t.plan.path), s.error().message)};
    t.source->Disarm();
    measure::SignalReady(t.finished);
    return nullptr;
  }
  // The deadline source's note speaks of the probe's grid restarts; the loop says its own.
  if (t.source->RestartsGridOnOverrun()) {
    rec.warnings.emplace_back(
        "deadline: grid anchored at the clock read before sched_setattr(), so wake-up latency "
        "is never understated");
  } else if (const char* note = t.source->note()) {
    rec.warnings.emplace_back(note);
  }
  if (auto attr = measure::GetThreadSchedAttr()) {
    rec.applied_policy = FormatSchedAttr(*attr);
  } else {
    rec.applied_policy = "unknown";
    rec.warnings.push_back(attr.error().message);
  }
  // The job log sized up front (value-initialised, within the capacity reserved by
  // RunControlLoop and locked by the set-up), so the loop writes each job in place.
  rec.jobs.resize(rec.jobs.capacity());
  if (t.plan.before_loop) t.plan.before_loop();
  // The first release is the first grid point after the hook returned: a slow hook costs
  // no skipped release, since no job was due before the loop started.
  const int64_t origin = t.source->GridOrigin(planned_origin);
  const int64_t now = MonotonicNs();
  const int64_t first =
      origin + t.plan.period_ns * (1 + std::max<int64_t>(0, (now - origin) / t.plan.period_ns));
  JobLoopParams loop;
  loop.period_ns = t.plan.period_ns;
  loop.deadline_ns = t.deadline_ns;
  loop.jobs = t.plan.jobs;
  loop.inject_every = t.plan.inject_every;
  loop.inject_ns = t.plan.inject_ns;
  loop.first_release_ns = first;
  rec.start_realtime_ns = ClockNs(CLOCK_REALTIME);
  if (t.plan.path == measure::WakePath::kAbs) {
    RunControlJobs(loop, static_cast<measure::AbsSleep&>(*t.source), measure::MonotonicClock{},
                   t.body, t.stop, t.live, rec);
  } else {
    RunControlJobs(loop, *t.source, measure::MonotonicClock{}, t.body, t.stop, t.live, rec);
  }
  rec.end_realtime_ns = ClockNs(CLOCK_REALTIME);
  if (t.plan.jobs == 0 && rec.jobs.size() == rec.jobs.capacity() && !rec.interrupted) {
    rec.warnings.push_back(fmt::format(
        "the run ended after {} jobs, the most a run without a job count keeps", rec.jobs.size()));
  }
  if (t.plan.after_loop) t.plan.after_loop();
  t.source->Disarm();
  measure::SignalReady(t.finished);
  return nullptr;
}

Status ValidateControlPlan(const ControlLoopPlan& plan) {
  const bool deadline = plan.policy.kind == PolicySpec::Kind::kDeadline;
  if (plan.period_ns <= 0) {
    return UsageError(
        fmt::format("invalid control period {} ns: give a period above zero, "
                    "e.g. 4ms",
                    plan.period_ns));
  }
  if (plan.deadline_ns < 0) {
    return UsageError(
        fmt::format("invalid job deadline {} ns: give 0 (the period) or a time "
                    "above zero",
                    plan.deadline_ns));
  }
  if (deadline && plan.policy.period_ns != plan.period_ns) {
    return UsageError(fmt::format(
        "--policy {}: its PERIOD {} differs from the control period {}; SCHED_DEADLINE "
        "releases the job, so give the same period to both (e.g. --policy deadline:{}/{}/{})",
        FormatPolicySpec(plan.policy), FormatTimeNs(plan.policy.period_ns),
        FormatTimeNs(plan.period_ns), FormatTimeNs(plan.policy.runtime_ns),
        FormatTimeNs(std::min(plan.policy.deadline_ns, plan.period_ns)),
        FormatTimeNs(plan.period_ns)));
  }
  if (deadline != (plan.path == measure::WakePath::kDeadline)) {
    return UsageError(fmt::format(
        "wake path '{}' with --policy {}: a deadline policy waits on the deadline path and "
        "only there (use --policy deadline:... with it, or another path for other policies)",
        measure::WakePathName(plan.path), FormatPolicySpec(plan.policy)));
  }
  if (plan.path == measure::WakePath::kRel) {
    return UsageError(
        "wake path 'rel' drifts by each wake-up's latency, so it has no release grid: use abs, "
        "timerfd, posix, itimer, epoll, busy, xthread or deadline");
  }
  if (plan.jobs > kMaxJobs) {
    return UsageError(fmt::format("{} jobs is more than one run keeps ({}): run fewer jobs",
                                  plan.jobs, kMaxJobs));
  }
  if (plan.inject_every > 0 && plan.inject_ns <= 0) {
    return UsageError(
        fmt::format("inject_ns {} must be above zero when inject_every is set", plan.inject_ns));
  }
  if (plan.cpu >= 0) {
    if (Status s = CheckCpuOnline(plan.cpu, FsRoot::Live()); !s) return s;
  }
  return Status::Ok();
}

/// Installs the SIGXCPU counter (once) for a deadline run and zeroes it. The handler stays for the
/// life of the process: an overrun signalled as the thread ends can be delivered after the
/// join (a sanitizer defers signals to its next safe point, and the kernel may pick any
/// thread), and SIGXCPU's default action would then kill the whole run. Counting it into a
/// finished run's counter is harmless; the next run zeroes it before its thread starts.
void StartOverrunCount() {
  g_control_dl_overruns.store(0, std::memory_order_relaxed);
  static const bool installed = [] {
    struct sigaction action {};
    action.sa_handler = &CountDeadlineOverrun;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    return sigaction(SIGXCPU, &action, nullptr) == 0;
  }();
  (void)installed;
}

}  // namespace

Expected<PolicySpec> ParsePolicySpec(std::string_view text) {
  const std::string_view value = TrimBlanks(text);
  const size_t colon = value.find(':');
  const std::string name(value.substr(0, colon));
  static const std::vector<std::string> kNames = {"other", "fifo", "rr", "deadline"};
  if (std::find(kNames.begin(), kNames.end(), name) == kNames.end()) {
    const std::string close = ClosestName(name, kNames);
    return UsageError(fmt::format(
        "unknown policy '{}' in --policy '{}'{}: {}", Printable(name), Printable(value),
        close.empty() ? "" : fmt::format(" (did you mean '{}'?)", close), kPolicyForms));
  }
  if (colon == std::string_view::npos || colon + 1 == value.size()) {
    return UsageError(fmt::format("invalid --policy '{}': {} needs a value after ':'; {}",
                                  Printable(value), name, kPolicyForms));
  }
  const std::string_view arg = value.substr(colon + 1);
  PolicySpec spec;
  if (name == "other") {
    auto nice = ParsePolicyNumber(arg, value, -20, 19, "nice");
    if (!nice) return nice.error();
    spec.kind = PolicySpec::Kind::kOther;
    spec.nice = *nice;
  } else if (name == "fifo" || name == "rr") {
    auto prio = ParsePolicyNumber(arg, value, 1, 99, "priority");
    if (!prio) return prio.error();
    spec.kind = name == "fifo" ? PolicySpec::Kind::kFifo : PolicySpec::Kind::kRr;
    spec.priority = *prio;
  } else {
    return ParseDeadlineTimes(arg, value);
  }
  return spec;
}

SchedPolicy ThreadSchedPolicy(const PolicySpec& spec) {
  switch (spec.kind) {
    case PolicySpec::Kind::kFifo:
      return SchedPolicy::kFifo;
    case PolicySpec::Kind::kRr:
      return SchedPolicy::kRr;
    case PolicySpec::Kind::kOther:
    case PolicySpec::Kind::kDeadline:
      return SchedPolicy::kOther;
  }
  return SchedPolicy::kOther;
}

std::string FormatPolicySpec(const PolicySpec& spec) {
  switch (spec.kind) {
    case PolicySpec::Kind::kOther:
      return fmt::format("other:{}", spec.nice);
    case PolicySpec::Kind::kFifo:
      return fmt::format("fifo:{}", spec.priority);
    case PolicySpec::Kind::kRr:
      return fmt::format("rr:{}", spec.priority);
    case PolicySpec::Kind::kDeadline:
      return fmt::format("deadline:{}/{}/{}", FormatTimeNs(spec.runtime_ns),
                         FormatTimeNs(spec.deadline_ns), FormatTimeNs(spec.period_ns));
  }
  return "other:0";
}

std::string PolicySlug(const PolicySpec& spec) {
  switch (spec.kind) {
    case PolicySpec::Kind::kOther:
      return spec.nice < 0 ? fmt::format("other-n{}", -spec.nice)
                           : fmt::format("other-{}", spec.nice);
    case PolicySpec::Kind::kFifo:
      return fmt::format("fifo-{}", spec.priority);
    case PolicySpec::Kind::kRr:
      return fmt::format("rr-{}", spec.priority);
    case PolicySpec::Kind::kDeadline:
      if (spec.deadline_ns == spec.period_ns) {
        return fmt::format("deadline-{}", FormatTimeNs(spec.runtime_ns));
      }
      return fmt::format("deadline-{}-{}-{}", FormatTimeNs(spec.runtime_ns),
                         FormatTimeNs(spec.deadline_ns), FormatTimeNs(spec.period_ns));
  }
  return "other-0";
}

Status CheckCpuOnline(int cpu, const FsRoot& root) {
  const auto line = root.ReadLine("/sys/devices/system/cpu/online");
  if (!line) {
    return UsageError(fmt::format("cannot check that CPU {} is online: {} is unreadable", cpu,
                                  root.Path("/sys/devices/system/cpu/online")));
  }
  auto cpus = ParseCpuList(*line);
  if (!cpus) {
    return UsageError(
        fmt::format("cannot check that CPU {} is online: {}", cpu, cpus.error().message));
  }
  if (std::find(cpus->begin(), cpus->end(), cpu) == cpus->end()) {
    return UsageError(fmt::format("CPU {} is not online (online: {}): pick one of those CPUs", cpu,
                                  FormatCpuList(*cpus)));
  }
  return Status::Ok();
}

RtThrottling DescribeRtThrottling(const FsRoot& root, bool realtime,
                                  const std::vector<JobTiming>& jobs) {
  RtThrottling out;
  const std::optional<RtBandwidth> bandwidth = ReadRtBandwidth(root);
  if (!bandwidth) {
    out.text =
        "RT throttling unknown: /proc/sys/kernel/sched_rt_runtime_us or "
        "sched_rt_period_us could not be read";
    return out;
  }
  out.known = true;
  const int64_t runtime = bandwidth->runtime_us;
  const int64_t period = bandwidth->period_us;
  out.runtime_us = runtime;
  out.period_us = period;
  if (!bandwidth->Throttles()) {
    out.text =
        fmt::format("RT throttling off: sched_rt_runtime_us = {} (period {} us)", runtime, period);
    return out;
  }
  out.enabled = true;
  const int64_t gap_us = period - runtime;
  out.text = fmt::format(
      "RT throttling on: {}/{} us: a FIFO/RR task that runs {:g} ms of a second is stopped for "
      "{:g} ms",
      runtime, period, static_cast<double>(runtime) * 1000.0 / static_cast<double>(period),
      static_cast<double>(gap_us) * 1000.0 / static_cast<double>(period));
  if (!realtime) return out;
  const int64_t threshold_ns = gap_us * kNsPerUs * 9 / 10;
  for (const JobTiming& job : jobs) {
    if (job.start_ns - job.release_ns >= threshold_ns ||
        job.end_ns - job.start_ns >= threshold_ns) {
      ++out.suspect_jobs;
    }
  }
  out.text += fmt::format(
      "; {} job(s) stalled for at least {:g} ms (90 % of that gap), the signature of throttling "
      "(or of a host stall as long)",
      out.suspect_jobs, static_cast<double>(threshold_ns) / 1e6);
  return out;
}

Expected<ControlRunRecord> RunControlLoop(const ControlLoopPlan& plan, JobBody& body,
                                          const std::atomic<bool>& stop, ControlLive* live) {
  if (Status s = ValidateControlPlan(plan); !s) return s.error();
  ControlThread t{plan, body, stop, live};
  t.deadline_ns = plan.deadline_ns > 0 ? plan.deadline_ns : plan.period_ns;
  t.source = measure::MakeWakeSource(plan.path);
  t.record.jobs.reserve(plan.jobs > 0 ? plan.jobs : kMaxUnboundedJobs);
  const bool deadline = plan.policy.kind == PolicySpec::Kind::kDeadline;
  if (deadline) StartOverrunCount();

  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kControlStackBytes);
  pthread_t handle;
  const int rc = pthread_create(&handle, &attr, &ControlThreadMain, &t);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    return ResourceError(fmt::format("cannot start the control thread: {}", std::strerror(rc)));
  }
  // Wait for the thread; once stop is set, unblock its wait (the engine's Interrupt), so it
  // sees the flag within a period at most.
  bool interrupted = false;
  while (!measure::AwaitReady(t.finished, 1, std::min<int64_t>(plan.period_ns, 10 * kNsPerMs))) {
    if (!interrupted && stop.load(std::memory_order_relaxed)) {
      t.source->Interrupt();
      interrupted = true;
    }
  }
  pthread_join(handle, nullptr);
  if (t.failure) return *t.failure;

  ControlRunRecord& rec = t.record;
  if (deadline && rec.deadline_overruns) {
    rec.deadline_overruns = g_control_dl_overruns.load(std::memory_order_relaxed);
  }
  if (rec.grid_restarts > 0) {
    rec.warnings.push_back(fmt::format(
        "deadline: the kernel restarted its period {} time(s) after an overrun; the loop "
        "re-anchored its grid on those wake-ups, whose latency is therefore unknown (their jobs "
        "are marked release_unknown)",
        rec.grid_restarts));
  }
  const bool realtime = IsRealtime(ThreadSchedPolicy(plan.policy));
  const RtThrottling throttling = DescribeRtThrottling(FsRoot::Live(), realtime, rec.jobs);
  rec.rt_throttling = throttling.text;
  rec.rt_throttle_suspects = throttling.suspect_jobs;
  return std::move(rec);
}

}  // namespace rtpulse::control
