// What the latency engine recorded (measure/recorder.h) turned into the result types the
// writers, reports and comparisons read (results/latency_result.h). It lives in suite, the
// lowest module that may see both: the real-time library never includes results.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "measure/plan.h"
#include "measure/recorder.h"
#include "results/latency_result.h"
#include "suite/runner.h"
#include "sys/system_info.h"

namespace rtpulse::suite {

/// Every field of `record` in a results::ProbeResult (histograms and lists moved).
results::ProbeResult ToProbeResult(measure::ProbeRecord&& record);
/// As above, copying: for snapshots the engine reuses.
results::ProbeResult ToProbeResult(const measure::ProbeRecord& record);

/// Every field of `record` and of its probes in a results::PathRun (moved).
results::PathRun ToPathRun(measure::PathRecord&& record);
/// As above, copying: for OnCheckpoint's snapshot, which the engine reuses.
results::PathRun ToPathRun(const measure::PathRecord& record);

/// Every field of `record` in a results::LatencyRun. What measure does not know is left
/// empty for the caller: rtpulse_version, cmdline, the system facts (FillSystem) and
/// return_code.
results::LatencyRun ToLatencyRun(measure::RunRecord&& record);

/// With --explain and no samples log the probes' rings fed the explainer alone: nothing was
/// logged, so `run` must not say so (samples_logged 0; a full ring's warning names what it
/// cost, spikes the explainer never saw).
void NoSamplesLogClaimed(results::LatencyRun& run);

/// Every path's exact `percentiles` from the run's samples log (results::ExactPercentilesFromLog,
/// each path's records picked by their wake path) in `run.paths[i].exact`, in place of the
/// bucket edges. Returns a warning for each path whose log does not hold its samples (the
/// bucket edges then stand) and for per-period percentiles that stay bucket edges.
std::vector<std::string> AddLogPercentiles(results::LatencyRun& run,
                                           const std::string& samples_path,
                                           std::span<const double> percentiles);

/// A scenario's exact percentiles from its samples log (AddLogPercentiles with
/// results::kLoggedPercentiles, each warning into `out.warnings`) and, when its run has one
/// path, the summary's values per wake-up and, with `per_period`, per period.
void AddExactPercentiles(const std::string& samples_path, bool per_period, Measured& out);

/// The injection settings a run with plan.inject records, or nullopt.
std::optional<results::InjectSettings> InjectSettingsOf(const measure::LatencyPlan& plan);

/// What `rtpulse latency` adds to its measured record to make its result.
struct LatencyRunFacts {
  std::string version;
  std::string cmdline;
  std::vector<std::string> environment;  ///< Warnings found before the run: first in its list.
  bool explain_only_ring = false;  ///< The sample ring fed --explain alone: no log is claimed.
  std::string samples_path;        ///< --samples: exact percentiles from it; "" = none.
};

/// `record` as the latency command's result: the facts measure does not know (version,
/// command line, the system, the environment warnings first, the injection settings), return
/// code 0 (an interrupted run too, as cyclictest's: harnesses such as rteval end it with a
/// signal; the JSON's rtpulse.interrupted says so) and, with a samples log, exact percentiles
/// in place of the bucket edges (a log that does not hold the run's samples leaves them, with
/// a warning saying why).
results::LatencyRun CompleteLatencyRun(measure::RunRecord&& record,
                                       const measure::LatencyPlan& plan,
                                       const sys::SystemInfo& system, const LatencyRunFacts& facts);

}  // namespace rtpulse::suite
