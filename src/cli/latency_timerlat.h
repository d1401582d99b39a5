// `rtpulse latency --wake timerlat` (docs/wake-paths.md#timerlat): the timerlat tracer run
// after the other wake paths of the list, its two paths appended to the run's records.
#pragma once

#include <string>
#include <vector>

#include "core/error.h"
#include "measure/plan.h"
#include "measure/recorder.h"
#include "trace/timerlat.h"

namespace rtpulse::cli {

/// --wake's list split into "timerlat" and the rest ("" when timerlat was alone).
struct TimerlatWake {
  bool timerlat = false;
  std::string others;
};
TimerlatWake SplitTimerlatWake(const std::string& wake);

/// The timerlat plan from the latency plan: the threads' CPUs (every online CPU when a thread
/// is not pinned), -i as timerlat_period_us, the threads' policy and priority. Usage errors
/// for an interval outside the tracer's range, differing intervals (-d) or SCHED_DEADLINE;
/// a ResourceError (exit 3) when this kernel cannot run the tracer (checked before anything
/// runs).
Expected<trace::TimerlatPlan> BuildTimerlatPlan(const measure::LatencyPlan& plan,
                                                const std::vector<int>& online_cpus);

/// Runs it and appends its paths, warnings and notes to `record` (interrupted when SIGINT or
/// SIGTERM ended it).
Status RunTimerlatInto(const trace::TimerlatPlan& plan, measure::RunRecord& record);

}  // namespace rtpulse::cli
