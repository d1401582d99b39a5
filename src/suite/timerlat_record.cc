#include "suite/timerlat_record.h"

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace rtpulse::suite {
namespace {

/// A path named `wake` over the run's time, without probes.
measure::PathRecord TimerlatPath(const trace::TimerlatResult& result, std::string_view wake) {
  measure::PathRecord path;
  path.wake = std::string(wake);
  path.start_realtime_ns = result.start_realtime_ns;
  path.end_realtime_ns = result.end_realtime_ns;
  path.duration_ns = result.duration_ns;
  return path;
}

/// CPU `c`'s probe of `path` (index `i`): who measured, at which period; no samples yet.
measure::ProbeRecord TimerlatProbe(const trace::TimerlatCpu& c, size_t i, int64_t period_ns,
                                   const measure::PathRecord& path) {
  measure::ProbeRecord p;
  p.index = static_cast<int>(i);
  p.cpu = c.cpu;
  p.tid = c.tid;
  p.policy = c.policy;
  p.priority = c.priority;
  p.interval_ns = period_ns;
  p.wake = path.wake;
  return p;
}

measure::PathRecord TimerlatPathRecord(const trace::TimerlatResult& result, int64_t period_ns,
                                       bool irq) {
  measure::PathRecord path = TimerlatPath(result, irq ? kTimerlatIrqPath : kTimerlatPath);
  for (size_t i = 0; i < result.cpus.size(); ++i) {
    const trace::TimerlatCpu& c = result.cpus[i];
    measure::ProbeRecord p = TimerlatProbe(c, i, period_ns, path);
    p.histogram = irq ? c.irq : c.thread;
    p.missed_activations = irq ? c.irq_lost : c.thread_lost;
    // The periods the kernel skipped behind a late thread are the thread path's (with their
    // lateness, for the per-period statistics); the IRQ path only notes them.
    if (!irq) {
      p.skipped_periods = c.skipped_periods;
      p.skipped_histogram = c.skipped;
    }
    p.periods_elapsed = (irq ? c.last_irq_seq : c.last_thread_seq) + p.skipped_periods;
    p.last_latency_ns = irq ? c.last_irq_latency_ns : c.last_thread_latency_ns;
    if (p.missed_activations > 0) {
      p.notes.push_back(fmt::format(
          "{} of the kernel's {} activations have no {} record (lost from the trace buffer): "
          "counted as missed, their latency is unknown",
          p.missed_activations, p.periods_elapsed, irq ? "IRQ" : "thread"));
    }
    if (irq && c.skipped_periods > 0) {
      p.notes.push_back(fmt::format(
          "{} periods were skipped by the kernel behind a late thread (not armed, no IRQ): "
          "counted in the timerlat path",
          c.skipped_periods));
    }
    if (c.out_of_order > 0 && !irq) {
      p.notes.push_back(fmt::format("{} records out of sequence were not counted", c.out_of_order));
    }
    if (result.mode == "kernel") {
      p.notes.push_back("measured by the kernel's timerlat/" + std::to_string(c.cpu) + " thread");
    }
    path.probes.push_back(std::move(p));
  }
  return path;
}

/// Context 2: each cycle's return of the user-space thread to the kernel, from the timer's
/// expiry; an activation numbered without such a record is counted as missed.
measure::PathRecord TimerlatUserPathRecord(const trace::TimerlatResult& result, int64_t period_ns) {
  measure::PathRecord path = TimerlatPath(result, kTimerlatUserPath);
  for (size_t i = 0; i < result.cpus.size(); ++i) {
    const trace::TimerlatCpu& c = result.cpus[i];
    measure::ProbeRecord p = TimerlatProbe(c, i, period_ns, path);
    p.histogram = c.user;
    p.periods_elapsed = c.last_user_seq;
    p.missed_activations = c.last_user_seq - c.user.count();
    p.last_latency_ns = c.last_user_latency_ns;
    p.notes.emplace_back(
        "from the timer's expiry to the user-space thread's return to the kernel after its "
        "cycle (rtla's Ret user Timer Latency)");
    if (p.missed_activations > 0) {
      p.notes.push_back(fmt::format(
          "{} of the kernel's {} activations have no return-from-user record (lost from the "
          "trace buffer, or before the thread's first cycle): counted as missed, their latency "
          "is unknown",
          p.missed_activations, p.periods_elapsed));
    }
    path.probes.push_back(std::move(p));
  }
  return path;
}

}  // namespace

std::vector<measure::PathRecord> TimerlatPaths(const trace::TimerlatResult& result,
                                               int64_t period_ns) {
  std::vector<measure::PathRecord> paths = {TimerlatPathRecord(result, period_ns, false),
                                            TimerlatPathRecord(result, period_ns, true)};
  if (result.mode == "user") paths.push_back(TimerlatUserPathRecord(result, period_ns));
  return paths;
}

}  // namespace rtpulse::suite
