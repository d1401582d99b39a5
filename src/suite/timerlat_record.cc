#include "suite/timerlat_record.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "suite/services.h"

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

TimerlatWake SplitTimerlatWake(const std::string& wake) {
  TimerlatWake out;
  std::istringstream in(wake);
  std::string name;
  while (std::getline(in, name, ',')) {
    if (name == "timerlat") {
      out.timerlat = true;
      continue;
    }
    out.others += (out.others.empty() ? "" : ",") + name;
  }
  if (!out.timerlat) out.others = wake;
  return out;
}

Expected<trace::TimerlatPlan> BuildTimerlatPlan(const measure::LatencyPlan& plan,
                                                const std::vector<int>& online_cpus) {
  trace::TimerlatPlan t;
  const measure::ThreadPlan& first = plan.threads.front();
  for (const auto& thread : plan.threads) {
    if (thread.interval_ns != first.interval_ns) {
      return UsageError(fmt::format(
          "--wake timerlat has one period for every CPU, but the threads' intervals differ "
          "({} and {} us, from -d): add -d 0",
          first.interval_ns / 1000, thread.interval_ns / 1000));
    }
  }
  t.cpus = measure::MeasuredCpus(plan.threads, online_cpus);
  const int64_t period_us = first.interval_ns / 1000;
  if (first.interval_ns % 1000 != 0 || period_us < trace::kTimerlatMinPeriodUs ||
      period_us > trace::kTimerlatMaxPeriodUs) {
    return UsageError(fmt::format(
        "--wake timerlat: -i {} is outside the timerlat tracer's period range ({} to {} us)",
        static_cast<double>(first.interval_ns) / 1000.0, trace::kTimerlatMinPeriodUs,
        trace::kTimerlatMaxPeriodUs));
  }
  t.period_ns = first.interval_ns;
  t.duration_ns = plan.duration_ns;
  t.sched_policy = LinuxPolicy(first.policy);
  t.policy_name = SchedPolicyName(first.policy);
  t.priority = first.priority;
  if (plan.loops > 0) {
    return UsageError(
        "--wake timerlat runs for a time, not a number of loops: give -D instead of -l");
  }
  auto tracefs = trace::FindTimerlatTracefs("");
  if (!tracefs) return tracefs.error();
  t.tracefs_dir = *tracefs;
  t.stop_within = [](int64_t timeout_ns) { return StopSignalWithin(timeout_ns); };
  return t;
}

Status RunTimerlatInto(const trace::TimerlatPlan& plan, measure::RunRecord& record) {
  auto result = trace::RunTimerlat(plan);
  if (!result) return result.error();
  if (record.paths.empty()) record.start_realtime_ns = result->start_realtime_ns;
  record.end_realtime_ns = result->end_realtime_ns;
  const size_t first = record.paths.size();
  for (auto& path : TimerlatPaths(*result, plan.period_ns)) {
    record.paths.push_back(std::move(path));
  }
  record.interrupted = record.interrupted || result->interrupted;
  for (const auto& w : result->warnings) record.warnings.push_back(w);
  // The notes say how it was measured; the record has no notes of its own, so the first
  // probe of each timerlat path carries them.
  for (size_t i = first; i < record.paths.size(); ++i) {
    if (record.paths[i].probes.empty()) continue;
    auto& notes = record.paths[i].probes.front().notes;
    notes.insert(notes.begin(), result->notes.begin(), result->notes.end());
  }
  return Status::Ok();
}

void FeedTimerlatToExplainer(trace::Explainer* explainer, trace::TimerlatPlan& timerlat) {
  timerlat.on_sample = [explainer, cpus = timerlat.cpus](const trace::TimerlatSample& s) {
    const auto at = std::find(cpus.begin(), cpus.end(), s.cpu);
    const SampleRecord r{s.seq - 1,
                         s.expected_ns,
                         s.actual_ns,
                         static_cast<uint16_t>(at - cpus.begin()),
                         static_cast<uint16_t>(s.cpu),
                         0,
                         0,
                         0};
    explainer->OnSamples(&r, 1);
  };
}

}  // namespace rtpulse::suite
