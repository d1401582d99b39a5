#include "cli/latency_timerlat.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <sstream>

#include "core/clock.h"
#include "suite/services.h"
#include "suite/timerlat_record.h"

namespace rtpulse::cli {

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
    if (thread.cpu < 0) {
      t.cpus = online_cpus;
      break;
    }
    if (std::find(t.cpus.begin(), t.cpus.end(), thread.cpu) == t.cpus.end()) {
      t.cpus.push_back(thread.cpu);
    }
  }
  std::sort(t.cpus.begin(), t.cpus.end());
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
  t.stop_within = [](int64_t timeout_ns) { return suite::StopSignalWithin(timeout_ns); };
  return t;
}

Status RunTimerlatInto(const trace::TimerlatPlan& plan, measure::RunRecord& record) {
  auto result = trace::RunTimerlat(plan);
  if (!result) return result.error();
  if (record.paths.empty()) record.start_realtime_ns = result->start_realtime_ns;
  record.end_realtime_ns = result->end_realtime_ns;
  const size_t first = record.paths.size();
  for (auto& path : suite::TimerlatPaths(*result, plan.period_ns)) {
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

}  // namespace rtpulse::cli
