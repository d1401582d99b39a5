// `--wake timerlat` (trace/timerlat.h) as measure's records, so every output, `report` and
// `compare` show it like any other wake path: a path "timerlat" with the thread latency of each
// CPU (what cyclictest and rtla call the thread latency) and a path "timerlat-irq" with the
// latency the kernel saw at the timer's hard IRQ, side by side (docs/wake-paths.md#timerlat).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "measure/plan.h"
#include "measure/recorder.h"
#include "trace/explainer.h"
#include "trace/timerlat.h"

namespace rtpulse::suite {

inline constexpr std::string_view kTimerlatPath = "timerlat";
inline constexpr std::string_view kTimerlatIrqPath = "timerlat-irq";
/// With the user-space interface: from the timer's expiry to the user-space thread's return
/// to the kernel after its cycle (rtla's "Ret user Timer Latency").
inline constexpr std::string_view kTimerlatUserPath = "timerlat-user";

/// The paths of one timerlat run, "timerlat", "timerlat-irq" and, with the user-space
/// interface, "timerlat-user" (probes in CPU order, index = position). Per probe:
/// missed_activations = activations the kernel numbered without a record (lost from the trace
/// buffer); skipped_periods (thread path only) = periods the kernel skipped behind a late
/// thread, with their lateness in skipped_histogram; periods_elapsed = the last activation
/// number + skipped, so samples + missed + skipped = periods_elapsed.
std::vector<measure::PathRecord> TimerlatPaths(const trace::TimerlatResult& result,
                                               int64_t period_ns);

/// A --wake list (latency's, suite's) split into "timerlat" and the rest ("" when timerlat
/// was alone): the timerlat tracer runs after the list's other paths.
struct TimerlatWake {
  bool timerlat = false;
  std::string others;
};
TimerlatWake SplitTimerlatWake(const std::string& wake);

/// The timerlat plan from a latency plan: the threads' CPUs (every online CPU when a thread
/// is not pinned), their interval as timerlat_period_us, their policy and priority, the plan's
/// duration. Usage errors for an interval outside the tracer's range, differing intervals or
/// loops instead of a duration; a ResourceError (exit 3) when this kernel cannot run the
/// tracer (checked before anything runs).
Expected<trace::TimerlatPlan> BuildTimerlatPlan(const measure::LatencyPlan& plan,
                                                const std::vector<int>& online_cpus);

/// --explain on timerlat: the plan's sample callback hands each thread sample to `explainer`
/// as a probe's (its thread index is the CPU's place in plan.cpus).
void FeedTimerlatToExplainer(trace::Explainer* explainer, trace::TimerlatPlan& timerlat);

/// Runs it and appends its paths, warnings and notes to `record` (interrupted when SIGINT or
/// SIGTERM ended it).
Status RunTimerlatInto(const trace::TimerlatPlan& plan, measure::RunRecord& record);

}  // namespace rtpulse::suite
