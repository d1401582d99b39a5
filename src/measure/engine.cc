#include "measure/engine.h"

#include <fmt/format.h>
#include <sched.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <set>

#include "core/clock.h"
#include "core/fs_root.h"
#include "measure/injector.h"
#include "measure/probe.h"
#include "measure/rt_setup.h"
#include "measure/sample_log.h"
#include "measure/smi.h"
#include "measure/tracing.h"

namespace rtpulse::measure {
namespace {

constexpr int64_t kTickNs = 250 * kNsPerMs;        ///< Live view refresh.
constexpr int64_t kStartMarginNs = 20 * kNsPerMs;  ///< Grid origin after every probe is ready.

sigset_t RunSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGUSR2);
  return set;
}

std::vector<LiveProbe> Snapshot(const std::vector<std::unique_ptr<Probe>>& probes) {
  std::vector<LiveProbe> live;
  live.reserve(probes.size());
  for (const auto& p : probes) live.push_back(p->Live());
  return live;
}

/// Result of waiting on the controlling signals for up to `timeout_ns`.
enum class SignalEvent { kNone, kStop, kStats, kSharedStats };

SignalEvent WaitSignal(int64_t timeout_ns) {
  const sigset_t set = RunSignals();
  const timespec timeout = ToTimespec(std::max<int64_t>(timeout_ns, 0));
  const int sig = sigtimedwait(&set, nullptr, &timeout);
  if (sig == SIGINT || sig == SIGTERM) return SignalEvent::kStop;
  if (sig == SIGUSR1) return SignalEvent::kStats;
  if (sig == SIGUSR2) return SignalEvent::kSharedStats;
  return SignalEvent::kNone;
}

/// The injections of `inj` that landed on deadlines probe `r` (on its CPU) covered so far:
/// that probe's ground truth, in a checkpoint as in the final result.
uint64_t CoveredInjections(const ProbeRecord& r, const Injector& inj) {
  const auto covered = static_cast<uint64_t>(
      (static_cast<int64_t>(r.periods_elapsed) * r.interval_ns) / inj.period_ns());
  return std::min(inj.injections(), covered);
}

/// Fills `snapshot` (whose histograms are reused after the first call) from the running
/// probes. Main thread only: the allocations happen here, never in a probe.
void TakeCheckpoint(const std::vector<std::unique_ptr<Probe>>& probes,
                    const std::vector<std::unique_ptr<Injector>>& injectors, int64_t origin_ns,
                    PathRecord& snapshot) {
  snapshot.end_realtime_ns = ClockNs(CLOCK_REALTIME);
  snapshot.duration_ns = std::max<int64_t>(0, MonotonicNs() - origin_ns);
  snapshot.probes.resize(probes.size());
  for (size_t i = 0; i < probes.size(); ++i) {
    ProbeRecord& r = snapshot.probes[i];
    probes[i]->LiveResultTo(r);
    for (const auto& inj : injectors) {
      if (inj->cpu() == r.cpu) r.injections = CoveredInjections(r, *inj);
    }
  }
}

/// Injector period: the requested rate, rounded to a whole number of probe periods so each
/// injection lands exactly on one probe deadline.
int64_t InjectionPeriod(const InjectPlan& inject, int64_t interval_ns) {
  const double wanted = 1e9 / inject.rate_hz;
  const auto periods =
      std::max<int64_t>(1, std::llround(wanted / static_cast<double>(interval_ns)));
  return periods * interval_ns;
}

struct PathOutcome {
  PathRecord run;
  bool interrupted = false;
  std::optional<Error> all_failed;
};

/// One wake path's threads and the state they share. Not movable (atomics): built in place.
struct PathThreads {
  RunShared shared;
  std::vector<std::unique_ptr<Probe>> probes;
  std::vector<std::unique_ptr<Injector>> injectors;
  bool start_failed = false;  ///< A thread did not start: the path is stopped at once.
  /// --smi: the counters, and each probe's CPU's count when its path started.
  const SmiCounters* smis = nullptr;
  std::vector<int> smi_cpus;
  std::vector<std::optional<uint32_t>> smis_before;
  int64_t origin_ns = 0;  ///< Grid origin (CLOCK_MONOTONIC).
  int64_t start_ns = 0;   ///< When supervision began (for the observer's elapsed time).
};

/// Creates the probes of `path` and, with --inject, one injector per probed CPU (not started).
void CreateThreads(const LatencyPlan& plan, WakePath path,
                   std::vector<std::unique_ptr<SampleRing>>& rings, Tracer* tracer,
                   PathThreads& threads) {
  for (size_t i = 0; i < plan.threads.size(); ++i) {
    SampleRing* ring = rings.empty() ? nullptr : rings[i].get();
    threads.probes.push_back(
        std::make_unique<Probe>(plan, plan.threads[i], path, threads.shared, ring, tracer));
  }
  if (!plan.inject) return;
  std::map<int, const ThreadPlan*> per_cpu;
  for (const auto& t : plan.threads) per_cpu.emplace(t.cpu, &t);
  for (const auto& [cpu, t] : per_cpu) {
    int top = 0;
    for (const auto& other : plan.threads) {
      if (other.cpu == cpu) top = std::max(top, other.priority);
    }
    const int64_t period = InjectionPeriod(*plan.inject, t->interval_ns);
    std::vector<const Probe*> watched;
    for (size_t i = 0; i < plan.threads.size(); ++i) {
      if (plan.threads[i].cpu != cpu) continue;
      watched.push_back(threads.probes[i].get());
      threads.probes[i]->WatchInjections(period, plan.inject->delay_ns);
    }
    threads.injectors.push_back(std::make_unique<Injector>(cpu, std::min(99, top + 1),
                                                           plan.inject->delay_ns, period,
                                                           threads.shared, std::move(watched)));
  }
}

constexpr int64_t kArmWaitNs = 200 * kNsPerMs;  ///< Bound on waiting for the helpers' tids.

/// The probes' tids (and, with `helpers`, their wake sources' helper threads) for the sink.
ProbeThreadIds ThreadIds(size_t path_index, const std::string& wake, int64_t from_ns,
                         const PathThreads& threads, bool helpers) {
  ProbeThreadIds ids;
  ids.path_index = path_index;
  ids.wake = wake;
  ids.from_ns = from_ns;
  for (const auto& p : threads.probes) {
    ids.probe_tids.push_back(p->tid());
    if (helpers && p->helper_tid() > 0) ids.helper_tids.push_back(p->helper_tid());
  }
  return ids;
}

/// The probes arm their wake sources after the grid origin (Arm needs it); a helper thread
/// a source starts is known then. Waits (bounded, main thread) until every probe has armed,
/// then tells the sink again if there are helpers. The probes are not held up.
void PublishHelpers(size_t path_index, const std::string& wake, int64_t from_ns,
                    const PathThreads& threads, SampleSink* sink) {
  const int64_t limit_ns = MonotonicNs() + kArmWaitNs;
  for (const auto& p : threads.probes) {
    while (p->helper_tid() < 0 && MonotonicNs() < limit_ns) {
      const timespec nap = ToTimespec(kNsPerMs / 2);
      nanosleep(&nap, nullptr);
    }
  }
  ProbeThreadIds ids = ThreadIds(path_index, wake, from_ns, threads, true);
  if (!ids.helper_tids.empty()) sink->OnProbeThreads(ids);
}

/// Starts every thread, waits for their RT set-up and publishes the grid origin (and the
/// end time, before it). A thread that cannot start fails the path (`out.all_failed`); set-up
/// that takes longer than the readiness timeout starts the grid anyway, with a warning.
/// `sink` (may be null) learns the probes' tids before the origin is published.
void StartThreads(const LatencyPlan& plan, size_t path_index, PathThreads& threads,
                  SampleSink* sink, PathOutcome& out, std::vector<std::string>& warnings) {
  const int expected_ready = static_cast<int>(threads.probes.size() + threads.injectors.size());
  int started = 0;
  for (auto& p : threads.probes) {
    if (Status s = p->Start(); !s) {
      out.all_failed = s.error();
      break;
    }
    ++started;
  }
  for (auto& inj : threads.injectors) {
    if (Status s = inj->Start(); !s) {
      out.all_failed = s.error();
      break;
    }
    ++started;
  }
  // Every thread must have done its RT set-up before the grid starts.
  const int64_t timeout_ns = ReadyTimeoutNs();
  if (!AwaitReady(threads.shared.ready, started, timeout_ns)) {
    const int ready = threads.shared.ready.load(std::memory_order_acquire);
    warnings.push_back(fmt::format(
        "{}: {} of {} threads had not finished their real-time set-up after {} s; the grid "
        "started anyway, so their first activations may be late or skipped",
        out.run.wake, started - ready, started, static_cast<double>(timeout_ns) / kNsPerSec));
  }
  threads.start_failed = started < expected_ready;
  if (threads.start_failed) threads.shared.stop.store(true);
  // Before the origin: no sample of this path exists yet, every one of the last path has
  // been taken (its threads are joined).
  const int64_t from_ns = MonotonicNs();
  if (sink != nullptr && !threads.start_failed) {
    sink->OnProbeThreads(ThreadIds(path_index, out.run.wake, from_ns, threads, false));
  }
  threads.origin_ns = MonotonicNs() + kStartMarginNs;
  if (plan.origin_on_second) {
    threads.origin_ns = (threads.origin_ns + kNsPerSec - 1) / kNsPerSec * kNsPerSec;
  }
  // end_ns is published by the release store of origin_ns: threads read it only after
  // AwaitOrigin's acquire load.
  threads.shared.end_ns = plan.duration_ns > 0 ? threads.origin_ns + plan.duration_ns : 0;
  threads.shared.origin_ns.store(threads.origin_ns, std::memory_order_release);
  threads.shared.origin_ns.notify_all();
  if (sink != nullptr && !threads.start_failed) {
    PublishHelpers(path_index, out.run.wake, from_ns, threads, sink);
  }
  threads.start_ns = MonotonicNs();
}

/// The main thread's work while the probes measure: live ticks, SIGUSR1/SIGUSR2 statistics,
/// checkpoints, and SIGINT/SIGTERM (which stop the path and set `out.interrupted`). Returns
/// when every probe has left its loop or a stop signal came.
void Supervise(PathThreads& threads, size_t path_index, RunObserver* observer, PathOutcome& out) {
  RunShared& shared = threads.shared;
  const auto& probes = threads.probes;
  const int64_t checkpoint_ns = observer != nullptr ? observer->CheckpointIntervalNs() : 0;
  int64_t next_checkpoint = checkpoint_ns > 0 ? threads.start_ns + checkpoint_ns : INT64_MAX;
  PathRecord checkpoint;
  checkpoint.wake = out.run.wake;
  checkpoint.start_realtime_ns = out.run.start_realtime_ns;
  while (shared.finished.load(std::memory_order_acquire) < static_cast<int>(probes.size())) {
    // Wake up right after the planned end too, so the run does not linger a whole tick.
    int64_t timeout = kTickNs;
    if (shared.end_ns > 0) {
      timeout =
          std::clamp<int64_t>(shared.end_ns - MonotonicNs() + 2 * kNsPerMs, kNsPerMs, kTickNs);
    }
    if (next_checkpoint != INT64_MAX) {
      timeout = std::min(timeout, std::max<int64_t>(next_checkpoint - MonotonicNs(), 0));
    }
    const SignalEvent event = WaitSignal(timeout);
    if (event == SignalEvent::kStop) {
      out.interrupted = true;
      shared.stop.store(true);
      for (auto& p : probes) p->Interrupt();
      return;
    }
    // SIGUSR1 or SIGUSR2 (a plain flag and value: GCC's -O1 arm64 build warned that an
    // optional here may be used uninitialized).
    const bool stats_requested = event == SignalEvent::kStats || event == SignalEvent::kSharedStats;
    const StatsRequest request =
        event == SignalEvent::kSharedStats ? StatsRequest::kSharedMemory : StatsRequest::kPrint;
    if (observer != nullptr && (stats_requested || observer->WantsTicks())) {
      const auto live = Snapshot(probes);
      if (stats_requested) observer->OnStatsRequest(live, request);
      if (observer->WantsTicks()) observer->OnTick(live, MonotonicNs() - threads.start_ns);
    }
    if (const int64_t now = MonotonicNs(); now >= next_checkpoint) {
      // Counted from this snapshot, not from the schedule: after a stalled main thread the
      // next one is a full interval later instead of a burst of catch-up checkpoints.
      next_checkpoint = now + checkpoint_ns;
      TakeCheckpoint(probes, threads.injectors, threads.origin_ns, checkpoint);
      observer->OnCheckpoint(path_index, checkpoint);
    }
  }
}

/// Stops and joins every thread, then gathers the probes' results, the injectors' ground
/// truth, per-thread warnings and the break (-b) into `out` and `run`.
void Collect(PathThreads& threads, RunObserver* observer, PathOutcome& out, RunRecord& run) {
  RunShared& shared = threads.shared;
  shared.stop.store(true);
  for (auto& p : threads.probes) p->Join();
  for (auto& inj : threads.injectors) inj->Join();
  out.run.end_realtime_ns = ClockNs(CLOCK_REALTIME);
  int64_t last_wake = 0;
  for (const auto& p : threads.probes) last_wake = std::max(last_wake, p->last_wake_ns());
  out.run.duration_ns = (last_wake > 0 ? last_wake : MonotonicNs()) - threads.origin_ns;
  if (observer != nullptr && observer->WantsTicks()) {
    observer->OnTick(Snapshot(threads.probes), MonotonicNs() - threads.start_ns);
  }

  size_t failed = 0;
  for (size_t i = 0; i < threads.probes.size(); ++i) {
    auto& p = threads.probes[i];
    ProbeRecord r = p->TakeResult();
    if (threads.smis != nullptr) {
      const auto before = threads.smis_before[i];
      const auto after = threads.smis->Read(threads.smi_cpus[i]);
      if (before && after) {
        r.smi_count = SmiCounters::Since(*before, *after);
      } else {
        r.notes.push_back("--smi: the SMI counter could not be read again; SMIs not counted");
      }
    }
    if (p->failure()) {
      ++failed;
      r.degraded = true;
      r.notes.push_back(p->failure()->message);
      run.warnings.push_back(p->failure()->message);
      if (!out.all_failed) out.all_failed = *p->failure();
    }
    for (const auto& inj : threads.injectors) {
      if (inj->cpu() == r.cpu) {
        r.injections = CoveredInjections(r, *inj);
        if (!inj->problem().empty()) {
          r.notes.push_back("injector: " + inj->problem() + " (ground truth not reliable)");
        }
      }
    }
    if (r.degraded) {
      for (const auto& note : r.notes) {
        run.warnings.push_back(fmt::format("{} thread {}: {}", out.run.wake, r.index, note));
      }
    }
    if (r.samples_dropped > 0) {
      run.warnings.push_back(fmt::format(
          "{} thread {}: {} samples not logged (ring full: the writer or the disk fell behind); "
          "the statistics still include them",
          out.run.wake, r.index, r.samples_dropped));
    }
    if (r.degraded) run.degraded = true;
    out.run.probes.push_back(std::move(r));
  }
  if (failed < threads.probes.size() && !threads.start_failed) out.all_failed.reset();

  if (shared.break_hit.load()) {
    BreakRecord bt;
    bt.thread = shared.break_thread.load();
    bt.latency_ns = shared.break_latency_ns.load();
    bt.seq = shared.break_seq.load();
    bt.tracing_stopped = shared.break_traced.load();
    run.breaktrace = bt;
  }
}

PathOutcome RunPath(const LatencyPlan& plan, WakePath path, size_t path_index,
                    std::vector<std::unique_ptr<SampleRing>>& rings, SampleSink* sink,
                    Tracer* tracer, const SmiCounters* smis, RunObserver* observer,
                    RunRecord& run) {
  PathOutcome out;
  out.run.wake = std::string(WakePathName(path));
  PathThreads threads;
  CreateThreads(plan, path, rings, tracer, threads);
  if (observer != nullptr) observer->OnPathStart(path_index, path);
  out.run.start_realtime_ns = ClockNs(CLOCK_REALTIME);
  StartThreads(plan, path_index, threads, sink, out, run.warnings);
  if (smis != nullptr) {
    // After the set-up, before the first deadline (the origin is kStartMarginNs away).
    threads.smis = smis;
    for (const auto& t : plan.threads) {
      threads.smi_cpus.push_back(t.cpu);
      threads.smis_before.push_back(smis->Read(t.cpu));
    }
  }
  if (!threads.start_failed) Supervise(threads, path_index, observer, out);
  Collect(threads, observer, out, run);
  return out;
}

}  // namespace

void BlockRunSignals() {
  sigset_t set = RunSignals();
  sigaddset(&set, SIGALRM);
  sigaddset(&set, PosixTimerSignal());
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

namespace {

/// Tries thread `t`'s CPU and policy on the calling thread, then puts back what it had.
Status TryThreadSetup(const ThreadPlan& t) {
  cpu_set_t affinity_before;
  sched_param param_before{};
  const int policy_before = sched_getscheduler(0);
  if (sched_getaffinity(0, sizeof(affinity_before), &affinity_before) != 0 || policy_before < 0 ||
      sched_getparam(0, &param_before) != 0) {
    return Failure(fmt::format("cannot read this thread's scheduling: {}", std::strerror(errno)));
  }
  Status tried = Status::Ok();
  if (t.cpu >= 0) {
    if (Status s = SetThreadAffinity({t.cpu}); !s) {
      tried = ResourceError(fmt::format(
          "thread {} cannot run on CPU {} ({}): pick CPUs this process may use (taskset -cp $$ "
          "lists them; a cgroup cpuset may hold fewer)",
          t.index, t.cpu, s.error().message));
    }
  }
  if (tried) {
    if (Status s = SetThreadScheduling(t.policy, t.priority); !s) {
      tried = ResourceError(fmt::format(
          "thread {}: {} (fix: run as root, e.g. with sudo, or grant CAP_SYS_NICE or an rtprio "
          "limit of at least {} in /etc/security/limits.conf)",
          t.index, s.error().message, t.priority));
    }
  }
  sched_setscheduler(0, policy_before, &param_before);
  sched_setaffinity(0, sizeof(affinity_before), &affinity_before);
  return tried;
}

}  // namespace

Status CheckRealtimeSetup(const LatencyPlan& plan) {
  // On this thread, not a helper's: a thread's exited stack stays cached (and would be locked
  // with the rest), and its first allocation would reserve a malloc arena.
  constexpr const char* kAnyway = "; --allow-degraded measures anyway, marked degraded";
  const bool probes_set_up =
      std::any_of(plan.paths.begin(), plan.paths.end(), [](WakePath p) { return !OwnsPolicy(p); });
  if (probes_set_up) {
    for (const ThreadPlan& t : plan.threads) {
      if (Status s = TryThreadSetup(t); !s) {
        return Error{s.error().code, s.error().message + kAnyway};
      }
    }
  }
  if (plan.lock_memory) {
    if (auto refused = LockAllMemory()) return ResourceError(*refused + kAnyway);
  }
  return Status::Ok();
}

Expected<RunRecord> RunLatency(const LatencyPlan& plan, RunObserver* observer,
                               std::unique_ptr<SampleSink> sink) {
  RunRecord run;
  run.start_realtime_ns = ClockNs(CLOCK_REALTIME);
  run.warnings = plan.notes;
  std::optional<SmiCounters> smis;
  if (plan.count_smis) {
    std::vector<int> cpus;
    for (const ThreadPlan& t : plan.threads) cpus.push_back(t.cpu);
    auto opened = SmiCounters::Open(plan.root, cpus);
    if (!opened) return opened.error();  // before anything is measured
    smis.emplace(std::move(*opened));
  }

  if (!plan.main_affinity.empty()) {
    if (Status s = SetThreadAffinity(plan.main_affinity); !s) {
      run.warnings.push_back("--mainaffinity: " + s.error().message);
    }
  }
  if (plan.lock_memory) {
    if (auto warning = LockAllMemory()) {
      run.warnings.push_back(*warning);
      run.degraded = true;
    }
  }
  DmaLatencyGuard dma;
  if (plan.pm_qos_us) {
    if (Status s = dma.Hold(*plan.pm_qos_us); s) {
      run.dma_latency = fmt::format("/dev/cpu_dma_latency held at {} us", *plan.pm_qos_us);
    } else {
      run.dma_latency = "not held";
      run.warnings.push_back(s.error().message + ": CPU idle states may add exit latency");
    }
  } else {
    run.dma_latency = "left alone (--laptop/--default-system)";
  }
  std::unique_ptr<Tracer> tracer;
  if (plan.breaktrace_ns > 0) {
    tracer = std::make_unique<Tracer>();
    if (Status s = tracer->Open(plan.root); !s) {
      run.warnings.push_back(s.error().message);
    }
  }

  std::vector<std::unique_ptr<SampleRing>> rings;
  std::unique_ptr<SampleWriter> writer;
  SampleSink* sink_seen = sink.get();  // owned by the writer below
  if (sink) {
    for (size_t i = 0; i < plan.threads.size(); ++i) {
      rings.push_back(std::make_unique<SampleRing>(plan.sample_ring_capacity));
    }
    std::vector<SampleRing*> raw;
    for (auto& r : rings) raw.push_back(r.get());
    std::vector<int> measured;
    for (const ThreadPlan& t : plan.threads) {
      if (t.cpu >= 0) measured.push_back(t.cpu);
    }
    writer = std::make_unique<SampleWriter>(raw, std::move(sink), std::move(measured));
    writer->Start();
  }

  std::optional<Error> failure;
  size_t paths_with_results = 0;
  for (size_t i = 0; i < plan.paths.size(); ++i) {
    PathOutcome outcome = RunPath(plan, plan.paths[i], i, rings, sink_seen, tracer.get(),
                                  smis ? &*smis : nullptr, observer, run);
    if (outcome.all_failed) {
      if (!failure) failure = outcome.all_failed;
    } else {
      ++paths_with_results;
    }
    run.paths.push_back(std::move(outcome.run));
    if (outcome.interrupted) run.interrupted = true;
    if (run.interrupted || run.breaktrace) break;
  }

  if (writer) {
    if (Status s = writer->Stop(run.interrupted); !s) {
      uint64_t offered = 0;
      for (const auto& path : run.paths) {
        for (const auto& p : path.probes) offered += p.samples_logged;
      }
      const uint64_t lost = offered > writer->written() ? offered - writer->written() : 0;
      run.samples_error = fmt::format("{}; {} of {} samples did not reach the file",
                                      s.error().message, lost, offered);
      run.samples_error_code =
          s.error().code == ExitCode::kResource ? ExitCode::kResource : ExitCode::kFailure;
      run.warnings.push_back("samples log failed: " + run.samples_error);
    }
  }
  dma.Release();
  run.end_realtime_ns = ClockNs(CLOCK_REALTIME);
  if (paths_with_results == 0 && failure) return *failure;
  if (failure) run.warnings.push_back("some wake paths could not run: " + failure->message);
  return run;
}

}  // namespace rtpulse::measure
