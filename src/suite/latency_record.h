// What the latency engine recorded (measure/recorder.h) turned into the result types the
// writers, reports and comparisons read (results/latency_result.h). It lives in suite, the
// lowest module that may see both: the real-time library never includes results.
#pragma once

#include "measure/recorder.h"
#include "results/latency_result.h"

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

}  // namespace rtpulse::suite
